"""Leaderboard scale (issue 12 targets), end to end with ``pytest --audit``.

* ``leaderboard``: 4,278 models x 102 items x 1 configuration (the shape of the Open
  LLM Leaderboard's MMLU slice), a long Parquet table, as a new user would run it:
  ``pytest --audit grid.parquet -q``. Target < 5 s, < 400 output lines.
* ``paper``: 12 models x 3,679 items x 26 configs (48 JSONL files): best of 5.
  Target < 1.2 s end to end.
* ``xdist``: the paper-sized grid with 4x the items, ``-n 2`` vs ``-n 0`` alternating
  (target: -n 2 wall <= 0.75x -n 0), and the report JSON byte-identical across -n 0/2.

Not a test: ``python benchmarks/bench_scale.py [leaderboard|paper|xdist ...]``.
Prints one line per figure. Peak RSS is the child's maximum resident set size.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest"]


def leaderboard_table(path: Path, n_models: int = 4278, n_items: int = 102, seed: int = 0) -> Path:
    import pandas as pd

    rng = np.random.default_rng(seed)
    ability = rng.normal(0, 1.2, n_models)
    difficulty = rng.normal(0, 1, n_items)
    p = 1 / (1 + np.exp(-(ability[:, None] - difficulty[None, :])))
    C = rng.random((n_models, n_items)) < p
    models = np.array([f"org{m % 97}/model-{m:05d}" for m in range(n_models)], dtype=object)
    df = pd.DataFrame(
        {
            "model": np.repeat(models, n_items),
            "benchmark": "mmlu",
            "item_id": np.tile([f"mmlu/{i:04d}" for i in range(n_items)], n_models),
            "config": "gen|letter_plain|p0",
            "correct": C.reshape(-1).astype(np.int8),
        }
    )
    df.to_parquet(path, index=False)
    return path


def run(args: list[str], env: dict[str, str] | None = None) -> tuple[float, int, int, str]:
    """(wall seconds, output lines, peak RSS MiB of children, last line)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.perf_counter()
    res = subprocess.run(PYTEST + args, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    rss = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) // 1024
    lines = (res.stdout + res.stderr).splitlines()
    return wall, len(lines), rss, lines[-1] if lines else ""


def bench_leaderboard(tmp: Path) -> None:
    t = time.perf_counter()
    path = leaderboard_table(tmp / "leaderboard.parquet")
    print(f"leaderboard grid written in {time.perf_counter() - t:.1f} s")
    wall, n, rss, last = run(["--audit", str(path)])
    print(f"leaderboard 4278x102x1: {wall:.2f} s wall, {n} output lines, peak RSS {rss} MiB ({last})")
    wall, n, rss, last = run(["--audit", str(path)])
    print(f"leaderboard 4278x102x1 (second run, load cache warm if any): {wall:.2f} s wall, {n} lines")


def paper_dir(tmp: Path, items_scale: int = 1) -> Path:
    from leaderboard_audit.records import write_records
    from leaderboard_audit.simulate import paper_sized_spec, simulate

    spec = paper_sized_spec()
    if items_scale != 1:
        from dataclasses import replace

        spec = replace(spec, items_per_benchmark={b: n * items_scale for b, n in spec.items_per_benchmark.items()})
    d = tmp / f"paper-x{items_scale}"
    write_records(simulate(spec), d)
    return d


def bench_paper(tmp: Path) -> None:
    d = paper_dir(tmp)
    walls = [run(["--audit", str(d)])[0] for _ in range(5)]
    print(f"paper 12x3679x26: best {min(walls):.2f} s, median {sorted(walls)[2]:.2f} s of 5 end to end")
    from leaderboard_audit.auditor import audit_scopes
    from leaderboard_audit.records import load_records

    r = load_records(d)
    t = time.perf_counter()
    audit_scopes(r)
    print(f"paper statistics alone (every scope, every check, 10,000 resamples): {time.perf_counter() - t:.2f} s")


def bench_xdist(tmp: Path) -> None:
    d = paper_dir(tmp, items_scale=4)
    n0, n2 = [], []
    for _ in range(3):
        n0.append(run(["--audit", str(d), "--audit-report", str(tmp / "n0.json")])[0])
        n2.append(run(["--audit", str(d), "-n", "2", "--audit-report", str(tmp / "n2.json")])[0])
    run(["--audit", str(d), "-n", "4", "--audit-report", str(tmp / "n4.json")])
    # xdist's fixed cost: the same two runs on a grid with next to no statistics (fixtures/tiny)
    tiny = str(Path(__file__).resolve().parent.parent / "fixtures" / "tiny")
    t0 = sorted(run(["--audit", tiny])[0] for _ in range(3))[1]
    t2 = sorted(run(["--audit", tiny, "-n", "2"])[0] for _ in range(3))[1]
    print(f"xdist fixed cost on fixtures/tiny: -n 0 median {t0:.2f} s, -n 2 median {t2:.2f} s (+{t2 - t0:.2f} s)")
    same = (tmp / "n0.json").read_bytes() == (tmp / "n2.json").read_bytes() == (tmp / "n4.json").read_bytes()
    print(
        f"xdist paper x4 items: -n 0 median {sorted(n0)[1]:.2f} s, -n 2 median {sorted(n2)[1]:.2f} s "
        f"(ratio {sorted(n2)[1] / sorted(n0)[1]:.2f}); report identical across -n 0/2/4: {same}"
    )


def main(argv: list[str]) -> None:
    which = argv or ["leaderboard", "paper", "xdist"]
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for w in which:
            {"leaderboard": bench_leaderboard, "paper": bench_paper, "xdist": bench_xdist}[w](tmp)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main(sys.argv[1:])
