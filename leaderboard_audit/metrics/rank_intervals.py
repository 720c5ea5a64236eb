"""Simultaneous confidence intervals for ranks (AUDITS v5, docs/audits.md "The board").

In the manner of Mogstad, Romano, Shaikh and Wilhelm, "Inference for ranks with applications
to mobility across neighbourhoods and academic achievement across countries" (Review of
Economic Studies 2024; the R package csranks): confidence intervals for every pairwise
difference of the models' scores that hold simultaneously at level ``1 - alpha``, and each
model's rank interval read off them:

* the score is the harness-averaged accuracy ``theta_m = mean_i a[m, i]`` (``a[m, i]`` the
  accuracy over the configurations of item i; with one configuration, the bit);
* the items are resampled with replacement (the same items for every model: the comparison is
  paired); ``c`` is the ``1 - alpha`` quantile over the resamples of the largest studentized
  difference ``max_{m, j} |d*_m - d*_j| / (se_m + se_j)``, ``d*_m`` the resample's score less
  the observed one and ``se_m`` the score's standard error over items. Then, with probability
  about ``1 - alpha``, every difference lies in ``theta_m - theta_j +/- c (se_m + se_j)`` at once;
* model j is **separated above** m when ``theta_j - c se_j > theta_m + c se_m``; m's rank
  interval is ``[1 + #{j separated above m}, M - #{j separated below m}]``, which holds the
  true ranks of every model at once whenever the differences' intervals do.

On boards of at most ``PAIRWISE_MAX`` models each pair is studentized by its own standard error
(the spread of the paired differences over items, as csranks does): models that share item
difficulty differ far less than their scores vary, so this is what makes the intervals narrow.
Larger boards studentize by ``se_m + se_j`` (at least the difference's own standard error,
whatever the correlation): the largest ratio over all pairs is then found in O(M log) per
resample by bisection instead of O(M^2) (a 4,000-model board has 8 million pairs). Both take at
least the Bonferroni normal value (``bonferroni_floor``). Coverage and widths:
``benchmarks/bench_rank_intervals.py``.

The printed rank is the best rank raised to the running maximum down the board (``point_ranks``),
so it never puts a lower score above a higher one.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .rng import rng_for

#: item resamples for the critical value (AUDITS v5); the quantile's Monte-Carlo error at 0.95
#: is about 0.007 in probability
RESAMPLES = 1000
#: resamples drawn per block (memory: M x N x block weights as float32 products)
BLOCK = 100


def item_scores(S: np.ndarray) -> np.ndarray:
    """(M, N) each model's accuracy on each item averaged over the configurations."""
    return np.asarray(S, dtype=np.float64).mean(axis=2)


def resample_counts(rng: np.random.Generator, N: int, b: int) -> np.ndarray:
    """(b, N) float32: how many times each of N items is drawn in each of b resamples of N items
    with replacement (multinomial; by drawing the indices and counting them, four times faster
    than ``Generator.multinomial`` at N = 3,679)."""
    picks = rng.integers(0, N, size=(b, N)) + (np.arange(b) * N)[:, None]
    return np.bincount(picks.ravel(), minlength=b * N).reshape(b, N).astype(np.float32)


def score_sds(a: np.ndarray) -> np.ndarray:
    """(M,) the standard error of each model's score over items: ``sd(a[m]) / sqrt(N)``."""
    N = a.shape[1]
    return a.std(axis=1, ddof=1) / np.sqrt(N) if N > 1 else np.zeros(a.shape[0])


def _max_ratio(dev: np.ndarray, se: np.ndarray, steps: int = 48) -> np.ndarray:
    """Per column of ``dev`` (M x b), ``max_{m, j} (dev_m - dev_j) / (se_m + se_j)`` without the
    M x M pairs: the largest t with ``max_m(dev_m - t se_m) > min_j(dev_j + t se_j)`` (both
    sides move monotonely in t), by bisection. A pair of models whose scores never vary
    (``se`` 0 for both) has no deviation, so it never sets the maximum."""
    lo = np.zeros(dev.shape[1])
    spread = dev.max(axis=0) - dev.min(axis=0)
    positive = se[se > 0]
    if positive.size == 0:
        return lo
    hi = spread / positive.min() + 1.0
    s = se[:, None]
    for _ in range(steps):
        mid = (lo + hi) / 2
        ok = (dev - mid * s).max(axis=0) > (dev + mid * s).min(axis=0)
        lo = np.where(ok, mid, lo)
        hi = np.where(ok, hi, mid)
    return lo


def resampled_quantile(
    a: np.ndarray, alpha: float, seed: int, key: str, stat: Callable[[np.ndarray], np.ndarray]
) -> float:
    """The ``1 - alpha`` quantile over ``RESAMPLES`` item resamples of ``stat(dev)`` (``dev`` the
    M x b resampled scores less the observed ones, a block of b resamples at a time; ``stat``
    gives one value per column), and at least ``bonferroni_floor``: the critical value of both
    studentizations (``critical_value``, ``board_intervals``)."""
    M, N = a.shape
    rng = rng_for(seed, key)
    theta = a.mean(axis=1)
    a32 = a.astype(np.float32)
    stats = np.zeros(RESAMPLES)
    for start in range(0, RESAMPLES, BLOCK):
        b = min(BLOCK, RESAMPLES - start)
        counts = resample_counts(rng, N, b)  # b x N: the resampled means are one product
        dev = (a32 @ counts.T).astype(np.float64) / N - theta[:, None]  # M x b
        stats[start : start + b] = stat(dev)
    return max(float(np.quantile(stats, 1.0 - alpha, method="higher")), bonferroni_floor(M, alpha))


def critical_value(a: np.ndarray, alpha: float, seed: int, key: str = "rank-intervals") -> float:
    """``c``: the ``1 - alpha`` quantile over item resamples of the largest studentized
    difference ``max_{m, j} |d*_m - d*_j| / (se_m + se_j)`` (``d*_m`` a resampled score less the
    observed one), and at least ``bonferroni_floor``; every pair's interval ``theta_m - theta_j
    +/- c (se_m + se_j)`` then holds at once with probability about ``1 - alpha``. 0 with one
    model or one item."""
    M, N = a.shape
    if M < 2 or N < 2:
        return 0.0
    se = score_sds(a)
    return resampled_quantile(a, alpha, seed, key, lambda dev: _max_ratio(dev, se))


def bonferroni_floor(M: int, alpha: float) -> float:
    """The normal critical value of Bonferroni over every ordered pair, ``z_{1 - alpha / (M (M - 1))}``:
    a pair's difference over ``se_m + se_j`` is at most its own z-score (the difference's
    standard error is at most ``se_m + se_j`` whatever the two scores' correlation), so this bounds
    the chance of any false separation by alpha without the resampling. The bootstrap's quantile
    alone covered 80-91% on null boards of 100 and 1,000 models at one configuration (the tail of
    the largest of a million studentized differences is where resampling 100 binary items is
    poorest); the larger of the two is used (benchmarks/bench_rank_intervals.py)."""
    from statistics import NormalDist

    pairs = M * (M - 1)
    return NormalDist().inv_cdf(1.0 - alpha / pairs) if pairs else 0.0


def rank_intervals(theta: np.ndarray, se: np.ndarray, c: float) -> tuple[np.ndarray, np.ndarray]:
    """(best, worst) rank per model: ``1 + #{j separated above m}`` and ``M - #{j separated
    below m}``, where j is separated above m when ``theta_j - c se_j > theta_m + c se_m``, by
    sorting (no M x M matrix)."""
    t = np.asarray(theta, dtype=np.float64)
    w = c * np.asarray(se, dtype=np.float64)
    M = t.size
    eps = 1e-12  # differences equal to the bound up to rounding are not separations
    lows, highs = np.sort(t - w), np.sort(t + w)
    above = M - np.searchsorted(lows, t + w + eps, side="right")  # theta_j - w_j > theta_m + w_m
    below = np.searchsorted(highs, t - w - eps, side="left")  # theta_j + w_j < theta_m - w_m
    return 1 + above, M - below


def point_ranks(theta: np.ndarray, best: np.ndarray) -> np.ndarray:
    """The printed rank: each model's best rank, raised to the largest best rank of any model
    with a higher or equal score (a running maximum down the board in score order), so a lower
    score is never printed above a higher one. The interval [best, worst] is what covers."""
    t = np.asarray(theta, dtype=np.float64)
    order = np.lexsort((np.arange(t.size), -t))
    raised = np.maximum.accumulate(np.asarray(best)[order])
    out = np.empty_like(raised)
    out[order] = raised
    # equal scores share the largest rank their group reached
    _, inv = np.unique(-t, return_inverse=True)
    top = np.zeros(inv.max() + 1 if inv.size else 0, dtype=out.dtype)
    np.maximum.at(top, inv, out)
    return top[inv] if inv.size else out


def separated(theta: np.ndarray, se: np.ndarray, c: float, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """Whether ``hi[j]`` is separated above ``lo[j]`` (index arrays)."""
    t = np.asarray(theta, dtype=np.float64)
    w = c * np.asarray(se, dtype=np.float64)
    return t[hi] - w[hi] > t[lo] + w[lo] + 1e-12


#: boards of at most this many models studentize each pair by its own standard error (the paired
#: differences' spread over items: models that share item difficulty differ far less than their
#: scores vary); larger boards by ``se_m + se_j`` (no M x M work per resample)
PAIRWISE_MAX = 200


def pair_sds(a: np.ndarray) -> np.ndarray:
    """(M, M) the standard error of each pairwise score difference over items:
    ``sd(a[m] - a[j]) / sqrt(N)`` (0 on the diagonal)."""
    M, N = a.shape
    if N < 2:
        return np.zeros((M, M))
    c = a - a.mean(axis=1, keepdims=True)
    var = (c**2).sum(axis=1) / (N - 1)
    cov = (c @ c.T) / (N - 1)
    d = np.maximum(var[:, None] + var[None, :] - 2 * cov, 0.0)
    return np.sqrt(d / N)


def board_intervals(
    a: np.ndarray, alpha: float, seed: int, key: str = "rank-intervals"
) -> tuple[np.ndarray, np.ndarray, Callable[[np.ndarray, np.ndarray], np.ndarray]]:
    """(best, worst, above) for the item scores ``a`` (M x N): each model's simultaneous rank
    interval, and ``above(hi, lo)``, whether ``hi[j]`` is separated above ``lo[j]`` (index
    arrays) by the same bound. Boards of at most ``PAIRWISE_MAX`` models: every pair
    studentized by its own standard error (the largest ``|d*_m - d*_j| / se_mj`` over pairs,
    per resample); larger ones: ``critical_value`` with ``se_m + se_j``, no M x M matrix."""
    M, N = a.shape
    theta = a.mean(axis=1)
    if M > PAIRWISE_MAX:
        se = score_sds(a)
        c = critical_value(a, alpha, seed, key)
        best, worst = rank_intervals(theta, se, c)
        return best, worst, lambda hi, lo: separated(theta, se, c, hi, lo)
    S = pair_sds(a)
    sep = np.zeros((M, M), dtype=bool)
    if M >= 2 and N >= 2:
        iu, ju = np.triu_indices(M, k=1)
        live = S[iu, ju] > 0
        iu, ju, s_pair = iu[live], ju[live], S[iu, ju][live][:, None]

        def largest(dev: np.ndarray) -> np.ndarray:
            if not iu.size:
                return np.zeros(dev.shape[1])
            return (np.abs(dev[iu] - dev[ju]) / s_pair).max(axis=0)

        c = resampled_quantile(a, alpha, seed, key, largest)
        # [j, m]: theta_j - theta_m beyond the bound; a pair whose difference never varies over
        # items (se 0) is separated by any difference
        sep = theta[:, None] - theta[None, :] > c * S + 1e-12
        np.fill_diagonal(sep, False)
    best = 1 + sep.sum(axis=0)
    worst = M - sep.sum(axis=1)
    return best, worst, lambda hi, lo: sep[hi, lo]


__all__ = [
    "PAIRWISE_MAX",
    "RESAMPLES",
    "board_intervals",
    "pair_sds",
    "resampled_quantile",
    "bonferroni_floor",
    "critical_value",
    "item_scores",
    "point_ranks",
    "rank_intervals",
    "score_sds",
    "separated",
]
