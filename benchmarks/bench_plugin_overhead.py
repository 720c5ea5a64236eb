"""What the plugin costs a pytest start when --audit is not given.

Runs `pytest --version` with and without the plugin (-p no:leaderboard_audit),
alternating, and prints the medians and their difference. Not a test.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time


def timed(args: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest", *args], check=True, capture_output=True)
    return time.perf_counter() - t


def main(runs: int = 21) -> None:
    timed(["--version"])  # warm the file cache
    on, off = [], []
    for _ in range(runs):
        on.append(timed(["--version"]))
        off.append(timed(["-p", "no:leaderboard_audit", "--version"]))
    a, b = statistics.median(on), statistics.median(off)
    print(
        f"pytest --version: with plugin {a * 1000:.0f} ms, without {b * 1000:.0f} ms, "
        f"plugin costs {(a - b) * 1000:+.0f} ms (median of {runs})"
    )


if __name__ == "__main__":
    main()
