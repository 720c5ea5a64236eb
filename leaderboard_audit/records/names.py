"""Model and benchmark names as they appear in paths (docs/records.md, "Layout")."""

from __future__ import annotations

import unicodedata

from .errors import Problem, RecordsError

#: the longest model or benchmark name a set may use: every verdict id, table row and figure
#: label repeats it (one 200,000-character name made a 56 MB HTML report: B22)
MAX_NAME_CHARS = 256

#: the scope of every benchmark together (defined once: the checks, the engine and mix read it)
POOLED = "pooled"
# A benchmark may not take a name the audit uses for its own scopes: `pooled` is every
# benchmark together, and a benchmark of that name would collide with it in test ids.
RESERVED_BENCHMARKS = (POOLED,)


def model_from_filename(stem: str) -> str:
    return stem.replace("__", "/")


def filename_for_model(model: str) -> str:
    if not model or model in (".", "..") or "\\" in model or "\x00" in model or model.startswith("."):
        raise RecordsError.one("<records>", None, f"model name {model!r} cannot be a file name", fix="rename the model")
    return model.replace("/", "__") + ".jsonl"


# Code points that print as nothing (or as a blank) yet are letters or marks, so Unicode's
# category does not flag them: Hangul fillers, the Braille blank, the combining grapheme
# joiner, variation selectors, Mongolian and Khmer invisibles (C10 of the 2026-12-04 review).
INVISIBLE = frozenset(
    [0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180C, 0x180D, 0x180F, 0x2800, 0x3164, 0xFFA0]
    + list(range(0xFE00, 0xFE10))
    + list(range(0xE0100, 0xE01F0))
)
# Scripts that may share a name (Unicode TS #39, "Highly Restrictive"): Japanese, Chinese and
# Korean writing mix with Latin; any other mix (Latin with Cyrillic or Greek, say) is refused.
SCRIPT_MIXES = (
    frozenset({"LATIN", "CJK", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "CJK", "BOPOMOFO"}),
    frozenset({"LATIN", "CJK", "HANGUL"}),
)
# Letters that look like a Latin letter (TS #39 confusables.txt, the Cyrillic and Greek ones
# that print alike in common fonts): a whole-script name such as Cyrillic "аре" is compared
# with the other names through this map, after NFKC.
LOOKALIKE = str.maketrans(
    "аеорсухіјѕԁһԛԝвнкмтАВЕКМНОРСТХУІЈЅԌᴀαοрνιкτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdhqwbhkmtABEKMHOPCTXYIJSGaaopvikTuxABEZHIKMNOPTYX",
)


def _script(ch: str) -> str | None:
    """The script of a letter, from its Unicode name (``CYRILLIC SMALL LETTER A``: CYRILLIC);
    None for digits, punctuation and marks (TS #39's Common and Inherited)."""
    if not unicodedata.category(ch).startswith("L"):
        return None
    name = unicodedata.name(ch, "")
    word = name.split(" ", 1)[0]
    return {"HALFWIDTH": "KATAKANA", "FULLWIDTH": "LATIN"}.get(word, word) or None


def name_char_problem(name: str) -> str | None:
    """Why ``name`` cannot be shown faithfully (a control or invisible character, or scripts
    mixed as only a lookalike would mix them), or None."""
    for ch in name:
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Cs", "Co", "Cn") or ord(ch) in INVISIBLE:
            what = {"Cc": "a control character", "Cs": "a surrogate", "Co": "a private-use character"}.get(
                cat, "an invisible or unassigned character"
            )
            return f"holds {what} ({ascii(ch)})"
    scripts = {s for s in map(_script, name) if s}
    if len(scripts) > 1 and not any(scripts <= mix for mix in SCRIPT_MIXES):
        return f"mixes the scripts {', '.join(sorted(scripts))} (a lookalike of another name?)"
    return None


def skeleton(name: str) -> str:
    """What ``name`` looks like: NFKC, then lookalike letters as the Latin letter they resemble."""
    return unicodedata.normalize("NFKC", name).translate(LOOKALIKE)


def check_set_names(models: tuple[str, ...] | list[str], benchmarks: tuple[str, ...] | list[str], source: str) -> None:
    """RecordsError for names the reports could not show apart or at all: longer than
    ``MAX_NAME_CHARS`` (B22); holding a control or an invisible character, or mixing scripts
    (``name_char_problem``: a carriage return split a CSV row, C04; Cyrillic ``а`` passed for
    Latin ``a``, C10); or two models (benchmarks) that look alike, one name after Unicode NFKC
    normalisation (NFC and NFD ``café``, B19) and lookalike letters (``skeleton``)."""
    problems = []
    for kind, names in (("model", models), ("benchmark", benchmarks)):
        seen: dict[str, str] = {}
        for n in names:
            if len(n) > MAX_NAME_CHARS:
                problems.append(
                    Problem(
                        source,
                        None,
                        f"{kind} name of {len(n):,} characters ({n[:40]!r}...); names are at most {MAX_NAME_CHARS}",
                    )
                )
                continue
            why = name_char_problem(n)
            if why is not None:
                problems.append(Problem(source, None, f"{kind} name {ascii(n)} {why}; the reports cannot show it"))
                continue
            key = skeleton(n)
            if key in seen:
                how = (
                    "differ only in Unicode normalisation (NFKC)"
                    if unicodedata.normalize("NFKC", n) == unicodedata.normalize("NFKC", seen[key])
                    else "look alike (letters of another script that print the same)"
                )
                problems.append(
                    Problem(
                        source,
                        None,
                        f"{kind}s {ascii(seen[key])} and {ascii(n)} {how}; the reports would show them alike",
                    )
                )
            seen.setdefault(key, n)
    if problems:
        raise RecordsError(
            problems, fix="rename the model or benchmark (short, printable, one script, one spelling per name)"
        )


def reserved_benchmark(name: str) -> bool:
    """True for a benchmark name the audit reserves (compared case-insensitively)."""
    return name.strip().lower() in RESERVED_BENCHMARKS


RESERVED_FIX = (
    f"rename the benchmark: {', '.join(repr(n) for n in RESERVED_BENCHMARKS)} is the "
    "audit's scope of all benchmarks together"
)


def benchmark_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a benchmark (a directory name the reader would read back), or None."""
    if not isinstance(name, str) or not name or name.startswith((".", "_")) or any(c in name for c in "/\\\x00"):
        return f"benchmark name {name!r} cannot be a directory name (no '/', '\\', NUL; no leading '.' or '_')"
    if reserved_benchmark(name):
        return f"benchmark name {name!r} is reserved"
    return None
