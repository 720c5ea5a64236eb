"""The board's score CI (AUDITS v5, docs/audits.md "The board"; stats review 2026-12-07 U6).

The v4 interval was Wald's, ``mean +- z sd / sqrt(N)``: ``1.000 (1.000-1.000)`` for a model right
on all 102 items. v5: the Wilson-type score interval of the harness-averaged mean (the variance
bound ``mu (1 - mu)`` of a score in [0, 1]), the Wilson interval itself at one configuration.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from leaderboard_audit.metrics.board import CI_KIND, mean_ci, wilson_arrays
from leaderboard_audit.reports.leaderboard_rows import wilson

Z = 1.959963984540054


def wald(right: np.ndarray, K: int) -> np.ndarray:
    """The v4 interval, for the tests that show what it got wrong."""
    a = right / K
    mean = a.mean(axis=1)
    sd = a.std(axis=1, ddof=1) if a.shape[1] > 1 else np.zeros(a.shape[0])
    half = Z * sd / math.sqrt(a.shape[1])
    return np.stack([np.clip(mean - half, 0, 1), np.clip(mean + half, 0, 1)], axis=1)


def binom_pmf(n: int, p: float) -> np.ndarray:
    k = np.arange(n + 1)
    lg = np.array([math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1) for j in k])
    with np.errstate(divide="ignore"):
        logp = lg + k * math.log(p) + (n - k) * math.log1p(-p)
    return np.exp(logp)


@pytest.mark.parametrize("K", [1, 2, 26])
@pytest.mark.parametrize("N", [1, 2, 10, 102])
def test_no_interval_has_zero_width_when_there_are_items(K, N):
    rng = np.random.default_rng(N * 100 + K)
    right = np.vstack(
        [
            np.zeros(N, dtype=np.int64),  # wrong everywhere
            np.full(N, K),  # right everywhere: the review's 102/102 model
            np.full(N, K // 2),  # every item at the same share: sd 0 inside (0, 1)
            rng.integers(0, K + 1, N),
        ]
    )
    mean, ci = mean_ci(right, K)
    assert (ci[:, 1] > ci[:, 0]).all(), ci
    assert ((ci[:, 0] <= mean) & (mean <= ci[:, 1])).all()
    assert ((ci >= 0) & (ci <= 1)).all()
    assert (wald(right, K)[:2, 1] == wald(right, K)[:2, 0]).all() or N == 1  # v4: zero width at 0 and 1


def test_a_perfect_model_on_102_items_gets_the_wilson_interval():
    mean, ci = mean_ci(np.full((1, 102), 26), 26)
    assert mean[0] == 1.0 and ci[0, 1] == 1.0
    assert f"{ci[0, 0]:.3f}" == "0.964"  # the review's exact lower end, [0.964, 1]
    assert ci[0, 0] == pytest.approx(102 / (102 + Z * Z))


def test_one_configuration_is_the_wilson_interval():
    N = 102
    right = np.arange(N + 1)[:, None] > np.arange(N)[None, :]  # model k: right on k of the N items
    _, ci = mean_ci(right.astype(np.int64), 1)
    want = np.array([wilson(k, N) for k in range(N + 1)])
    np.testing.assert_allclose(ci, want, atol=1e-12)
    np.testing.assert_allclose(wilson_arrays(np.arange(N + 1) / N, N), want, atol=1e-12)


def test_no_items_gives_the_whole_range():
    mean, ci = mean_ci(np.zeros((3, 0), dtype=np.int64), 26)
    assert mean.tolist() == [0.0, 0.0, 0.0] and ci.tolist() == [[0.0, 1.0]] * 3


EDGE = [0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.95, 0.97, 0.98, 0.99, 0.995, 0.998]


@pytest.mark.parametrize("N", [50, 102, 480])
def test_coverage_near_0_and_1_one_configuration(N):
    """Exact coverage (a binomial sum, no simulation) at accuracies near 0 and 1: Wilson's dips to
    about 0.90 at a few of them and averages 0.935-0.955 over them; Wald's falls to 0.62 or below
    (a model right on every item has a zero-width interval)."""
    k = np.arange(N + 1)
    right = (k[:, None] > np.arange(N)[None, :]).astype(np.int64)
    _, ci = mean_ci(right, 1)
    old = wald(right, 1)
    cov, cov_old = [], []
    for p in EDGE:
        pmf = binom_pmf(N, p)
        cov.append(pmf[(ci[:, 0] <= p) & (p <= ci[:, 1])].sum())
        cov_old.append(pmf[(old[:, 0] <= p) & (p <= old[:, 1])].sum())
    assert min(cov) >= 0.9 and np.mean(cov) >= 0.93, dict(zip(EDGE, np.round(cov, 3)))
    assert min(cov_old) < 0.65  # the v4 interval on the same models


@pytest.mark.parametrize(
    "robust, fragile_lo, flip",
    [
        (0.99, 0.0, False),  # 99% of items right under every configuration: mean about 0.995
        (0.95, 0.3, False),  # mean about 0.98
        (0.98, 0.9, False),  # a few items slightly fragile: mean 0.999
        (0.99, 0.0, True),  # the mirror images near 0
        (0.95, 0.3, True),
        (0.98, 0.9, True),
    ],
)
def test_coverage_near_0_and_1_averaged_scores(robust, fragile_lo, flip):
    """26 configurations, 102 items drawn afresh per board: item i right under each configuration
    with probability p_i (1 for a share ``robust`` of the items, else uniform on [fragile_lo, 1]);
    the interval covers the mean of p_i over the item population in at least 95% of 4,000 boards
    (the variance bound makes it conservative), where the Wald interval does not come close."""
    rng = np.random.default_rng(7)
    reps, N, K = 4000, 102, 26
    p = np.where(rng.random((reps, N)) < robust, 1.0, rng.uniform(fragile_lo, 1.0, (reps, N)))
    mu = robust + (1 - robust) * (1 + fragile_lo) / 2
    right = rng.binomial(K, p)
    if flip:
        right, mu = K - right, 1 - mu
    _, ci = mean_ci(right, K)
    covered = ((ci[:, 0] <= mu) & (mu <= ci[:, 1])).mean()
    old = wald(right, K)
    covered_old = ((old[:, 0] <= mu) & (mu <= old[:, 1])).mean()
    assert covered >= 0.945, covered
    assert covered_old < 0.9, covered_old


def test_a_4278_model_board_builds_fast():
    rng = np.random.default_rng(0)
    right = rng.integers(0, 2, (4278, 102))
    start = time.perf_counter()
    mean, ci = mean_ci(right, 1)
    assert time.perf_counter() - start < 0.5
    assert ci.shape == (4278, 2) and (ci[:, 1] > ci[:, 0]).all()


def test_the_interval_is_marginal():
    assert CI_KIND == "marginal"
