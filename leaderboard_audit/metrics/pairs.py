"""Adjacent-pair gap decomposition: the paper's Table 2 and Figure 2 (section 4.2)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .bootstrap import paired_sign_bootstrap, percentile_ci
from .per_model import robust_masks
from .rng import rng_for


@dataclass(frozen=True)
class PairStats:
    higher: int
    lower: int
    gap: float
    gap_items: int
    fragile_share: float | None
    robust_items: int
    higher_only: int
    lower_only: int
    robust_diff: float | None
    ci: tuple[float, float] | None
    robust_tie: bool
    manufactured: bool
    reversing: int


def adjacent_pairs(C: np.ndarray, ref: int, order: np.ndarray, *, seed: int, scope: str,
                   models: tuple[str, ...], n_boot: int = 10_000) -> list[PairStats]:
    """Decompose each adjacent reference gap into robust and fragile parts.

    * ``J`` = items robust (correct or wrong) for both models; ``higher_only`` /
      ``lower_only`` = items of J only the higher / lower model gets right.
    * ``fragile_share = (gap - (higher_only - lower_only)/N) / gap`` (None when gap = 0).
    * ``robust_diff = (higher_only - lower_only)/|J|`` with a 95% percentile bootstrap
      CI over J's items (multinomial over the three counts; seeded per scope and pair).
    * ``reversing = #{k: acc[l,k] > acc[h,k]}``.
    """
    N = C.shape[1]
    rc, rw, _ = robust_masks(C)
    robust_any = rc | rw
    counts = C.sum(axis=1, dtype=np.int64)
    acc = counts / N
    out = []
    for h, l in zip(order[:-1].tolist(), order[1:].tolist()):
        J = robust_any[h] & robust_any[l]
        nJ = int(J.sum())
        ho = int((J & rc[h] & ~rc[l]).sum())
        lo = int((J & rc[l] & ~rc[h]).sum())
        gap = float(acc[h, ref] - acc[l, ref])
        gap_items = int(counts[h, ref] - counts[l, ref])
        fragile_share = None if gap_items == 0 else (gap_items - (ho - lo)) / gap_items
        if nJ == 0:
            diff, ci, tie = None, None, True
        else:
            diff = (ho - lo) / nJ
            rng = rng_for(seed, "pairs", scope, models[h], models[l])
            ci = percentile_ci(paired_sign_bootstrap(ho, lo, nJ, n_boot, rng))
            tie = ci[0] <= 0.0 <= ci[1]
        out.append(PairStats(
            higher=h, lower=l, gap=gap, gap_items=gap_items, fragile_share=fragile_share,
            robust_items=nJ, higher_only=ho, lower_only=lo, robust_diff=diff, ci=ci,
            robust_tie=tie, manufactured=bool(tie and gap_items != 0),
            reversing=int((acc[l] > acc[h]).sum())))
    return out
