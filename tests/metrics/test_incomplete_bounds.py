"""Decided per-model quantities of an incomplete grid: every completion of the missing cells
lands inside the bounds, and the bounds are reached (issue 44, item 2)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from leaderboard_audit.metrics.incomplete import (
    NOT_ROBUST,
    ROBUST,
    UNDECIDED,
    accuracy_bounds,
    band_bounds,
    robust_accuracy_bounds,
    robust_status,
    side,
)

GRIDS = st.tuples(st.integers(1, 3), st.integers(1, 6), st.integers(1, 5), st.integers(0, 2**32 - 1))


def draw(shape, seed, p_missing):
    rng = np.random.default_rng(seed)
    truth = rng.random(shape) < 0.6
    missing = np.where(rng.random(shape) < p_missing, 1, 0).astype(np.int8)
    return truth, truth & (missing == 0), missing


def band(C):
    acc = C.mean(axis=1)
    return acc.max(axis=1) - acc.min(axis=1)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(grid=GRIDS, p=st.sampled_from([0.0, 0.2, 0.5, 0.9]))
def test_every_completion_lies_within_the_bounds(grid, p):
    M, N, K, seed = grid
    truth, seen, missing = draw((M, N, K), seed, p)
    status = robust_status(seen, missing)
    lo, hi = accuracy_bounds(seen, missing)
    b_lo, b_hi = band_bounds(lo, hi)
    r_lo, r_hi = robust_accuracy_bounds(status)
    rng = np.random.default_rng(seed + 1)
    unknown = missing != 0
    completions = [truth, seen, seen | unknown] + [seen | (unknown & (rng.random(truth.shape) < 0.5)) for _ in range(8)]
    for C in completions:  # the truth, all unknown wrong, all unknown right, random ones
        acc = C.mean(axis=1)
        assert np.all(lo <= acc + 1e-12) and np.all(acc <= hi + 1e-12)
        assert np.all(b_lo <= band(C) + 1e-12) and np.all(band(C) <= b_hi + 1e-12)
        rob = C.all(axis=2)
        assert np.all(r_lo <= rob.mean(axis=1) + 1e-12) and np.all(rob.mean(axis=1) <= r_hi + 1e-12)
        decided = status != UNDECIDED
        assert np.array_equal(rob[decided], status[decided] == ROBUST)  # decided statuses are exact
    # the accuracy bounds are attained by the two extreme completions, so they are tight
    assert np.allclose(seen.mean(axis=1), lo) and np.allclose((seen | unknown).mean(axis=1), hi)
    if p == 0.0:
        assert np.array_equal(lo, hi) and np.array_equal(b_lo, b_hi) and (status != UNDECIDED).all()


def test_status_rules_by_hand():
    seen = np.array([[[True, False, False], [True, True, True], [True, False, False]]])
    missing = np.array([[[0, 0, 1], [0, 0, 0], [0, 1, 1]]], dtype=np.int8)
    assert robust_status(seen, missing).tolist() == [[NOT_ROBUST, ROBUST, UNDECIDED]]
    lo, hi = accuracy_bounds(seen, missing)
    assert np.allclose(lo, [[1.0, 1 / 3, 1 / 3]]) and np.allclose(hi, [[1.0, 2 / 3, 1.0]])
    b_lo, b_hi = band_bounds(lo, hi)
    assert np.allclose(b_lo, [1 / 3]) and np.allclose(b_hi, [2 / 3])  # max lo - min hi; max hi - min lo
    assert side(np.array([0.1, 0.01, 0.03]), np.array([0.2, 0.04, 0.08]), 0.05).tolist() == [1, 0, -1]
