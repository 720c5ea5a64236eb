"""Decided per-model quantities of an incomplete grid (issue 44, item 2; pure numpy).

A quantity is *decided* when its value, or the side of a threshold it falls on, is the
same whatever the missing cells hold. Here, per model:

* robust status of each (model, item): known once a failure is observed, or all K
  configurations are observed right (``robust_status``);
* accuracy under each configuration: bounds counting every unknown cell wrong (low) and
  right (high) (``accuracy_bounds``);
* the band (max minus min accuracy over configurations): the smallest and largest spread
  any completion can give (``band_bounds``);
* robust accuracy: the robust pairs known (low), plus the undecided ones (high).

The verdict rules built on them live in checks/incomplete.py (docs/audits.md, "Incomplete
grids"). ``missing`` is a records set's ``Records.missing`` (None: complete, every bound is
then the value itself).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .exact import le_array
from .special import chi2_sf
from .identified import holm_adjust

ROBUST, NOT_ROBUST, UNDECIDED = 1, 0, -1


def _observed(correct: np.ndarray, missing: np.ndarray | None) -> np.ndarray:
    return np.ones(correct.shape, dtype=bool) if missing is None else missing == 0


def robust_status(correct: np.ndarray, missing: np.ndarray | None) -> np.ndarray:
    """(M, N) int8: ROBUST when all K cells are observed right, NOT_ROBUST when an observed
    cell is wrong, UNDECIDED otherwise."""
    obs = _observed(correct, missing)
    failed = (obs & ~correct).any(axis=2)
    all_right = (obs & correct).all(axis=2)
    out = np.full(correct.shape[:2], UNDECIDED, dtype=np.int8)
    out[all_right] = ROBUST
    out[failed] = NOT_ROBUST
    return out


def accuracy_bounds(correct: np.ndarray, missing: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(M, K) low and high accuracy per model and configuration: unknown cells counted
    wrong, then right (``count_bounds`` over N)."""
    lo, hi = count_bounds(correct, missing)
    N = correct.shape[1]
    return lo / N, hi / N


def band_bounds(lo: np.ndarray, hi: np.ndarray, possible: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(M,) smallest and largest spread (max minus min over configurations) of accuracies
    that lie in ``[lo, hi]``: the shortest range meeting every interval, and the longest;
    with ``possible`` (``possible_configs``), over each model's possible configurations only."""
    if possible is not None:
        lo_max, lo_min = np.where(possible, lo, -np.inf).max(axis=1), np.where(possible, lo, np.inf).min(axis=1)
        hi_max, hi_min = np.where(possible, hi, -np.inf).max(axis=1), np.where(possible, hi, np.inf).min(axis=1)
    else:
        lo_max, lo_min, hi_max, hi_min = lo.max(axis=1), lo.min(axis=1), hi.max(axis=1), hi.min(axis=1)
    return np.maximum(0.0, lo_max - hi_min), hi_max - lo_min


def robust_accuracy_bounds(status: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(M,) low and high robust accuracy from ``robust_status``."""
    N = status.shape[1]
    robust = (status == ROBUST).sum(axis=1)
    undecided = (status == UNDECIDED).sum(axis=1)
    return robust / N, (robust + undecided) / N


def side(lo: np.ndarray, hi: np.ndarray, threshold: float) -> np.ndarray:
    """1 where the quantity is certainly above ``threshold``, 0 where certainly at or below
    it, -1 where the missing cells decide (undecided)."""
    out = np.full(np.shape(lo), -1, dtype=np.int8)
    out[np.asarray(lo) > threshold] = 1
    out[np.asarray(hi) <= threshold] = 0
    return out


NOT_POSSIBLE_CODE = 2  # records/missing.py's NOT_POSSIBLE (metrics never import records)


def possible_configs(missing: np.ndarray | None, shape: tuple[int, int, int]) -> np.ndarray:
    """(M, K) bool: configuration k is possible for model m unless every one of its cells is
    ``not_possible`` (likelihood scoring behind an API): such a model is compared only on the
    configurations it has."""
    M, _, K = shape
    if missing is None:
        return np.ones((M, K), dtype=bool)
    return ~(missing == NOT_POSSIBLE_CODE).all(axis=1)


def count_bounds(correct: np.ndarray, missing: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(M, K) integer low and high items right per model and configuration: unknown cells
    counted wrong, then right (``accuracy_bounds`` times N, exact integers)."""
    obs = _observed(correct, missing)
    right = (correct & obs).sum(axis=1)
    return right, right + (~obs).sum(axis=1)


def _min_spread_levels(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Per row, the level t of the least-spread point ``clip(t, lo, hi)`` of the box (a convex
    problem): t is the mean of that point, found by bisection on the decreasing
    ``mean(clip(t)) - t``."""
    a, b = lo.min(axis=1).astype(float), hi.max(axis=1).astype(float)
    for _ in range(100):
        t = (a + b) / 2
        up = np.clip(t[:, None], lo, hi).mean(axis=1) > t
        a, b = np.where(up, t, a), np.where(up, b, t)
    return (a + b) / 2


def _min_spread_sq(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Per row, the least ``sum_k (x_k - mean x)^2`` over ``lo <= x <= hi``: at
    ``clip(t, lo, hi)`` (``_min_spread_levels``)."""
    x = np.clip(_min_spread_levels(lo, hi)[:, None], lo, hi)
    return ((x - x.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)


def _max_spread_sq(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """An upper bound of ``sum_k (x_k - mean x)^2`` over the box: for any c the sum is at most
    ``sum_k (x_k - c)^2`` (the mean minimises it), and that is largest at an end of each
    interval; c at the box's centre."""
    c = ((lo + hi) / 2).mean(axis=1, keepdims=True)
    return np.maximum((lo - c) ** 2, (hi - c) ** 2).sum(axis=1)


def _fill_level(lo: np.ndarray, hi: np.ndarray, w: np.ndarray, total: np.ndarray) -> np.ndarray:
    """Per entry of ``total`` (B,), the level t with ``sum_j w_j clip(t, lo_j, hi_j) = total``
    (bisection; ``total`` inside the box's range): the water-filling point, which makes the
    values as even as the box allows at that sum."""
    a = np.full(total.shape, float(lo.min()))
    b = np.full(total.shape, float(hi.max()))
    for _ in range(60):
        t = (a + b) / 2
        over = (w[None, :] * np.clip(t[:, None], lo[None, :], hi[None, :])).sum(axis=1) > total
        a, b = np.where(over, a, t), np.where(over, t, b)
    return (a + b) / 2


def _q_low_by_total(
    col_lo: np.ndarray, col_hi: np.ndarray, r_lo: np.ndarray, r_hi: np.ndarray, k: int, pieces: int = 64
) -> float:
    """A lower bound of Q that keeps the tie between its numerator and denominator: both sum
    to the same total ``T = sum_k C_k = sum_i R_i``. For a completion with total T,
    ``S >= S_lo(T)`` (the least column spread with that sum: columns water-filled to one level)
    and ``D <= D_hi(T)`` (the largest ``sum_i R_i (K - R_i)`` with that sum: rows water-filled,
    ``sum R_i^2`` least when the R_i are as even as their boxes allow), over real values, which
    include the integer ones. T's range is cut into ``pieces`` intervals; on each, the least S
    is at the point nearest the unconstrained minimiser of the spread (a convex problem whose
    optimum outside the interval lies on its boundary), and the largest D, concave in T, at
    the point nearest its maximiser (every row at K / 2 clipped to its box). The bound is the
    least ratio over the intervals (NaN: no bound here)."""
    t_lo, t_hi = float(col_lo.sum()), float(col_hi.sum())
    if t_hi <= t_lo:
        return np.nan  # nothing unknown: the caller's bound is exact already
    rows, w = np.unique(np.stack([r_lo, r_hi]), axis=1, return_counts=True)
    lo_i, hi_i, w = rows[0].astype(float), rows[1].astype(float), w.astype(float)
    ones = np.ones(len(col_lo))
    t_f = float(np.clip(_min_spread_levels(col_lo[None, :], col_hi[None, :])[0], col_lo, col_hi).sum())
    t_g = float((w * np.clip(k / 2.0, lo_i, hi_i)).sum())
    edges = np.linspace(t_lo, t_hi, pieces + 1)
    a, b = edges[:-1], edges[1:]
    t_s, t_d = np.clip(t_f, a, b), np.clip(t_g, a, b)
    x = np.clip(_fill_level(col_lo, col_hi, ones, t_s)[:, None], col_lo[None, :], col_hi[None, :])
    s_lo = ((x - x.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    r = np.clip(_fill_level(lo_i, hi_i, w, t_d)[:, None], lo_i[None, :], hi_i[None, :])
    d_hi = (w[None, :] * r * (k - r)).sum(axis=1)
    # the bisection leaves the sums a hair off each interval's point: widen D, shrink S
    d_hi = d_hi * (1 + 1e-9) + 1e-9
    s_lo = np.maximum(s_lo * (1 - 1e-9) - 1e-9, 0.0)
    return float(((k - 1) * k * s_lo / d_hi).min())


def cochran_q_bounds(
    correct: np.ndarray, missing: np.ndarray | None, possible: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(M,) a lower and an upper bound of each model's Cochran's Q (metrics/harness_effects.py,
    ``cochran_q_p``) over every completion of its missing cells, on its possible configurations.

    ``Q = (K - 1) K S / D`` with ``S = sum_k (C_k - mean C)^2`` and ``D = sum_i R_i (K - R_i)``:
    S is bounded over the box of the column counts, D item by item (each item's R_i lies in
    ``[observed right, observed right + unknown]``). NaN low bound where D can only be 0 (Q
    undefined in every completion); inf high bound where D can be 0. The low bound is also
    taken with S and D tied through their common total (``_q_low_by_total``), whichever is
    larger: both hold for every completion."""
    M, N, K = correct.shape
    possible = np.ones((M, K), dtype=bool) if possible is None else possible
    obs = _observed(correct, missing)
    q_lo = np.full(M, np.nan)
    q_hi = np.full(M, np.nan)
    for m in range(M):
        ks = np.flatnonzero(possible[m])
        k = ks.size
        if k < 2:
            continue
        o, c = obs[m][:, ks], correct[m][:, ks]
        r_lo = (c & o).sum(axis=1)
        r_hi = r_lo + (~o).sum(axis=1)
        half = np.clip(np.full(N, k / 2.0), r_lo, r_hi)
        best = np.maximum(np.floor(half), r_lo), np.minimum(np.ceil(half), r_hi)
        d_hi = np.maximum(best[0] * (k - best[0]), best[1] * (k - best[1])).sum()
        d_lo = np.minimum(r_lo * (k - r_lo), r_hi * (k - r_hi)).sum()
        col_lo = (c & o).sum(axis=0)[None, :].astype(float)
        col_hi = col_lo + (~o).sum(axis=0)[None, :]
        s_lo = float(_min_spread_sq(col_lo, col_hi)[0])
        s_hi = float(_max_spread_sq(col_lo, col_hi)[0])
        if d_hi > 0:
            q_lo[m] = (k - 1) * k * s_lo / d_hi
            tied = _q_low_by_total(col_lo[0], col_hi[0], r_lo, r_hi, k)
            if np.isfinite(tied):
                q_lo[m] = max(q_lo[m], tied)
        q_hi[m] = (k - 1) * k * s_hi / d_lo if d_lo > 0 else np.inf
    return q_lo, q_hi


def cochran_p_bounds(
    correct: np.ndarray, missing: np.ndarray | None, possible: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(M,) the largest and the smallest p-value of each model's Cochran's Q over every
    completion (``cochran_q_bounds``; chi-square on the model's possible configurations less
    one). Q undefined in some completion (every item all right or all wrong) gives p = 1 there,
    so the largest is then 1; an unbounded Q makes the smallest 0."""
    M, _, K = correct.shape
    possible = np.ones((M, K), dtype=bool) if possible is None else possible
    q_lo, q_hi = cochran_q_bounds(correct, missing, possible)
    df = np.maximum(possible.sum(axis=1) - 1, 1)
    p_max, p_min = np.ones(M), np.ones(M)
    fin = np.isfinite(q_lo) & np.isfinite(q_hi)
    p_max[fin] = chi2_sf(q_lo[fin], df[fin])
    known = ~np.isnan(q_hi)
    p_min[known] = np.where(np.isinf(q_hi[known]), 0.0, chi2_sf(np.nan_to_num(q_hi[known]), df[known]))
    return p_max, p_min


class BandSides(NamedTuple):
    """``band_sides``: per model, the spread's bounds and the status every completion gives,
    if one does (at most one of ``is_pass``, ``is_fail``, ``is_warn`` is true)."""

    s_lo: np.ndarray
    s_hi: np.ndarray
    sig_never: np.ndarray  # Cochran's Q is significant (after Holm) in no completion
    is_pass: np.ndarray
    is_fail: np.ndarray
    is_warn: np.ndarray

    @property
    def decided(self) -> np.ndarray:
        return self.is_pass | self.is_fail | self.is_warn


def band_sides(
    correct: np.ndarray,
    missing: np.ndarray | None,
    possible: np.ndarray,
    *,
    band_pass: float,
    band_warn: float,
    alpha: float,
) -> BandSides:
    """The band verdict's exact rule on an incomplete grid (docs/audits.md, "Incomplete
    grids"), for every model of one scope at once: pass when the spread's largest value is at
    most ``band_pass``; fail when its smallest is above ``band_warn`` and Cochran's Q is
    significant after Holm over the scope's models in every completion; warn when its
    smallest is above ``band_pass`` and its largest at most ``band_warn``, or Q is significant
    in no completion. Holm's adjusted p never falls when a raw p rises, so Holm over every
    model's largest p bounds each adjusted p from above, over the smallest from below."""
    N = correct.shape[1]
    lo, hi = count_bounds(correct, missing)
    s_lo, s_hi = band_bounds(lo / N, hi / N, possible)
    p_max, p_min = cochran_p_bounds(correct, missing, possible)
    sig_sure = le_array(holm_adjust(p_max), alpha)
    sig_never = ~le_array(holm_adjust(p_min), alpha)
    is_pass = le_array(s_hi, band_pass)
    is_fail = ~is_pass & ~le_array(s_lo, band_warn) & sig_sure
    is_warn = ~is_pass & ~is_fail & ~le_array(s_lo, band_pass) & (le_array(s_hi, band_warn) | sig_never)
    return BandSides(s_lo, s_hi, sig_never, is_pass, is_fail, is_warn)


def right_count_bounds(
    correct: np.ndarray, missing: np.ndarray | None, configs: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(M, N) low and high ``R[m, i]``, the configurations (of ``configs``, default all) under
    which m gets item i right: unknown cells counted wrong, then right."""
    obs = _observed(correct, missing)
    if configs is not None:
        obs, correct = obs[:, :, configs], correct[:, :, configs]
    lo = (correct & obs).sum(axis=2)
    return lo, lo + (~obs).sum(axis=2)


def above_bounds(r_lo: np.ndarray, r_hi: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For the pairs (xs[j], ys[j]): the fewest and most items on which x's harness-averaged
    accuracy is above y's (metrics/averaged.py ``above``) over every completion. The fewest is
    reached with x low and y high on every item at once, the completion that also gives the
    most items below: one completion is least favourable to "x above y" on both counts."""
    lo = (r_lo[xs] > r_hi[ys]).sum(axis=1)
    hi = (r_hi[xs] > r_lo[ys]).sum(axis=1)
    return lo, hi


def sign_p_range(
    x_lo: np.ndarray, x_hi: np.ndarray, y_lo: np.ndarray, y_hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The exact two-sided sign test's p for "x beats y" (``one_sided``: 1 unless x > y), its
    largest value over the counts' box (x low, y high) and its smallest (x high, y low): the
    p falls as x rises and as y falls while x > y."""
    from .harness_effects import one_sided

    return one_sided(x_lo, y_hi), one_sided(x_hi, y_lo)


def kendall_tau_bounds(x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[float, float] | None:
    """Bounds of Kendall's tau-b (metrics/kendall.py) between exact ``x`` and a ``y`` known only
    to lie in ``[lo, hi]`` (integer counts), over every ``y`` in the box; None when tau can be
    undefined (every pair tied in x, or possibly in y).

    ``tau = S / sqrt(n_x n_y)``: S (concordant minus discordant pairs) lies between the sure
    concordant pairs less every other untied one and the reverse; ``n_y`` (pairs not tied in y)
    between the pairs that cannot tie and those that do not surely tie. Each end takes the
    denominator that moves it outward, so the bounds hold for S and n_y jointly."""
    x = np.asarray(x, dtype=float)
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    iu, ju = np.triu_indices(len(x), k=1)
    dx = np.sign(x[iu] - x[ju])
    d_lo = lo[iu] - hi[ju]  # y_a - y_b lies in [d_lo, d_hi]
    d_hi = hi[iu] - lo[ju]
    untied = dx != 0
    n_x = int(untied.sum())
    sure_c = untied & (((dx > 0) & (d_lo > 0)) | ((dx < 0) & (d_hi < 0)))
    sure_d = untied & (((dx > 0) & (d_hi < 0)) | ((dx < 0) & (d_lo > 0)))
    s_lo = int(sure_c.sum()) - (n_x - int(sure_c.sum()))
    s_hi = (n_x - int(sure_d.sum())) - int(sure_d.sum())
    can_tie = (d_lo <= 0) & (d_hi >= 0)
    sure_tie = (d_lo == 0) & (d_hi == 0)
    ny_min = int((~can_tie).sum())
    ny_max = len(iu) - int(sure_tie.sum())
    if n_x == 0 or ny_min == 0:
        return None

    def tau(s: int, ny: int) -> float:
        return float(np.clip(s / np.sqrt(n_x * ny), -1.0, 1.0))

    t_lo = tau(s_lo, ny_max) if s_lo >= 0 else tau(s_lo, ny_min)
    t_hi = tau(s_hi, ny_min) if s_hi >= 0 else tau(s_hi, ny_max)
    return t_lo, t_hi


def srs_interval(
    values: np.ndarray, population: int, z: float = 1.959963984540054
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Design-based estimate of a mean over ``population`` items from a uniform sample without
    replacement: ``values`` is (..., n) of 0/1 (or bounded) values on the sampled items. Returns
    (estimate, low, high) of the 95% Wilson interval with the finite-population correction (its
    effective n is n / fpc): the sample mean is unbiased only because every item had the same
    inclusion probability n / N, so only cells of the random sample enter."""
    v = np.asarray(values, dtype=float)
    n = v.shape[-1]
    est = v.mean(axis=-1) if n else np.full(v.shape[:-1], np.nan)
    if n == 0:
        return est, np.zeros_like(est), np.ones_like(est)
    fpc = (population - n) / (population - 1) if population > 1 else 0.0
    if fpc <= 0:
        return est, est.copy(), est.copy()
    ne = n / fpc
    z2 = z * z
    centre = (est + z2 / (2 * ne)) / (1 + z2 / ne)
    half = z * np.sqrt(est * (1 - est) / ne + z2 / (4 * ne * ne)) / (1 + z2 / ne)
    return est, np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


__all__ = [
    "NOT_ROBUST",
    "ROBUST",
    "UNDECIDED",
    "above_bounds",
    "accuracy_bounds",
    "band_bounds",
    "cochran_q_bounds",
    "count_bounds",
    "kendall_tau_bounds",
    "possible_configs",
    "right_count_bounds",
    "sign_p_range",
    "srs_interval",
    "robust_accuracy_bounds",
    "robust_status",
    "side",
]
