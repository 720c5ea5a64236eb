"""Regenerate fixtures/demo/: the simulator's demo records (six models, four benchmarks).

    python benchmarks/make_demo.py [--items-per-benchmark 120] [--seed 7] [--out fixtures/demo]

Deterministic: the same arguments give byte-identical files. The planted truths
(a manufactured pair, a second champion under likelihood scoring, a truly
separated model) are described in ``leaderboard_audit/simulate.py``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from leaderboard_audit.records import write_records
from leaderboard_audit.records.simulate import demo_spec, simulate

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items-per-benchmark", type=int, default=120)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path, default=ROOT / "fixtures" / "demo")
    args = ap.parse_args(argv)
    records = simulate(demo_spec(items_per_benchmark=args.items_per_benchmark, seed=args.seed))
    if args.out.exists():  # stale files of models/benchmarks no longer simulated
        for f in args.out.glob("*/*.jsonl"):
            f.unlink()
    write_records(records, args.out)
    files = sorted(args.out.rglob("*.json*"))
    size = sum(f.stat().st_size for f in files)
    M, N, K = records.shape
    print(f"wrote {args.out}: {M} models x {N} items x {K} configs, {len(files)} files, {size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
