"""The bounds the incomplete-grid verdicts rest on hold for every completion (issue 44):
Cochran's Q (``cochran_q_bounds``), Kendall's tau-b (``kendall_tau_bounds``) and the pair
counts of the harness-averaged order (``above_bounds``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leaderboard_audit.metrics.averaged import above_counts
from leaderboard_audit.metrics.harness_effects import cochran_q_p
from leaderboard_audit.metrics.incomplete import (
    above_bounds,
    cochran_q_bounds,
    count_bounds,
    kendall_tau_bounds,
    right_count_bounds,
)
from leaderboard_audit.metrics.kendall import kendall_tau_b
from leaderboard_audit.metrics.per_model import right_counts

GRIDS = st.tuples(st.integers(1, 4), st.integers(1, 9), st.integers(2, 5), st.integers(0, 2**32 - 1))


def draw(shape, seed, p_missing):
    rng = np.random.default_rng(seed)
    truth = rng.random(shape) < rng.uniform(0.2, 0.8)
    missing = np.where(rng.random(shape) < p_missing, 1, 0).astype(np.int8)
    return rng, truth & (missing == 0), missing


def completions(rng, seen, missing, n=40):
    """Random completions of the missing cells, and the two extremes."""
    unknown = missing != 0
    yield seen | unknown
    yield seen.copy()
    for _ in range(n):
        yield seen | (unknown & (rng.random(seen.shape) < rng.uniform(0, 1)))


@pytest.mark.slow
@settings(max_examples=150, deadline=None, derandomize=True)
@given(grid=GRIDS, p=st.sampled_from([0.1, 0.3, 0.6]))
def test_cochran_q_lies_within_its_bounds(grid, p):
    M, N, K, seed = grid
    rng, seen, missing = draw((M, N, K), seed, p)
    q_lo, q_hi = cochran_q_bounds(seen, missing)
    for C in completions(rng, seen, missing):
        counts = C.sum(axis=1)
        R = right_counts(C).astype(np.int64)
        q, _ = cochran_q_p(counts, (R * R).sum(axis=1))
        for m in range(M):
            if np.isnan(q[m]):  # undefined here (p = 1): the high bound must say it can be
                assert not np.isfinite(q_hi[m]), (m, q_hi[m])
                continue
            if np.isfinite(q_lo[m]):
                assert q[m] >= q_lo[m] - 1e-9, (m, q[m], q_lo[m])
            if np.isfinite(q_hi[m]):
                assert q[m] <= q_hi[m] + 1e-9, (m, q[m], q_hi[m])


@pytest.mark.slow
@settings(max_examples=150, deadline=None, derandomize=True)
@given(grid=GRIDS, p=st.sampled_from([0.1, 0.3, 0.6]))
def test_kendall_tau_lies_within_its_bounds(grid, p):
    M, N, K, seed = grid
    M = max(M, 2)
    rng, seen, missing = draw((M + 1, N, K), seed, p)
    missing[:, :, 0] = 0  # the reference: exact
    seen = seen & (missing == 0)
    lo, hi = count_bounds(seen, missing)
    x = lo[:, 0].astype(float)
    for k in range(1, K):
        got = kendall_tau_bounds(x, lo[:, k], hi[:, k])
        for C in completions(rng, seen, missing):
            tau = kendall_tau_b(x, C.sum(axis=1)[:, k : k + 1].astype(float))[0]
            if got is None:
                continue
            assert not np.isnan(tau), "tau undefined although the bounds said it cannot be"
            assert got[0] - 1e-9 <= tau <= got[1] + 1e-9, (k, tau, got)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(grid=GRIDS, p=st.sampled_from([0.1, 0.3, 0.6]))
def test_averaged_pair_counts_lie_within_their_bounds(grid, p):
    M, N, K, seed = grid
    M = max(M, 2)
    rng, seen, missing = draw((M, N, K), seed, p)
    r_lo, r_hi = right_count_bounds(seen, missing)
    iu, ju = np.triu_indices(M, k=1)
    lo, hi = above_bounds(r_lo, r_hi, iu, ju)
    for C in completions(rng, seen, missing):
        above = above_counts(right_counts(C), K)
        assert (lo <= above[iu, ju]).all() and (above[iu, ju] <= hi).all()


def exhaustive(seen, missing):
    """Every completion of a model's missing cells (at most 2^14 of them), stacked on the
    model axis: ``out[c]`` is completion ``c`` of ``seen[0]``."""
    idx = np.flatnonzero(missing.reshape(-1) != 0)
    assert idx.size <= 14
    out = np.repeat(seen.reshape(1, -1), 1 << idx.size, axis=0)
    out[:, idx] = (np.arange(1 << idx.size)[:, None] >> np.arange(idx.size)) & 1
    return out.reshape((-1, *seen.shape[1:]))


@pytest.mark.slow
@settings(max_examples=120, deadline=None, derandomize=True)
@given(N=st.integers(2, 8), K=st.integers(2, 5), seed=st.integers(0, 2**32 - 1))
def test_cochran_q_low_bound_holds_exhaustively_with_whole_columns_observed(N, K, seed):
    """The verdict plan's pattern (collect/verdict_plan.py): some configurations observed on
    every item, the rest on a few; the low bound (tied through the total) is at most Q in
    every completion, checked over all of them."""
    rng = np.random.default_rng(seed)
    truth = rng.random((1, N, K)) < rng.uniform(0.1, 0.9)
    missing = np.zeros((1, N, K), dtype=np.int8)
    free = rng.permutation(K)[: max(1, K - 2)]
    missing[0][:, free] = rng.random((N, len(free))) < 0.7
    while (missing != 0).sum() > 14:
        missing[np.unravel_index(np.flatnonzero(missing.reshape(-1))[0], missing.shape)] = 0
    seen = truth & (missing == 0)
    q_lo, _ = cochran_q_bounds(seen, missing)
    if not np.isfinite(q_lo[0]):
        return
    C = exhaustive(seen, missing)  # each completion a model: Q of all of them in one call
    R = right_counts(C).astype(np.int64)
    qs, _ = cochran_q_p(C.sum(axis=1), (R * R).sum(axis=1))
    assert q_lo[0] <= np.nanmin(qs) + 1e-9 or np.isnan(qs).all(), (q_lo[0], np.nanmin(qs))


def test_cochran_q_low_bound_ties_numerator_and_denominator():
    """Two configurations known on every item (90% and 50% right), two unknown on most: the
    box bounds taken apart (least column spread over largest denominator, each at its own
    total) stay below 30; tied through the common total the low bound is higher, and still
    at most Q of the completions tried."""
    rng = np.random.default_rng(0)
    N, K = 400, 4
    truth = np.zeros((1, N, K), dtype=bool)
    truth[0, :, 0] = rng.random(N) < 0.9
    truth[0, :, 1] = rng.random(N) < 0.5
    truth[0, :, 2:] = rng.random((N, 2)) < 0.7
    missing = np.zeros((1, N, K), dtype=np.int8)
    missing[0, : N - 20, 2:] = 1
    seen = truth & (missing == 0)
    col_lo = seen.sum(axis=1)[0].astype(float)
    col_hi = col_lo + (missing != 0).sum(axis=1)[0]
    r_lo = seen.sum(axis=2)[0]
    r_hi = r_lo + (missing != 0).sum(axis=2)[0]
    # the decoupled bound: least spread over the column box, the largest denominator per item
    t = np.linspace(col_lo.min(), col_hi.max(), 20001)
    spread = (
        (np.clip(t[:, None], col_lo, col_hi) - np.clip(t[:, None], col_lo, col_hi).mean(1, keepdims=True)) ** 2
    ).sum(1)
    half = np.clip(K / 2, r_lo, r_hi)
    apart = (K - 1) * K * spread.min() / (half * (K - half)).sum()
    q_lo, _ = cochran_q_bounds(seen, missing)
    assert q_lo[0] > apart * 1.05, (q_lo[0], apart)
    for C in completions(rng, seen, missing, n=60):
        R = right_counts(C).astype(np.int64)
        q, _ = cochran_q_p(C.sum(axis=1), (R * R).sum(axis=1))
        assert q[0] >= q_lo[0] - 1e-9
