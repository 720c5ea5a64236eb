"""Planted-truth figures of AUDITS.md v3 (docs/audits.md, "Power and false alarms").

* ``mix``: exchangeable simulated benchmarks (every item drawn iid, the benchmark label
  arbitrary), so no pooled verdict can rest on one benchmark: the share of grids with a
  mix FAIL is the false-alarm rate (target <= 5%).
* ``pairs``: under the null (each disagreement favours either model with probability
  1/2) the adjacent-pair test's false-alarm rate given n disagreements, v2's percentile
  bootstrap against v3's exact sign test (target <= 5% at every n).
* ``power``: the identified (robust items) and harness-averaged orders' power for a
  planted ability gap, as a function of the gap.

    python benchmarks/planted_v3.py mix [GRIDS]    # default 100
    python benchmarks/planted_v3.py pairs
    python benchmarks/planted_v3.py power
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

from leaderboard_audit.engine import audit_scope
from leaderboard_audit.metrics.bootstrap import paired_sign_bootstrap_ci
from leaderboard_audit.metrics.identified import sign_test_p
from leaderboard_audit.records.grid import paper_grid
from leaderboard_audit.records.simulate import SimModel, SimSpec, exchangeable_spec, simulate

GRID = paper_grid()


exchangeable = exchangeable_spec


def mix_false_alarms(grids: int) -> None:
    fails = warns = 0
    t0 = time.perf_counter()
    for g in range(grids):
        rec = simulate(exchangeable(int(os.environ.get("MIX_SEED0", 1000)) + g))
        s = audit_scope(rec, "pooled", n_boot=1000)
        st = [v["status"] for v in s["verdicts"] if v["check"] == "mix"]
        fails += "fail" in st
        warns += "warn" in st and "fail" not in st
    dt = time.perf_counter() - t0
    print(
        f"mix on {grids} exchangeable grids (6 models x 4 benchmarks x 60 items x 26 configs): "
        f"{fails} with a FAIL ({fails / grids:.0%}), {warns} warn only; {dt:.0f} s, load {os.getloadavg()[0]:.1f}"
    )


def pair_false_alarms(reps: int = 20_000) -> None:
    rng = np.random.default_rng(5)
    print("n  v2 bootstrap  v3 sign test  (share of null pairs called identified)")
    for n in (1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50, 100):
        h = rng.binomial(n, 0.5, reps)
        lo = n - h
        J = np.full(reps, max(n, 1) * 3)  # J also holds items both get right or wrong
        ci = paired_sign_bootstrap_ci(h, lo, J, 10_000, rng)
        boot = np.mean((ci[:, 0] > 0) | (ci[:, 1] < 0))
        sign = np.mean(sign_test_p(h, lo) <= 0.05)
        print(f"{n:<3}{boot:>12.1%}{sign:>14.1%}")


def power_curves(reps: int = 40) -> None:
    from leaderboard_audit.metrics.averaged import averaged_order
    from leaderboard_audit.metrics.identified import identified_order

    print("ability gap  identified  averaged   (share of 2-model grids of 200 items x 26 configs ordering the pair)")
    for gap in (0.0, 0.1, 0.2, 0.3, 0.5, 0.8):
        hit_i = hit_a = 0
        for r in range(reps):
            spec = SimSpec(
                (SimModel("a", gap), SimModel("b", 0.0)), {"x": 200}, grid=GRID, robust_share=0.2, seed=77 + r
            )
            rec = simulate(spec)
            names = rec.models
            io = identified_order(rec.correct, models=names)
            ao = averaged_order(rec.correct, models=names)
            a = names.index("a")
            b = 1 - a
            hit_i += bool(io.above[a, b])
            hit_a += bool(ao.above[a, b])
        print(f"{gap:<13}{hit_i / reps:>10.0%}{hit_a / reps:>10.0%}")


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "mix"
    if what == "mix":
        mix_false_alarms(int(sys.argv[2]) if len(sys.argv) > 2 else 100)
    elif what == "pairs":
        pair_false_alarms()
    else:
        power_curves()
