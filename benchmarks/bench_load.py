"""Time load_records on a paper-sized records set (12 models x 3,679 items x 26 configs).

Not a test. Builds the records in a temporary directory with
``simulate(paper_sized_spec())`` + ``write_records`` and reports the best of
three loads, e.g. ``load 12x3679x26 (48 files, 31.2 MB): 0.71 s``.

    python benchmarks/bench_load.py [--repeat 3] [--table]

``--table`` also times the same records as a long CSV and Parquet table.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from leaderboard_audit.records import load_records, write_records
from leaderboard_audit.records.simulate import paper_sized_spec, simulate


def best_of(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--table", action="store_true", help="also time the long CSV/Parquet table")
    args = ap.parse_args(argv)
    records = simulate(paper_sized_spec())
    M, N, K = records.shape
    with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp:
        root = Path(tmp) / "records"
        write_records(records, root)
        files = sorted(root.glob("*/*.jsonl"))
        size = sum(f.stat().st_size for f in files) + (root / "grid.json").stat().st_size
        loaded = load_records(root)
        assert loaded.equals(records), "round trip changed the records"
        t = best_of(lambda: load_records(root), args.repeat)
        print(f"load {M}x{N}x{K} ({len(files)} files, {size / 1e6:.1f} MB): {t:.2f} s")
        if args.table:
            from leaderboard_audit.records.table import write_table

            for name in ("records.csv", "records.parquet"):
                path = Path(tmp) / "table" / name
                write_table(records, path)
                assert load_records(path).equals(records), f"{name} round trip changed the records"
                t = best_of(lambda: load_records(path), args.repeat)
                print(f"load {M}x{N}x{K} ({name}, {path.stat().st_size / 1e6:.1f} MB): {t:.2f} s")


if __name__ == "__main__":
    main()
