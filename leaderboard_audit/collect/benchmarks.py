"""The four benchmarks of the paper through ``datasets``, with its item selection.

Hub ids are the defaults; ``files`` (a local Parquet/JSON file in the hub's
schema) overrides them for offline machines. Selection (paper, appendix A.2):
build the four-option pool, shuffle it with seed 1234 (``numpy.random.
default_rng(1234).permutation``, which is what ``datasets.Dataset.shuffle(seed=1234)``
uses), reserve the first 5 shuffled items (few-shot pool, never evaluated), then
take up to N items.

The row -> item conversion is plain Python (tested without ``datasets``).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Callable, Iterable, Sequence

SEED = 1234
RESERVED = 5


@dataclass(frozen=True)
class Item:
    item_id: str
    question: str
    options: tuple[str, ...]
    gold: int


@dataclass(frozen=True)
class BenchmarkSource:
    name: str
    hub_id: str
    hub_config: str | None
    split: str
    local_default: str  # relative to a benchmarks folder (e.g. ../shared/benchmarks)
    to_item: Callable[[int, dict[str, Any]], Item | None]


def _text_id(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def arc_item(row_index: int, row: dict[str, Any]) -> Item | None:
    texts = list(row["choices"]["text"])
    labels = [str(x) for x in row["choices"]["label"]]
    if len(texts) != 4:  # ARC keeps exactly-four-choice questions
        return None
    key = str(row["answerKey"])
    if key not in labels:
        return None
    return Item(f"arc/{row['id']}", str(row["question"]).strip(), tuple(t.strip() for t in texts), labels.index(key))


def _hs_pre(text: str) -> str:
    # lm-evaluation-harness' HellaSwag preprocessing: drop WikiHow markup.
    text = text.strip().replace(" [title]", ". ")
    text = re.sub(r"\[.*?\]", "", text)
    return text.replace("  ", " ")


def hellaswag_item(row_index: int, row: dict[str, Any]) -> Item | None:
    endings = list(row["endings"])
    if len(endings) != 4 or str(row["label"]).strip() == "":
        return None
    ctx = row["ctx_a"] + (" " + row["ctx_b"].capitalize() if row.get("ctx_b") else "")
    q = _hs_pre(f"{row['activity_label']}: {ctx}")
    return Item(f"hellaswag/{row['ind']}", q, tuple(_hs_pre(e) for e in endings), int(row["label"]))


def mmlu_item(row_index: int, row: dict[str, Any]) -> Item | None:
    choices = list(row["choices"])
    if len(choices) != 4:
        return None
    return Item(
        f"mmlu/{row['subject']}/{row_index}",
        str(row["question"]).strip(),
        tuple(str(c).strip() for c in choices),
        int(row["answer"]),
    )


def truthfulqa_item(row_index: int, row: dict[str, Any]) -> Item | None:
    """The mc1 correct answer, then mc1's first three distractors; rows with fewer than three are skipped.

    The pool is therefore the questions with at least four mc1 choices. That is the paper's rule, and its
    pool size follows the data revision (docs/collect.md, "Benchmarks and item selection"): 684 questions
    of the hub's 817-row revision (679 evaluated, the paper's figure), 664 of the later 790-row
    ``mc_task.json`` revision (659 evaluated). No rule over the 790 rows gives 684. mc2 is not used:
    its extra choices are further *correct* answers, and its distractors are mc1's.
    """
    mc1 = row["mc1_targets"]
    choices, labels = list(mc1["choices"]), [int(x) for x in mc1["labels"]]
    if 1 not in labels:
        return None
    right = choices[labels.index(1)]
    wrong = [c for c, lab in zip(choices, labels) if lab == 0][:3]
    if len(wrong) < 3:
        return None
    q = str(row["question"]).strip()
    # Ids hash the question: the hub's 817-row revision and the 790-row one agree on it.
    return Item(f"truthfulqa/{_text_id(q)}", q, (right.strip(), *[w.strip() for w in wrong]), 0)


SOURCES: dict[str, BenchmarkSource] = {
    "arc": BenchmarkSource(
        "arc", "allenai/ai2_arc", "ARC-Challenge", "test", "ai2_arc/ARC-Challenge-test.parquet", arc_item
    ),
    "hellaswag": BenchmarkSource(
        "hellaswag", "Rowan/hellaswag", None, "validation", "hellaswag/validation.parquet", hellaswag_item
    ),
    "mmlu": BenchmarkSource("mmlu", "cais/mmlu", "all", "test", "mmlu/test.parquet", mmlu_item),
    "truthfulqa": BenchmarkSource(
        "truthfulqa",
        "truthfulqa/truthful_qa",
        "multiple_choice",
        "validation",
        "truthful_qa/multiple_choice-validation.parquet",
        truthfulqa_item,
    ),
}


def shuffle_order(n: int, seed: int = SEED) -> list[int]:
    import numpy as np

    return np.random.default_rng(seed).permutation(n).tolist()


def select_items(
    rows: Iterable[dict[str, Any]],
    to_item: Callable[[int, dict[str, Any]], Item | None],
    n_items: int | None,
    *,
    seed: int = SEED,
    reserved: int = RESERVED,
) -> list[Item]:
    """Pool (rows that make a four-option item) -> shuffle -> skip ``reserved`` -> first N."""
    return split_selection(rows, to_item, n_items, seed=seed, reserved=reserved)[1]


def split_selection(
    rows: Iterable[dict[str, Any]],
    to_item: Callable[[int, dict[str, Any]], Item | None],
    n_items: int | None,
    *,
    seed: int = SEED,
    reserved: int = RESERVED,
) -> tuple[list[Item], list[Item]]:
    """(the reserved items in shuffled order: the few-shot exemplars, the selected items)."""
    pool = [it for i, row in enumerate(rows) if (it := to_item(i, row)) is not None]
    ids = [it.item_id for it in pool]
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        dup = next(x for x in ids if x in seen or seen.add(x))  # type: ignore[func-returns-value]
        raise ValueError(f"duplicate item id {dup!r} in the pool")
    order = shuffle_order(len(pool), seed)
    chosen = [pool[j] for j in order[reserved:]]
    return [pool[j] for j in order[:reserved]], chosen if n_items is None else chosen[:n_items]


def load_rows(name: str, files: str | Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Rows of a benchmark through ``datasets``: the hub id, or local files in its schema."""
    src = SOURCES[name]
    try:
        import datasets  # collection extra
    except ImportError:
        datasets = None
    if files:
        files = [str(f) for f in ([files] if isinstance(files, (str, Path)) else files)]
        kind = "parquet" if files[0].endswith((".parquet", ".pq")) else "json"
        if datasets is None:  # local files without the extra: same rows, no hub
            return _read_local(files, kind)
        ds = datasets.load_dataset(kind, data_files=files, split="train")
    else:
        if datasets is None:
            raise ImportError(
                "loading benchmarks from the hub needs `datasets` (pip install 'leaderboard-audit[collect]')"
            )
        ds = datasets.load_dataset(src.hub_id, src.hub_config, split=src.split)
    return ds.to_list()


MAX_ITEM_LINE_BYTES = 16 * 1024 * 1024


def _read_local(files: Sequence[str], kind: str) -> list[dict[str, Any]]:
    """The rows of local benchmark files. Each is opened with ``safe_io.open_regular`` (a FIFO
    or a device is a ValueError naming it, never a hang) and JSONL is read line by line with
    a bound on the line length; a bad line is a ValueError naming the file and its line."""
    from ..records.lines import bounded_lines
    from ..records.safe_io import JSON_ERRORS, open_regular

    rows: list[dict[str, Any]] = []
    for f in files:
        with open_regular(f, "the benchmark file") as fh:
            if kind == "parquet":
                import pyarrow.parquet as pq

                rows += pq.read_table(fh).to_pylist()
                continue
            import json

            for n, raw in bounded_lines(fh, MAX_ITEM_LINE_BYTES):
                if raw is None:
                    raise ValueError(f"{f}:{n}: line longer than {MAX_ITEM_LINE_BYTES:,} bytes")
                if not raw.strip():
                    continue
                try:
                    rows.append(json.loads(raw))
                except JSON_ERRORS as exc:
                    why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)[:200]
                    raise ValueError(f"{f}:{n}: unreadable JSON ({why})") from None
    return rows


def local_file(name: str, folder: str | Path) -> Path:
    return Path(folder) / SOURCES[name].local_default


def load_items(
    name: str,
    n_items: int | None = 1000,
    *,
    files: str | Sequence[str] | None = None,
    seed: int = SEED,
    with_reserved: bool = False,
) -> Any:
    """The selected items; with ``with_reserved``, (reserved exemplars, selected items)."""
    if name not in SOURCES:
        raise ValueError(f"unknown benchmark {name!r}; known: {', '.join(SOURCES)}")
    split = split_selection(load_rows(name, files), SOURCES[name].to_item, n_items, seed=seed)
    return split if with_reserved else split[1]


# --------------------------------------------------------------------------- any benchmark (a field mapping)

MAPPING_KEYS = (
    "files",
    "hub",
    "hub_config",
    "split",
    "question",
    "choices",
    "answer",
    "id",
    "subject",
    "n_options",
    "answer_base",
)
RESERVED_NAMES = ("pooled",)


def _field(row: dict[str, Any], path: str) -> Any:
    """``a.b`` reads row["a"]["b"] (hub schemas nest choices: ``choices.text``)."""
    cur: Any = row
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            raise KeyError(f"field {path!r} is not in the row (fields: {', '.join(map(str, row))})")
        cur = cur[part]
    return cur


def mapped_item_fn(name: str, mapping: dict[str, Any]) -> Callable[[int, dict[str, Any]], Item | None]:
    """Row -> Item for a benchmark described by a field mapping (docs/collect.md, "Any benchmark").

    ``choices`` names one list field (``"choices"``, ``"choices.text"``) or a list of fields (one per
    option); ``answer`` is the text of the right choice (checked first), a 0-based index
    (``answer_base = 1`` for 1-based) or a label letter ``A``-``Z``; rows whose choice count is not ``n_options`` (default 4) are
    skipped, as the paper's construction skips them.
    """
    q_f, c_f, a_f = mapping["question"], mapping["choices"], mapping["answer"]
    id_f, subj_f = mapping.get("id"), mapping.get("subject")
    n_opt, base = int(mapping.get("n_options", 4)), int(mapping.get("answer_base", 0))

    def to_item(i: int, row: dict[str, Any]) -> Item | None:
        if isinstance(c_f, list):
            choices = [_field(row, f) for f in c_f]
        else:
            raw = _field(row, c_f)
            if not isinstance(raw, list | tuple):  # a dict gives its keys, a string its letters (B31)
                kind = (
                    f"an object (keys: {', '.join(map(str, raw))[:200]})"
                    if isinstance(raw, dict)
                    else type(raw).__name__
                )
                hint = (
                    f'; name the list inside it, e.g. choices = "{c_f}.{next(iter(raw))}"'
                    if raw and isinstance(raw, dict)
                    else ""
                )
                raise ValueError(f"row {i}: the choices field {c_f!r} is {kind}, not a list{hint}")
            choices = list(raw)
        choices = [str(c).strip() for c in choices]
        if len(choices) != n_opt:
            return None
        ans = _field(row, a_f)
        if isinstance(ans, bool) or ans is None:
            return None
        if isinstance(ans, str) and ans.strip() in choices:  # the right choice's text, checked first
            gold = choices.index(ans.strip())
        elif isinstance(ans, (int, float)) or (isinstance(ans, str) and ans.strip().lstrip("-").isdigit()):
            gold = int(ans) - base
        elif isinstance(ans, str) and len(ans.strip()) == 1 and ans.strip().isalpha():
            gold = ord(ans.strip().upper()) - ord("A")
        else:
            return None
        if not 0 <= gold < n_opt:
            return None
        rid = str(_field(row, id_f)) if id_f else str(i)
        subj = f"{_field(row, subj_f)}/" if subj_f else ""
        return Item(f"{name}/{subj}{rid}", str(_field(row, q_f)).strip(), tuple(choices), gold)

    return to_item


def check_mapping(name: str, mapping: Any) -> dict[str, Any]:
    """Validate a ``[benchmark_sources.NAME]`` table; returns it (ValueError naming the key otherwise)."""
    if (
        name in RESERVED_NAMES
        or name in SOURCES
        or not name
        or name.startswith(("_", "."))
        or "/" in name
        or any(not (ch.isalnum() or ch in "-_.") for ch in name)
    ):
        raise ValueError(
            f"benchmark name '{name}' is reserved, built in or not a plain name; pick another "
            f"(letters, digits, - _ .; not {', '.join(RESERVED_NAMES + tuple(SOURCES))})"
        )
    if not isinstance(mapping, dict):
        raise ValueError(f"benchmark_sources.{name} must be a table")  # noqa: TRY004 - one error type for specs
    unknown = set(mapping) - set(MAPPING_KEYS)
    if unknown:
        raise ValueError(
            f"unknown key(s) {', '.join(repr(k) for k in sorted(unknown))} in "
            f"[benchmark_sources.{name}]; known: {', '.join(MAPPING_KEYS)}"
        )
    for k in ("question", "choices", "answer"):
        if k not in mapping:
            raise ValueError(f"[benchmark_sources.{name}] needs '{k}' (the field that holds it)")
    if ("files" in mapping) == ("hub" in mapping):
        raise ValueError(f"[benchmark_sources.{name}] needs exactly one of 'files' (local Parquet/JSONL) or 'hub'")
    return dict(mapping)


def load_mapped_items(
    name: str,
    mapping: dict[str, Any],
    n_items: int | None,
    *,
    seed: int = SEED,
    reserved: int = RESERVED,
    with_reserved: bool = False,
) -> Any:
    """The paper's selection (shuffle with the seed, skip the reserved items, first N) over a mapped benchmark."""
    if "files" in mapping:
        files = mapping["files"] if isinstance(mapping["files"], list) else [mapping["files"]]
        files = [str(f) for f in files]
        kind = "parquet" if files[0].endswith((".parquet", ".pq")) else "json"
        rows = _read_local(files, kind)
    else:
        import datasets

        rows = datasets.load_dataset(
            mapping["hub"], mapping.get("hub_config"), split=mapping.get("split", "test")
        ).to_list()
    to_item = mapped_item_fn(name, mapping)
    kept = [0]

    def counted(i: int, row: dict[str, Any]) -> Item | None:
        it = to_item(i, row)
        kept[0] += it is not None
        return it

    split = split_selection(rows, counted, n_items, seed=seed, reserved=reserved)
    if rows and not kept[0]:  # every row skipped: say why instead of writing an empty file (B31)
        n_opt = int(mapping.get("n_options", 4))
        raise ValueError(
            f"0 of {len(rows)} rows gave an item (each needs {n_opt} choices, n_options, and an answer "
            "that is a choice's text, an index or a letter); check the choices/answer fields"
        )
    return split if with_reserved else split[1]
