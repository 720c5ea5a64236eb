"""What arena rules and published score columns share: a model x configuration score
grid (higher is better) and the orders it prints (docs/audits.md, "Judge and arena
leaderboards").

A configuration is an aggregation rule (arena) or a published score column (a table:
raw win rate, length-controlled win rate, another judge). Uncertainty comes either as
bootstrap draws over battles (``draws[k]``: B x M, arena) or as published standard
errors (``se``: M x K, tables); a configuration with neither has no intervals.

Definitions (all exact, pure numpy):

* rank: ``1 + #models scoring strictly higher`` (ties share the better rank);
* champions of a configuration: the models with its top score;
* rank range: a model's best and worst rank over the configurations;
* reversed adjacent pairs: adjacent pairs of the reference order (``h`` printed above
  ``l``) that configuration ``k`` orders the other way (``S[l, k] > S[h, k]``);
* Kendall tau-b between the reference column and each other column;
* averaged order: the mean rank over the configurations (the reference breaks ties);
* the interval of a difference ``S[a, k] - S[b, k]``: the 2.5-97.5% percentile interval
  of the bootstrap draws of the difference, or ``+- 1.96 sqrt(se_a^2 + se_b^2)``;
* identified order: a z-test per pair ``z = diff / SE(diff)`` (the bootstrap SD of the
  difference, or ``sqrt(se_a^2 + se_b^2)``), Holm step-down over all ``M (M - 1) / 2``
  pairs at ``alpha``; tiers by topological layering (``metrics.identified``);
* exploit flag: a model that is champion under exactly one configuration (or in the
  top 3 under exactly one) whose lead there is decisive: its margin over the runner-up
  (champion) or over the 4th model (top 3) has an interval above 0. A lone crown that
  no other rule reproduces and that no interval explains as a tie is the signature of a
  rule being gamed (NullModel's length-controlled win, Zheng et al., ICLR 2025). Flags
  are listed champions first, then by ``lead_z`` (the lead in standard errors). With
  two configurations the definition is symmetric: a model that wins one of them
  decisively because the other is gamed is flagged too, after it when less decisive.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

Z95 = 1.959963984540054
TOP = 3


@dataclass(frozen=True)
class ScoreGrid:
    models: tuple[str, ...]
    configs: tuple[str, ...]
    S: np.ndarray  # M x K scores, higher is better
    reference: int
    se: np.ndarray | None = None  # M x K published standard errors (NaN: none)
    draws: dict[int, np.ndarray] = field(default_factory=dict)  # config -> B x M bootstrap draws

    @property
    def ref_order(self) -> np.ndarray:
        """Model indices in the reference order (score descending, then name order)."""
        return np.lexsort((np.arange(len(self.models)), -self.S[:, self.reference]))

    def has_intervals(self, k: int) -> bool:
        return k in self.draws or (self.se is not None and bool(np.isfinite(self.se[:, k]).any()))

    def diff_interval(self, k: int, a: int, b: int) -> tuple[float, float] | None:
        """95% interval of ``S[a, k] - S[b, k]``; ``None`` where the configuration has none."""
        if k in self.draws:
            d = self.draws[k][:, a] - self.draws[k][:, b]
            lo, hi = np.quantile(d, [0.025, 0.975])
            return float(lo), float(hi)
        if self.se is not None and np.isfinite(self.se[[a, b], k]).all():
            gap = float(self.S[a, k] - self.S[b, k])
            w = Z95 * float(np.hypot(self.se[a, k], self.se[b, k]))
            return gap - w, gap + w
        return None

    def diff_se(self, k: int) -> np.ndarray | None:
        """M x M standard errors of every difference under configuration ``k``."""
        if k in self.draws:
            cov = np.cov(self.draws[k], rowvar=False)
            v = np.diag(cov)
            return np.sqrt(np.maximum(v[:, None] + v[None, :] - 2 * cov, 0.0))
        if self.se is not None and np.isfinite(self.se[:, k]).all():
            s = self.se[:, k]
            return np.sqrt(s[:, None] ** 2 + s[None, :] ** 2)
        return None


def ranks(S: np.ndarray) -> np.ndarray:
    """Competition ranks per column: ``1 + #scores strictly higher``."""
    return 1 + (S[None, :, :] > S[:, None, :]).sum(axis=1)


def champions(grid: ScoreGrid) -> dict[str, list[str]]:
    S = grid.S
    return {c: [grid.models[m] for m in np.flatnonzero(S[:, k] == S[:, k].max())] for k, c in enumerate(grid.configs)}


def rank_ranges(grid: ScoreGrid) -> list[dict[str, Any]]:
    """Per model in reference order: its rank under each configuration, best and worst."""
    R = ranks(grid.S)
    out = []
    for m in grid.ref_order.tolist():
        r = R[m]
        out.append(
            {
                "model": grid.models[m],
                "ranks": {c: int(r[k]) for k, c in enumerate(grid.configs)},
                "best": int(r.min()),
                "worst": int(r.max()),
                "range": int(r.max() - r.min()),
            }
        )
    return out


def kendall_and_reversals(grid: ScoreGrid) -> list[dict[str, Any]]:
    """Per non-reference configuration: Kendall tau-b against the reference column and the
    adjacent pairs of the reference order it reverses."""
    from ..metrics.kendall import kendall_tau_b

    order = grid.ref_order
    ref = grid.reference
    others = [k for k in range(len(grid.configs)) if k != ref]
    if not others:
        return []
    tau = kendall_tau_b(grid.S[:, ref], grid.S[:, others])
    out = []
    for t, k in zip(tau.tolist(), others):
        hi, lo = order[:-1], order[1:]
        rev = np.flatnonzero(grid.S[lo, k] > grid.S[hi, k])
        out.append(
            {
                "config": grid.configs[k],
                "kendall_tau": None if t != t else float(t),
                "adjacent_pairs": int(len(order) - 1),
                "reversed": int(len(rev)),
                "reversed_pairs": [[grid.models[hi[p]], grid.models[lo[p]]] for p in rev.tolist()],
            }
        )
    return out


def averaged_order(grid: ScoreGrid) -> dict[str, Any]:
    """The mean rank over the configurations; the reference order breaks ties."""
    mean_rank = ranks(grid.S).mean(axis=1)
    pos = np.empty(len(grid.models), dtype=np.intp)
    pos[grid.ref_order] = np.arange(len(grid.models))
    order = np.lexsort((pos, mean_rank))
    return {
        "order": [grid.models[m] for m in order.tolist()],
        "mean_rank": {grid.models[m]: float(mean_rank[m]) for m in order.tolist()},
        "champion": grid.models[int(order[0])],
    }


def adjacent_pairs(grid: ScoreGrid) -> list[dict[str, Any]]:
    """Adjacent pairs of the reference order with the interval of their difference under
    the reference configuration; ``separated`` when the interval excludes 0 (``None``
    without intervals)."""
    k = grid.reference
    order = grid.ref_order.tolist()
    out = []
    for h, lo in zip(order[:-1], order[1:]):
        iv = grid.diff_interval(k, h, lo)
        out.append(
            {
                "higher": grid.models[h],
                "lower": grid.models[lo],
                "gap": float(grid.S[h, k] - grid.S[lo, k]),
                "interval": None if iv is None else [iv[0], iv[1]],
                "separated": None if iv is None else bool(iv[0] > 0 or iv[1] < 0),
            }
        )
    return out


def identified_order(grid: ScoreGrid, alpha: float) -> dict[str, Any] | None:
    """Holm-adjusted z-tests over every pair of the reference configuration; ``None``
    without intervals."""
    import math

    from ..metrics.identified import holm_adjust, topological_tiers

    k = grid.reference
    se = grid.diff_se(k)
    if se is None:
        return None
    M = len(grid.models)
    diff = grid.S[:, k][:, None] - grid.S[:, k][None, :]
    iu = np.triu_indices(M, 1)
    d, s = diff[iu], se[iu]
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(s > 0, np.abs(d) / np.where(s > 0, s, 1), np.where(d != 0, np.inf, 0.0))
    p = np.frompyfunc(lambda x: math.erfc(x / math.sqrt(2.0)), 1, 1)(z).astype(float)  # 2 Phi(-z), no scipy
    adj = holm_adjust(p)
    reject = adj <= alpha
    above = np.zeros((M, M), dtype=bool)
    a, b = iu[0][reject], iu[1][reject]
    up = d[reject] > 0
    above[a[up], b[up]] = True
    above[b[~up], a[~up]] = True
    tiers, cycle = topological_tiers(above, grid.ref_order)
    return {
        "method": "holm-z-bootstrap-se" if k in grid.draws else "holm-z-published-se",
        "alpha": alpha,
        "pairs": int(len(p)),
        "identified_pairs": int(reject.sum()),
        "tiers": [[grid.models[m] for m in t] for t in tiers],
        "cycle": bool(cycle),
    }


def exploit_flags(grid: ScoreGrid) -> list[dict[str, Any]]:
    """Models champion (or top 3) under exactly one configuration, each with whether its
    lead there is decisive (``flagged``); see the module docstring."""
    K = len(grid.configs)
    if K < 2:
        return []
    R = ranks(grid.S)
    out = []
    for what, cut in (("champion", 1), ("top-3", TOP)):
        inside = R <= cut
        for m in np.flatnonzero(inside.sum(axis=1) == 1).tolist():
            k = int(np.flatnonzero(inside[m])[0])
            col = grid.S[:, k]
            below = np.flatnonzero(R[:, k] > cut)
            if not len(below):
                continue
            rival = int(below[np.argmax(col[below])])  # the best model outside the set
            iv = grid.diff_interval(k, m, rival)
            out.append(
                {
                    "model": grid.models[m],
                    "as": what,
                    "config": grid.configs[k],
                    "rank_elsewhere": {c: int(R[m, j]) for j, c in enumerate(grid.configs) if j != k},
                    "rival": grid.models[rival],
                    "lead": float(col[m] - col[rival]),
                    "interval": None if iv is None else [iv[0], iv[1]],
                    "flagged": bool(iv is not None and iv[0] > 0),
                }
            )
    flagged_champ = {e["model"] for e in out if e["as"] == "champion"}
    out = [e for e in out if e["as"] == "champion" or e["model"] not in flagged_champ]
    for e in out:  # the lead in standard errors (the interval's half-width is 1.96 of them)
        iv = e["interval"]
        e["lead_z"] = None if iv is None or iv[1] <= iv[0] else float(e["lead"] / ((iv[1] - iv[0]) / (2 * Z95)))
    # champions first, then the top 3; the most decisive first
    return sorted(out, key=lambda e: (e["as"] != "champion", not e["flagged"], -(e["lead_z"] or 0.0)))


__all__ = [
    "TOP",
    "Z95",
    "ScoreGrid",
    "adjacent_pairs",
    "averaged_order",
    "champions",
    "exploit_flags",
    "identified_order",
    "kendall_and_reversals",
    "rank_ranges",
    "ranks",
]
