"""Time the packed records form and the load cache (issue 12). Not a test.

Paper-sized grid (12 models x 3,679 items x 26 configs, simulated): loading the
records-v1 JSONL folder, the packed file, and the same folder through the load cache
(first load = parse + write the entry; second load = fingerprint + read the entry).
Big grid (1,000 models x 30,000 items x 26 configs, simulated, packed): load time and
peak RSS of a fresh process that only loads the file (``--big``).

    python benchmarks/bench_load_packed.py [--repeat 5] [--big] [--models 1000 --items 30000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LOAD_ONE = """
import json, resource, sys, time
t0 = time.perf_counter()
from leaderboard_audit.records import load_records
rec = load_records(sys.argv[1])
t = time.perf_counter() - t0
print(json.dumps({"load_s": t, "shape": list(rec.shape),
                  "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "correct_mib": rec.correct.nbytes / 2**20}))
"""


def best_of(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def paper(repeat: int, tmp: Path) -> None:
    from leaderboard_audit.records import load_records, write_records
    from leaderboard_audit.records.cache import load_cached
    from leaderboard_audit.records.fingerprint import sha256_of
    from leaderboard_audit.records.packed import write_packed
    from leaderboard_audit.records.simulate import paper_sized_spec, simulate

    rec = simulate(paper_sized_spec())
    M, N, K = rec.shape
    root = tmp / "records"
    write_records(rec, root)
    size = sum(f.stat().st_size for f in root.rglob("*") if f.is_file())
    packed = write_packed(rec, tmp / "records.arrow")
    assert load_records(root).equals(rec) and load_records(packed).equals(rec)
    print(
        f"paper-sized grid {M} x {N} x {K}: JSONL {size / 1e6:.1f} MB in "
        f"{len(list(root.glob('*/*.jsonl')))} files, packed {packed.stat().st_size / 1e6:.2f} MB"
    )
    print(f"  JSONL load (validation included): {best_of(lambda: load_records(root), repeat):.3f} s (best of {repeat})")
    print(f"  packed load:                      {best_of(lambda: load_records(packed), repeat):.3f} s")
    print(f"  fingerprint of the JSONL folder:  {best_of(lambda: sha256_of(root), repeat):.3f} s")
    firsts = []
    for j in range(repeat):
        cache = tmp / f"cache{j}"
        t0 = time.perf_counter()
        load_cached(root, cache_dir=cache)
        firsts.append(time.perf_counter() - t0)
    print(f"  cached load, first (parse + write entry): {min(firsts):.3f} s")
    assert load_cached(root, cache_dir=tmp / "cache0").equals(rec)
    t = best_of(lambda: load_cached(root, cache_dir=tmp / "cache0"), repeat)
    print(f"  cached load, second (hash + read entry):  {t:.3f} s  (target < 0.1 s)")


def big(models: int, items: int, tmp: Path) -> None:
    import numpy as np

    from leaderboard_audit.records import Items, Records
    from leaderboard_audit.records.grid import paper_grid
    from leaderboard_audit.records.packed import write_packed

    grid = paper_grid()
    K = len(grid)
    rng = np.random.default_rng(12)
    # The simulator's shape of data without its per-model Python loop: ability x difficulty, item noise.
    ability = np.sort(rng.normal(0.5, 1.0, models))[::-1]
    difficulty = rng.normal(0.0, 1.0, items)
    noise = rng.normal(0.0, 0.6, (items, K)).astype(np.float32)
    correct = np.empty((models, items, K), dtype=bool)
    for m in range(models):
        u = rng.random(items, dtype=np.float32)[:, None]
        correct[m] = u < 1.0 / (1.0 + np.exp(-(ability[m] - difficulty[:, None] + noise)))
    per = items // 4
    bench = np.array(
        [
            b
            for j, b in enumerate(("arc", "hellaswag", "mmlu", "truthfulqa"))
            for _ in range(per if j < 3 else items - 3 * per)
        ],
        dtype=object,
    )
    ids = np.array([f"{b}/i{j:06d}" for j, b in enumerate(bench)], dtype=object)
    names = tuple(f"model-{m:04d}" for m in range(models))
    rec = Records(correct, names, Items(bench, ids, [0] * items, [None] * items, [None] * items), grid)
    path = tmp / "big.arrow"
    t0 = time.perf_counter()
    write_packed(rec, path)
    wt = time.perf_counter() - t0
    del rec, correct
    print(f"big grid {models} x {items} x {K}: packed {path.stat().st_size / 1e6:.1f} MB, written in {wt:.1f} s")
    runs = []
    for _ in range(3):
        out = subprocess.run([sys.executable, "-c", LOAD_ONE, str(path)], capture_output=True, text=True, check=True)
        runs.append(json.loads(out.stdout))
    best = min(runs, key=lambda r: r["load_s"])
    print(
        f"  load in a fresh process (imports included): {best['load_s']:.2f} s (best of 3; "
        f"{', '.join(format(r['load_s'], '.2f') for r in runs)}), peak RSS {best['peak_rss_mib']:.0f} MiB, "
        f"correct array {best['correct_mib']:.0f} MiB"
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--big", action="store_true", help="also the 1,000 x 30,000 x 26 packed grid")
    ap.add_argument("--models", type=int, default=1000)
    ap.add_argument("--items", type=int, default=30000)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-load-packed-") as tmp:
        paper(args.repeat, Path(tmp))
        if args.big:
            big(args.models, args.items, Path(tmp))


if __name__ == "__main__":
    main()
