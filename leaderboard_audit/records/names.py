"""Model and benchmark names as they appear in paths (docs/records.md, "Layout")."""

from __future__ import annotations

import unicodedata

from .errors import Problem, RecordsError

#: the longest model or benchmark name a set may use: every verdict id, table row and figure
#: label repeats it (one 200,000-character name made a 56 MB HTML report: B22)
MAX_NAME_CHARS = 256

# A benchmark may not take a name the audit uses for its own scopes: `pooled` is every
# benchmark together, and a benchmark of that name would collide with it in test ids.
RESERVED_BENCHMARKS = ("pooled",)


def model_from_filename(stem: str) -> str:
    return stem.replace("__", "/")


def filename_for_model(model: str) -> str:
    if not model or model in (".", "..") or "\\" in model or "\x00" in model or model.startswith("."):
        raise RecordsError.one("<records>", None, f"model name {model!r} cannot be a file name", fix="rename the model")
    return model.replace("/", "__") + ".jsonl"


def check_set_names(models: tuple[str, ...] | list[str], benchmarks: tuple[str, ...] | list[str], source: str) -> None:
    """RecordsError for names the reports could not show apart or at all: longer than
    ``MAX_NAME_CHARS`` (B22), or two models (benchmarks) that are one name after Unicode
    NFKC normalisation, e.g. NFC and NFD ``café``, printed identically everywhere (B19)."""
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
            key = unicodedata.normalize("NFKC", n)
            if key in seen:
                problems.append(
                    Problem(
                        source,
                        None,
                        f"{kind}s {ascii(seen[key])} and {ascii(n)} differ only in Unicode normalisation (NFKC); the reports would show them alike",
                    )
                )
            seen.setdefault(key, n)
    if problems:
        raise RecordsError(problems, fix="rename the model or benchmark (short, and one spelling per name)")


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
