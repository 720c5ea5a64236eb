"""Records built in memory: a small grid with every optional array, and a packed-form twin."""

from __future__ import annotations

import numpy as np

from leaderboard_audit.records import PRED_ABSENT, Config, Grid, Items, Records


SMALL_GRID = Grid(
    (
        Config("gen|letter_plain|p0", "gen", "letter_plain", "p0", (0, 1, 2, 3), {"template_text": "Q: {q}"}),
        Config("gen|letter_plain|p1", "gen", "letter_plain", "p1", (1, 3, 2, 0)),
        Config("gen|digit_labels|p0", "gen", "digit_labels", "p0", (0, 1, 2, 3)),
        Config("ll|cloze_plain", "ll", "cloze_plain", None, None),
    ),
    "gen|letter_plain|p0",
    extra={"harness": "test", "max_tokens": 5},
)


def make_records(
    models=("m-a", "org/m-b", "m-c"), benches=(("arc", 5), ("mmlu", 4)), seed=0, pred=True, margin=True, text=True
) -> Records:
    rng = np.random.default_rng(seed)
    K = len(SMALL_GRID)
    bench = [b for b, n in benches for _ in range(n)]
    ids = [f"{b}/item-{j}" for b, n in benches for j in range(n)]
    N = len(ids)
    gold = [None if j % 5 == 0 else ("C" if j % 5 == 1 else int(j % 4)) for j in range(N)]
    q = (
        [None if j % 3 == 0 else f'Question {j}: naïve "quotes", commas\nand lines' for j in range(N)]
        if text
        else [None] * N
    )
    opts = [None if j % 2 else ["w", "x", "y", "z"] for j in range(N)] if text else [None] * N
    shape = (len(models), N, K)
    P = rng.integers(PRED_ABSENT, 4, shape).astype(np.int16) if pred else None
    A = np.where(rng.random(shape) < 0.3, np.nan, rng.normal(size=shape)) if margin else None
    return Records(
        correct=rng.random(shape) < 0.5,
        models=tuple(sorted(models)),
        items=Items(np.array(bench, dtype=object), np.array(ids, dtype=object), gold, q, opts),
        grid=SMALL_GRID,
        pred=P,
        margin=A,
    )


PACKED_GRID = Grid(
    (
        Config("gen|letter_plain|p0", "gen", "letter_plain", "p0", (0, 1, 2, 3), {"template_text": "Q: {q}"}),
        Config("gen|letter_plain|p1", "gen", "letter_plain", "p1", (1, 3, 2, 0)),
        Config("ll|cloze_plain", "ll", "cloze_plain", None, None),
    ),
    "gen|letter_plain|p0",
    extra={"harness": "test"},
)


def full_records(
    M: int = 3, per_bench: tuple[int, ...] = (5, 4), seed: int = 0, pred: bool = True, margin: bool = True
) -> Records:
    rng = np.random.default_rng(seed)
    benches = [f"b{j}" for j in range(len(per_bench))]
    bench = [b for b, n in zip(benches, per_bench) for _ in range(n)]
    ids = [f"{b}/i{j}" for b, n in zip(benches, per_bench) for j in range(n)]
    N, K = len(ids), len(PACKED_GRID)
    shape = (M, N, K)
    return Records(
        correct=rng.random(shape) < 0.5,
        models=tuple(f"org/m{j}" for j in range(M)),
        items=Items(
            np.array(bench, dtype=object),
            np.array(ids, dtype=object),
            [None if j % 3 == 0 else ("B" if j % 3 == 1 else j % 4) for j in range(N)],
            [None if j % 2 else f'Q{j} "naïve"\nline' for j in range(N)],
            [None if j % 2 == 0 else ["w", "x", "y", "ü"] for j in range(N)],
        ),
        grid=PACKED_GRID,
        pred=rng.integers(PRED_ABSENT, 4, shape).astype(np.int16) if pred else None,
        margin=np.where(rng.random(shape) < 0.3, np.nan, rng.normal(size=shape)) if margin else None,
        notes=("a note", "another"),
        dropped={"b0": 2, "b1": 0},
    )


def write_rechunked(src, out, cuts) -> None:
    """Rewrite the packed file ``src`` as ``out`` with every column split into chunks at the
    row offsets ``cuts`` (another Arrow writer may chunk where bits do not start on a byte)."""
    import pyarrow as pa

    with pa.memory_map(str(src)) as f:
        table = pa.ipc.open_file(f).read_all()
    cols = {}
    for name in table.column_names:
        arr = table.column(name).combine_chunks()
        bounds = [0, *cuts, len(arr)]
        cols[name] = pa.chunked_array([arr.slice(a, b - a) for a, b in zip(bounds, bounds[1:])])
    rechunked = pa.table(cols).replace_schema_metadata(table.schema.metadata)
    with pa.OSFile(str(out), "wb") as sink, pa.ipc.new_file(sink, rechunked.schema) as w:
        w.write_table(rechunked)


def load_quiet(path):
    """``load_records`` with its inferred-layout warnings silenced."""
    import warnings

    from leaderboard_audit.records import load_records

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_records(path)


def same_cells(a, b) -> bool:
    """What the long table keeps (it does not hold ``options``): cells, scores, reasons."""

    def same(x, y):
        return (x is None) == (y is None) and (x is None or np.array_equal(x, y))

    return (
        a.models == b.models
        and np.array_equal(a.correct, b.correct)
        and same(a.score, b.score)
        and same(a.missing, b.missing)
        and a.items.item_id.tolist() == b.items.item_id.tolist()
    )


def assert_round_trips(rec) -> None:
    """``rec`` written as JSONL, packed, CSV and Parquet tables, and through the load cache
    (built, then served) reads back equal (the tables: the cells they keep)."""
    import shutil
    import tempfile
    from pathlib import Path

    from leaderboard_audit.records import write_records
    from leaderboard_audit.records.cache import load_cached
    from leaderboard_audit.records.packed import write_packed
    from leaderboard_audit.records.table import write_table

    d = Path(tempfile.mkdtemp())
    try:
        write_records(rec, d / "r")
        assert load_quiet(d / "r").equals(rec)
        write_packed(rec, d / "x.arrow")
        assert load_quiet(d / "x.arrow").equals(rec)
        for name in ("t/x.csv", "p/x.parquet"):
            write_table(rec, d / name)
            assert same_cells(load_quiet(d / name), rec)
        for _ in range(2):
            assert load_cached(d / "r", cache_dir=d / "cache").equals(rec)
    finally:
        shutil.rmtree(d)
