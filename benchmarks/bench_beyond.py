"""What the beyond-the-paper sections add to the paper-sized audit (12 x 3,679 x 26).

The simulated paper-sized records get the two optional arrays the real release has:
a margin under ``ll|cloze_plain`` (smaller, on average, for config-fragile items) and a
``pred`` for every generation config (a wrong answer is unparseable with probability
0.3). Times (least CPU time of 3 runs) the library ``audit()`` with every registered check, then with
the four new ones (flip, compliance, robust_subset, mix) left out of the registry, and
each new section's ``compute`` alone on the pooled scope. Not a test.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

NEW = ("flip", "compliance", "robust_subset", "mix")


def paper_sized_with_margins_and_preds():
    from leaderboard_audit.metrics.per_model import robust_masks
    from leaderboard_audit.records import PRED_ABSENT, PRED_UNPARSEABLE
    from leaderboard_audit.records.simulate import paper_sized_spec, simulate

    r = simulate(paper_sized_spec())
    C = r.correct
    rng = np.random.default_rng(0)
    fragile = robust_masks(C)[2]
    margin = np.full(C.shape, np.nan)
    margin[:, :, r.grid.index("ll|cloze_plain")] = np.where(
        fragile, rng.gamma(1.0, 0.5, fragile.shape), rng.gamma(2.0, 0.5, fragile.shape)
    )
    gold = np.array(r.items.gold)[None, :, None]
    wrong = (gold + rng.integers(1, 4, C.shape)) % 4
    pred = np.where(C, gold, np.where(rng.random(C.shape) < 0.3, PRED_UNPARSEABLE, wrong)).astype(np.int16)
    ll = [k for k, c in enumerate(r.grid.configs) if c.scoring == "ll"]
    pred[:, :, ll] = PRED_ABSENT
    return replace(r, margin=margin, pred=pred)


def best(fn, n: int = 3) -> float:
    """Least CPU time of n runs (process time: steadier than wall time on a shared machine)."""
    ts = []
    for _ in range(n):
        t = time.process_time()
        fn()
        ts.append(time.process_time() - t)
    return min(ts)


def main() -> None:
    from leaderboard_audit.engine import audit, make_scope
    from leaderboard_audit.checks import registry

    r = paper_sized_with_margins_and_preds()
    t_all = best(lambda: audit(r))
    reg = registry()
    saved = dict(reg)
    for k in NEW:
        del reg[k]
    try:
        t_base = best(lambda: audit(r))
    finally:
        reg.clear()
        reg.update(saved)
    print(
        f"audit() 12x3679x26 with margins and preds, CPU time: {t_all:.2f} s with the new sections, "
        f"{t_base:.2f} s without (+{t_all - t_base:.2f} s)"
    )
    sc = make_scope(r, "pooled")
    for name in [c for c in saved if c not in NEW]:  # sections mix reads
        if saved[name].section:
            sc.sections[saved[name].section] = saved[name].compute(sc)
    for name in NEW:
        print(f"  pooled {name}.compute: {best(lambda: saved[name].compute(sc)):.2f} s")
    for b in r.benchmarks:
        sb = make_scope(r, b)
        print(f"  {b} flip.compute (no CI): {best(lambda: saved['flip'].compute(sb)):.3f} s")


if __name__ == "__main__":
    main()
