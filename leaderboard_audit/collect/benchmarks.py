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
from typing import Any, Callable, Iterable, Sequence

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
    local_default: str          # relative to a benchmarks folder (e.g. ../shared/benchmarks)
    to_item: Callable[[int, dict[str, Any]], Item | None]


def _text_id(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def arc_item(row_index: int, row: dict[str, Any]) -> Item | None:
    texts = list(row["choices"]["text"])
    labels = [str(x) for x in row["choices"]["label"]]
    if len(texts) != 4:                       # ARC keeps exactly-four-choice questions
        return None
    key = str(row["answerKey"])
    if key not in labels:
        return None
    return Item(f"arc/{row['id']}", str(row["question"]).strip(), tuple(t.strip() for t in texts),
                labels.index(key))


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
    return Item(f"mmlu/{row['subject']}/{row_index}", str(row["question"]).strip(),
                tuple(str(c).strip() for c in choices), int(row["answer"]))


def truthfulqa_item(row_index: int, row: dict[str, Any]) -> Item | None:
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
    "arc": BenchmarkSource("arc", "allenai/ai2_arc", "ARC-Challenge", "test",
                           "ai2_arc/ARC-Challenge-test.parquet", arc_item),
    "hellaswag": BenchmarkSource("hellaswag", "Rowan/hellaswag", None, "validation",
                                 "hellaswag/validation.parquet", hellaswag_item),
    "mmlu": BenchmarkSource("mmlu", "cais/mmlu", "all", "test", "mmlu/test.parquet", mmlu_item),
    "truthfulqa": BenchmarkSource("truthfulqa", "truthfulqa/truthful_qa", "multiple_choice",
                                  "validation", "truthful_qa/multiple_choice-validation.parquet",
                                  truthfulqa_item),
}


def shuffle_order(n: int, seed: int = SEED) -> list[int]:
    import numpy as np
    return np.random.default_rng(seed).permutation(n).tolist()


def select_items(rows: Iterable[dict[str, Any]], to_item: Callable[[int, dict[str, Any]], Item | None],
                 n_items: int | None, *, seed: int = SEED, reserved: int = RESERVED) -> list[Item]:
    """Pool (rows that make a four-option item) -> shuffle -> skip ``reserved`` -> first N."""
    pool = [it for i, row in enumerate(rows) if (it := to_item(i, row)) is not None]
    ids = [it.item_id for it in pool]
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        dup = next(x for x in ids if x in seen or seen.add(x))  # type: ignore[func-returns-value]
        raise ValueError(f"duplicate item id {dup!r} in the pool")
    order = shuffle_order(len(pool), seed)
    chosen = [pool[j] for j in order[reserved:]]
    return chosen if n_items is None else chosen[:n_items]


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
        if datasets is None:       # local files without the extra: same rows, no hub
            return _read_local(files, kind)
        ds = datasets.load_dataset(kind, data_files=files, split="train")
    else:
        if datasets is None:
            raise ImportError("loading benchmarks from the hub needs `datasets` "
                              "(pip install 'leaderboard-audit[collect]')")
        ds = datasets.load_dataset(src.hub_id, src.hub_config, split=src.split)
    return ds.to_list()


def _read_local(files: Sequence[str], kind: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for f in files:
        if kind == "parquet":
            import pyarrow.parquet as pq
            rows += pq.read_table(f).to_pylist()
        else:
            import json
            with open(f, encoding="utf-8") as fh:
                rows += [json.loads(line) for line in fh if line.strip()]
    return rows


def local_file(name: str, folder: str | Path) -> Path:
    return Path(folder) / SOURCES[name].local_default


def load_items(name: str, n_items: int | None = 1000, *, files: str | Sequence[str] | None = None,
               seed: int = SEED) -> list[Item]:
    if name not in SOURCES:
        raise ValueError(f"unknown benchmark {name!r}; known: {', '.join(SOURCES)}")
    return select_items(load_rows(name, files), SOURCES[name].to_item, n_items, seed=seed)
