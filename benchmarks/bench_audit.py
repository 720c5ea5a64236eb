"""End-to-end audit time on a paper-sized grid: 12 models x 3,679 items x 26 configs.

Writes the simulated records to a temp dir, then times (wall clock, best of 3)
`pytest --audit DIR` with every check, every scope and 10,000 resamples (hypothesis's
pytest plugin disabled: when installed it imports all of hypothesis at terminal-summary
time, which costs seconds where bytecode caching is off), and the
library call `audit(load_records(DIR))`. Not a test: speed targets live here.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time


def main() -> None:
    from leaderboard_audit.records import load_records, write_records
    from leaderboard_audit.engine import audit
    from leaderboard_audit.records.simulate import paper_sized_spec, simulate

    with tempfile.TemporaryDirectory() as d:
        write_records(simulate(paper_sized_spec()), d)
        walls = []
        for _ in range(3):
            t = time.perf_counter()
            res = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pytest",
                    "--audit",
                    d,
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    "--audit-boot",
                    "10000",
                    "-p",
                    "no:hypothesispytest",
                ],
                capture_output=True,
                text=True,
            )
            walls.append(time.perf_counter() - t)
        tail = res.stdout.strip().splitlines()[-1]
        t = time.perf_counter()
        r = load_records(d)
        t_load = time.perf_counter() - t
        t = time.perf_counter()
        audit(r)
        t_audit = time.perf_counter() - t
        print(
            f"pytest --audit 12x3679x26 (all checks, 5 scopes, 10000 resamples): "
            f"{min(walls):.2f} s wall (best of 3; {tail})"
        )
        print(f"library: load {t_load:.2f} s, audit() {t_audit:.2f} s")


if __name__ == "__main__":
    main()
