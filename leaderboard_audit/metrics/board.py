"""The published board's ranking rule (AUDITS v4, docs/audits.md "The board").

A model's rank is 1 + the number of models identified above it, where "identified" is the
exact sign test of every pair of models on their harness-averaged item scores (the
harness-averaged order's counts), with Benjamini-Hochberg over all ``M(M-1)/2`` pairs at
``alpha``. Holm over all pairs (the identified and averaged orders' family) controls the
chance of any false edge, and on a 4,278-model board it left 1,078 models at "1=" (a 0.725
model beside a 1.000 one: their sign test p is 7e-9, Holm's threshold 5e-9); BH controls the
expected share of false claims among the edges the board prints, which equals the chance of
any false claim when no model differs (``benchmarks/null_and_power.py board`` measures both).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .exact import exact_array
from .identified import CELL_TABLE_MAX, pair_cells, sign_test_p

#: the v5 board's rule (checks/averaged.py ``board_section``; v4: Benjamini-Hochberg over the
#: harness-averaged sign tests, whose ranks could contradict the score column)
RULE = "simultaneous 95% rank intervals of the harness-averaged score (every pairwise difference at once)"


def bh_adjust(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values: ``min_{j >= i} min(1, m p_(j) / j)`` in sorted order."""
    p = np.asarray(p, dtype=float)
    m = p.size
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, p[order] * m / np.arange(1, m + 1))
    out = np.empty(m)
    out[order] = np.minimum.accumulate(stepped[::-1])[::-1]
    return out


def bh_adjust_distinct(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``bh_adjust`` of a family given as its distinct p-values (ascending) with their
    multiplicities: tied values share the rank of the last of them, as the step-up gives."""
    values = np.asarray(values, dtype=float)
    counts = np.asarray(counts, dtype=np.int64)
    m = int(counts.sum())
    if m == 0:
        return values
    last = np.cumsum(counts)
    stepped = np.minimum(1.0, values * m / np.maximum(last, 1))
    return np.minimum.accumulate(stepped[::-1])[::-1]


def bh_edges(only: np.ndarray, n_items: int, alpha: float, cells: Any = None) -> np.ndarray:
    """``above[a, b]``: a is identified above b (BH over every pair's two-sided sign test on
    ``only[a, b]`` v ``only[b, a]``, in the direction of the larger count). By cell when the
    cells are few (a board of thousands of models over a hundred items), else pair by pair.
    ``cells``: the counts' ``identified.pair_cells`` when at hand (the order tested them)."""
    M = only.shape[0]
    if M < 2:
        return np.zeros((M, M), dtype=bool)
    width = n_items + 1
    if width * width <= CELL_TABLE_MAX:
        code, ordered, x, y, p = pair_cells(only, n_items) if cells is None else cells
        values, which = np.unique(p, return_inverse=True)
        per_value = np.bincount(which, weights=ordered, minlength=values.size)
        adj = bh_adjust_distinct(values, np.rint(per_value).astype(np.int64) // 2)[which]
        table = np.zeros(width * width, dtype=bool)
        table[x * width + y] = (exact_array(adj) <= exact_array(alpha)) & (x > y)
        return table[code]
    iu, ju = np.triu_indices(M, k=1)
    a, b = only[iu, ju], only[ju, iu]
    reject = exact_array(bh_adjust(sign_test_p(a, b))) <= exact_array(alpha)
    above = np.zeros((M, M), dtype=bool)
    up, down = reject & (a > b), reject & (b > a)
    above[iu[up], ju[up]] = True
    above[ju[down], iu[down]] = True
    return above


def board_ranks(above: np.ndarray) -> np.ndarray:
    """``rank[m] = 1 + #models identified above m``."""
    return 1 + above.sum(axis=0).astype(np.int64)


#: what the board's CI is (its JSON ``ci_kind``): one 95% interval per model, not simultaneous
#: over the board (of M such intervals about 5% of M miss, and two disjoint ones separate no pair:
#: the rank column does, by its own tests).
CI_KIND = "marginal"


def wilson_arrays(p: np.ndarray, n: np.ndarray | int, z: float = 1.959963984540054) -> np.ndarray:
    """The Wilson score interval ``{mu: (p - mu)^2 <= z^2 mu (1 - mu) / n}`` of each mean ``p``
    over ``n`` observations (one count for all, or one per mean), as a ``(len(p), 2)`` array;
    ``[0, 1]`` where ``n = 0``. Its width is never 0 for ``n > 0`` (at ``p = 1`` it is
    ``[n / (n + z^2), 1]``)."""
    p = np.clip(np.asarray(p, dtype=np.float64), 0.0, 1.0)
    n = np.broadcast_to(np.asarray(n, dtype=np.float64), p.shape)
    safe = np.where(n > 0, n, 1.0)
    zz = z * z / safe
    centre = (p + zz / 2) / (1 + zz)
    half = z * np.sqrt(p * (1 - p) / safe + zz / (4 * safe)) / (1 + zz)
    # it holds p (and reaches 0 at p = 0, 1 at p = 1) exactly, whatever the rounding
    lo = np.where(p == 0.0, 0.0, np.clip(np.minimum(centre - half, p), 0.0, 1.0))
    hi = np.where(p == 1.0, 1.0, np.clip(np.maximum(centre + half, p), 0.0, 1.0))
    return np.stack([np.where(n > 0, lo, 0.0), np.where(n > 0, hi, 1.0)], axis=-1)


def mean_ci(right: np.ndarray, n_configs: int, z: float = 1.959963984540054) -> tuple[np.ndarray, np.ndarray]:
    """Harness-averaged accuracy per model and its 95% CI over items (AUDITS v5, docs/audits.md
    "The board"): ``a_i = R[m, i] / K`` (``R`` the configs under which m gets item i right), the
    mean over the ``N`` items and the Wilson-type score interval of that mean, the values of ``mu``
    with ``(mean - mu)^2 <= z^2 mu (1 - mu) / N``. ``mu (1 - mu)`` bounds the variance of any score
    in ``[0, 1]`` with mean ``mu`` (``a^2 <= a``), with equality for 0/1 scores: with one
    configuration it is the Wilson interval, with more it is conservative. Never of width 0 when
    ``N > 0`` (the Wald interval ``mean +- z sd / sqrt(N)`` it replaces was ``[1, 1]`` for a model
    right on every item). Marginal: one interval per model (``CI_KIND``)."""
    a = np.asarray(right, dtype=np.float64) / max(n_configs, 1)
    N = a.shape[1]
    mean = a.mean(axis=1) if N else np.zeros(a.shape[0])
    return mean, wilson_arrays(mean, N, z)


__all__ = ["CI_KIND", "RULE", "bh_adjust", "bh_adjust_distinct", "bh_edges", "board_ranks", "mean_ci", "wilson_arrays"]
