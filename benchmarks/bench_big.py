"""1,000 models x 30,000 items x 26 configs (issue 12 target: the whole audit < 60 s, < 4 GiB).

Builds the grid in blocks of models (logistic abilities, item difficulties and per-config
shifts; no planted structure), writes the packed form (``records/packed.py``), then runs
``pytest --audit BIG.packed -q`` in a child process and prints wall time and peak RSS.
Not a test: ``python benchmarks/bench_big.py [--models 1000 --items 30000]``;
``--items 8000 --xdist 3``: ``pytest -n 0`` and ``-n 2`` alternating, 3 pairs, each figure with
the load average beside it; ``--items 8000 --jobs 3``: the CLI's ``audit --jobs 1`` and
``--jobs 2`` alternating, the same way (docs/performance.md).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def build(path: Path, n_models: int, n_items: int, seed: int = 0) -> Path:
    from leaderboard_audit.records import Items, Records
    from leaderboard_audit.records.grid import paper_grid
    from leaderboard_audit.records.packed import write_packed

    grid = paper_grid()
    K = len(grid)
    rng = np.random.default_rng(seed)
    ability = rng.normal(0, 1, n_models).astype(np.float32)
    difficulty = rng.normal(0, 1, n_items).astype(np.float32)
    shift = rng.normal(0, 0.5, (n_models, K)).astype(np.float32)
    sens = (rng.random(n_items) < 0.6).astype(np.float32)  # 40% of items answer alike under every config
    C = np.empty((n_models, n_items, K), dtype=bool)
    for lo in range(0, n_models, 50):
        hi = min(n_models, lo + 50)
        u = rng.random((hi - lo, n_items, 1), dtype=np.float32)
        logit = ability[lo:hi, None, None] - difficulty[None, :, None] + sens[None, :, None] * shift[lo:hi, None, :]
        C[lo:hi] = u < 1 / (1 + np.exp(-logit))
    benches = ("arc", "hellaswag", "mmlu", "truthfulqa")
    per = n_items // len(benches)
    bench = np.array([benches[min(i // per, len(benches) - 1)] for i in range(n_items)], dtype=object)
    ids = np.array([f"{b}/q{i:06d}" for i, b in enumerate(bench)], dtype=object)
    items = Items(bench, ids, [0] * n_items, [None] * n_items, [None] * n_items)
    models = tuple(f"model-{m:04d}" for m in range(n_models))
    write_packed(Records(C, models, items, grid), path)
    return path


#: CPU seconds (user + system, the run's whole process tree) of the last ``pytest_run``: on a
#: shared host the same run's wall time moves by +-20%, and its CPU seconds show when the
#: host, not the code, was slow (the serial run's CPU is its wall time, give or take)
LAST_CPU = 0.0


def pytest_run(path: Path, *extra: str, env: dict[str, str] | None = None) -> tuple[float, float, int, str]:
    """(wall s, peak RSS GiB of the largest child process, exit code, last line) of one
    ``pytest --audit`` run. Under -n N the figure is the largest single process (the
    controller or a worker), not the sum: ``ru_maxrss`` of children is a maximum."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    before, cpu_before = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
    t = time.perf_counter()
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",  # the README's invocation: no --tb=no (the audit drops the failure section itself)
            "-p",
            "no:cacheprovider",
            "-p",
            "no:hypothesispytest",
            "--audit",
            str(path),
            "--audit-cache",
            "off",
            *extra,
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    wall = time.perf_counter() - t
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    rss = max(before, usage.ru_maxrss) / 2**20
    last = (res.stdout.strip().splitlines() or [""])[-1]
    global LAST_CPU
    LAST_CPU = usage.ru_utime + usage.ru_stime - cpu_before
    return wall, rss, res.returncode, last


def tree_rss_peak(cmd: list[str], interval: float = 0.1) -> tuple[float, float, float, float]:
    """(wall s, peak of the summed RSS of the process and its descendants in GiB, peak RSS of
    the largest single process in GiB, peak of the summed PSS in GiB) of ``cmd``, sampled from
    /proc every ``interval`` s (issue 24: summed over xdist's workers and controller). RSS
    counts a page shared by several processes (the libraries' code, a mapped file) in each of
    them; PSS divides it among them, so its sum is the memory the run holds."""

    def children(pid: int) -> list[int]:
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                kids = [int(x) for x in f.read().split()]
        except OSError:
            return []
        return kids + [g for k in kids for g in children(k)]

    def rss(pid: int) -> int:
        try:
            with open(f"/proc/{pid}/statm") as f:
                return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            return 0

    def pss(pid: int) -> int:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                return next(int(line.split()[1]) * 1024 for line in f if line.startswith("Pss:"))
        except (OSError, StopIteration, ValueError):
            return 0

    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak_sum = peak_one = peak_pss = 0
    per: dict[int, int] = {}
    while proc.poll() is None:
        pids = (proc.pid, *children(proc.pid))
        sizes = [rss(p) for p in pids]
        for p, size in zip(pids, sizes):
            per[p] = max(per.get(p, 0), size)
        peak_sum, peak_one = max(peak_sum, sum(sizes)), max(peak_one, max(sizes))
        peak_pss = max(peak_pss, sum(pss(p) for p in pids))
        time.sleep(interval)
    if os.environ.get("BENCH_RSS_EACH"):
        print("  peak RSS per process (GiB):", ", ".join(f"{v / 2**30:.2f}" for v in per.values()))
    return time.perf_counter() - t, peak_sum / 2**30, peak_one / 2**30, peak_pss / 2**30


def rss_compare(path: Path) -> None:
    """Summed peak RSS at -n 0 and -n 2 (target: -n 2 <= 1.5x of -n 0)."""
    base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest"]
    base += ["--audit", str(path), "--audit-cache", "off"]
    got, got_pss = {}, {}
    for n in ("0", "2"):
        wall, total, one, pss = tree_rss_peak([*base, "-n", n])
        got[n], got_pss[n] = total, pss
        print(
            f"-n {n}: {wall:.1f} s, summed peak RSS {total:.2f} GiB (largest process {one:.2f} GiB), "
            f"summed peak PSS {pss:.2f} GiB (load {os.getloadavg()[0]:.1f})",
            flush=True,
        )
    print(
        f"summed PSS -n 2 / -n 0: {got_pss['2'] / got_pss['0']:.2f} (target <= 1.5: PSS shares a page among the "
        f"processes that map it); summed RSS: {got['2'] / got['0']:.2f} (counts a shared page in each)"
    )


def cli_run(path: Path, jobs: int) -> tuple[float, float, int]:
    """(wall s, CPU s of the process tree, exit code) of ``leaderboard-audit audit PATH --jobs N``."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_before = usage.ru_utime + usage.ru_stime
    t = time.perf_counter()
    res = subprocess.run(
        [sys.executable, "-m", "leaderboard_audit.cli", "audit", str(path), "--jobs", str(jobs)],
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, usage.ru_utime + usage.ru_stime - cpu_before, res.returncode


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=int, default=1000)
    ap.add_argument("--items", type=int, default=30000)
    ap.add_argument("--keep", help="write the packed file here and keep it")
    ap.add_argument(
        "--xdist",
        type=int,
        default=0,
        metavar="PAIRS",
        help="run -n 0 and -n 2 alternating, this many pairs (issue 24: -n 2 <= 0.65x at 1,000 x 8,000)",
    )
    ap.add_argument("--rss", action="store_true", help="summed peak RSS of the process tree at -n 0 and -n 2")
    ap.add_argument(
        "--jobs",
        type=int,
        default=0,
        metavar="PAIRS",
        help="run the CLI's audit --jobs 1 and --jobs 2 alternating, this many pairs",
    )
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = Path(a.keep) if a.keep else Path(d) / "big.packed"
        t = time.perf_counter()
        build(path, a.models, a.items)
        print(
            f"built {a.models} x {a.items} x 26 packed ({path.stat().st_size / 2**20:.0f} MiB) "
            f"in {time.perf_counter() - t:.1f} s",
            flush=True,
        )
        if a.rss:
            rss_compare(path)
            return
        if a.jobs:
            ratios = []
            for i in range(a.jobs):
                w1, c1, _ = cli_run(path, 1)
                l1 = os.getloadavg()[0]
                w2, c2, _ = cli_run(path, 2)
                l2 = os.getloadavg()[0]
                ratios.append(w2 / w1)
                print(
                    f"pair {i + 1}: --jobs 1 {w1:.1f} s (CPU {c1:.1f} s, load {l1:.1f}), --jobs 2 {w2:.1f} s "
                    f"(CPU {c2:.1f} s, load {l2:.1f}): ratio {w2 / w1:.2f}",
                    flush=True,
                )
            print(f"median ratio --jobs 2 / --jobs 1 over {a.jobs} pairs: {statistics.median(ratios):.2f}")
            return
        if a.xdist:
            ratios = []
            for i in range(a.xdist):
                w0, r0, _, _ = pytest_run(path, "-n", "0")
                c0, l0 = LAST_CPU, os.getloadavg()[0]
                w2, r2, _, last = pytest_run(path, "-n", "2")
                c2, l2 = LAST_CPU, os.getloadavg()[0]
                ratios.append(w2 / w0)
                print(
                    f"pair {i + 1}: -n 0 {w0:.1f} s (CPU {c0:.1f} s, load {l0:.1f}), -n 2 {w2:.1f} s "
                    f"(CPU {c2:.1f} s, load {l2:.1f}): ratio {w2 / w0:.2f} ({last})",
                    flush=True,
                )
            print(f"median ratio -n 2 / -n 0 over {a.xdist} pairs: {statistics.median(ratios):.2f}")
            return
        wall, rss, code, last = pytest_run(path)
        print(f"pytest --audit: {wall:.1f} s wall, {LAST_CPU:.1f} s CPU, peak RSS {rss:.2f} GiB, exit {code} ({last})")


if __name__ == "__main__":
    main()
