"""Is a harness effect beyond item sampling? The significance tests behind the v4 verdicts
(docs/audits.md, "AUDITS v4").

The paper's quantities (a band, a champion count, a reversing count) are descriptive: with a
few hundred items they are non-zero even when the configurations are exchangeable replicates
(the statistical review of 2026-12-04, T2-T5). A v4 verdict fails only when one of these tests
says the harness moved something beyond what item sampling explains:

* ``cochran_q_p``: per model, Cochran's Q over its K matched configurations ("every
  configuration has the same accuracy for this model"); the band's fail.
* ``config_discordance``: per pair of models and configuration, the items only one of the two
  gets right under that configuration; with ``sign_test_p`` that is the exact McNemar test of
  the pair under that configuration (champions: a challenger beats the reference winner;
  manufactured: a configuration reverses a printed pair).
* ``interaction_p``: per configuration, a heterogeneity test of the models' accuracy changes
  from the reference ("the configuration moves every model alike"); the axes fail.
* ``one_sided``: a two-sided sign-test p kept only in the direction a claim needs.

Everything is vectorized over models, pairs and configurations; the chi-square tail is
``special.chi2_sf`` (scipy's ``chdtrc`` agrees to
3e-12 relative; importing ``scipy.special`` took a fifth of a paper-sized audit).
"""

from __future__ import annotations

import numpy as np

from .identified import sign_test_p
from .special import chi2_sf

#: (pairs x configs x words) cells ANDed at once in ``config_discordance``
_BLOCK = 1 << 22


def cochran_q_p(counts: np.ndarray, row_square_sums: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cochran's Q per model and its p-value (chi-square, K - 1 degrees of freedom).

    ``counts[m, k]`` = items model m gets right under config k; ``row_square_sums[m] =
    sum_i R[m, i]^2`` with ``R[m, i]`` the configs under which m gets item i right.
    ``Q = (K - 1) (K sum_k C_k^2 - T^2) / (K T - sum_i R_i^2)``, T = sum_k C_k. Items right
    under every config or under none add nothing to either side, so a model with no
    config-fragile item has Q undefined: (NaN, p = 1). Graded outcomes: ``graded_harness_p``."""
    c = np.asarray(counts, dtype=np.float64)
    K = c.shape[1]
    T = c.sum(axis=1)
    num = (K - 1) * (K * (c * c).sum(axis=1) - T * T)
    den = K * T - np.asarray(row_square_sums, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return q, chi2_sf(q, max(K - 1, 1))


def graded_harness_p(S: np.ndarray, ref: int) -> tuple[np.ndarray, np.ndarray]:
    """On graded outcomes (docs/audits.md, "Graded outcomes"), per model: do its configurations'
    mean outcomes differ beyond item sampling? Hotelling's T^2 on the per-item contrasts
    ``D[i, k] = S[m, i, k] - S[m, i, ref]`` (k != ref): ``T^2 = N d' Sigma^+ d`` (d the mean
    contrast, Sigma their covariance over items), ``F = (N - p) / (p (N - 1)) T^2`` with
    ``(p, N - p)`` degrees of freedom, p the rank of Sigma. Cochran's Q assumes the
    configurations exchangeable within an item; graded configurations are not (a 3-way and a
    5-way reading of one verdict move together, two positions do not), and Q then alarmed
    in 25% of null grids (8 equal models, 2 positions x 2 scales; Holm over models), T^2 in
    under 5% (tests/checks/test_graded_planted.py). (statistic, p); (NaN, 1) where the
    contrasts never vary or N <= p."""
    from .special import f_sf

    M, N, K = S.shape
    stat = np.full(M, np.nan)
    p = np.ones(M)
    others = [k for k in range(K) if k != ref]
    if not others or N < 2:
        return stat, p
    for m in range(M):
        D = S[m][:, others] - S[m][:, ref : ref + 1]
        d = D.mean(axis=0)
        cov = np.atleast_2d(np.cov(D, rowvar=False))
        rank = int(np.linalg.matrix_rank(cov, tol=1e-10 * max(float(np.abs(cov).max()), 1e-300)))
        if rank == 0 or N <= rank:
            continue
        t2 = float(N * d @ np.linalg.pinv(cov, rcond=1e-10, hermitian=True) @ d)
        f = (N - rank) / (rank * (N - 1)) * t2
        d1, d2 = float(rank), float(N - rank)
        stat[m] = t2
        p[m] = f_sf(f, d1, d2)
    return stat, p


def config_discordance(words: np.ndarray, xs: np.ndarray, ys: np.ndarray, within: np.ndarray | None = None):
    """``(x_only, y_only)``, pairs x configs: items model ``xs[j]`` gets right under config k
    and ``ys[j]`` wrong (and the reverse), from ``per_model.config_words`` (models x configs x
    words); ``within``: the items to count, as one row of words (a random drop's kept items)."""
    xs = np.asarray(xs, dtype=np.intp)
    ys = np.asarray(ys, dtype=np.intp)
    P, (_, K, W) = xs.size, words.shape
    x_only = np.empty((P, K), dtype=np.int64)
    y_only = np.empty((P, K), dtype=np.int64)
    step = max(1, _BLOCK // max(1, K * W))
    for lo in range(0, P, step):
        hi = min(P, lo + step)
        a, b = words[xs[lo:hi]], words[ys[lo:hi]]
        if within is not None:
            a, b = a & within, b & within
        x_only[lo:hi] = np.bitwise_count(a & ~b).sum(axis=2, dtype=np.int64)
        y_only[lo:hi] = np.bitwise_count(b & ~a).sum(axis=2, dtype=np.int64)
    return x_only, y_only


def reference_discordance(words: np.ndarray, ref: int, within: np.ndarray | None = None):
    """``(x_only, y_only)``, models x configs: items a model gets right under config k and wrong
    under the reference ``ref``, and the reverse (0 at the reference itself)."""
    M, K, W = words.shape
    x_only = np.empty((M, K), dtype=np.int64)
    y_only = np.empty((M, K), dtype=np.int64)
    step = max(1, _BLOCK // max(1, K * W))
    for lo in range(0, M, step):
        hi = min(M, lo + step)
        a = words[lo:hi]
        r = a[:, ref : ref + 1]
        if within is not None:
            a, r = a & within, r & within
        x_only[lo:hi] = np.bitwise_count(a & ~r).sum(axis=2, dtype=np.int64)
        y_only[lo:hi] = np.bitwise_count(r & ~a).sum(axis=2, dtype=np.int64)
    return x_only, y_only


def graded_config_discordance(S: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``config_discordance`` on graded outcomes (docs/audits.md, "Graded outcomes"):
    ``x_only[j, k] = #{i: S[xs[j], i, k] > S[ys[j], i, k]}`` and the reverse. On 0/1 outcomes
    these are exactly the bits' discordant items, so the exact sign test (McNemar's) reads
    them as before; on graded ones it is the sign test of the paired outcome differences."""
    xs = np.asarray(xs, dtype=np.intp)
    ys = np.asarray(ys, dtype=np.intp)
    a, b = S[xs], S[ys]
    return (a > b).sum(axis=1, dtype=np.int64), (a < b).sum(axis=1, dtype=np.int64)


def graded_reference_discordance(S: np.ndarray, ref: int) -> tuple[np.ndarray, np.ndarray]:
    """``reference_discordance`` on graded outcomes: items whose outcome under config k is
    above the reference's, and below (0 at the reference itself)."""
    r = S[:, :, ref : ref + 1]
    return (S > r).sum(axis=1, dtype=np.int64), (S < r).sum(axis=1, dtype=np.int64)


def one_sided(x_only: np.ndarray, y_only: np.ndarray) -> np.ndarray:
    """The exact sign test's two-sided p where ``x_only > y_only`` (x beats y), else 1: the p of
    the claim "x is better than y" (a claim in the other direction is not evidence for it)."""
    x = np.asarray(x_only, dtype=np.int64)
    y = np.asarray(y_only, dtype=np.int64)
    p = sign_test_p(x.ravel(), y.ravel()).reshape(x.shape)
    return np.where(x > y, p, 1.0)


def interaction_p(counts: np.ndarray, x_only: np.ndarray, y_only: np.ndarray, n_items: int) -> np.ndarray:
    """Per configuration k, the p-value of "config k moves every model's accuracy alike".

    ``counts``: models x configs right counts; ``x_only[m, k]`` / ``y_only[m, k]``: items
    model m gets right under k and wrong under the reference, and the reverse (``config_
    discordance`` of each model with itself, k against the reference). Each model's change
    ``D_m = (x_only - y_only) / N`` has the paired variance ``(x + y - (x - y)^2 / N) / N^2``
    (floored at one discordant item, so a model with none has a finite weight); the
    heterogeneity statistic ``sum_m w_m (D_m - D_w)^2`` (inverse-variance weights, ``D_w`` their
    weighted mean) is chi-square with M - 1 degrees of freedom when every model changes alike.
    Items are shared by the models, which correlates their changes positively and makes the
    test conservative under a harness effect shared by all models."""
    x = np.asarray(x_only, dtype=np.float64)
    y = np.asarray(y_only, dtype=np.float64)
    M = x.shape[0]
    N = float(max(n_items, 1))
    d = (x - y) / N
    var = np.maximum((x + y - (x - y) ** 2 / N) / N**2, 1.0 / N**2)
    w = 1.0 / var
    dw = (w * d).sum(axis=0) / w.sum(axis=0)
    stat = (w * (d - dw) ** 2).sum(axis=0)
    if M < 2:
        return np.ones(x.shape[1])
    return chi2_sf(stat, M - 1)


__all__ = ["cochran_q_p", "config_discordance", "interaction_p", "one_sided", "reference_discordance"]
