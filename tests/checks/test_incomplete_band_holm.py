"""The decided band FAIL on an incomplete grid uses Holm over every model's LARGEST Cochran p
(review 2026-12-07, U11: mutant V20, Holm over the smallest p, survived).

"Significant in every completion": each model's cells complete independently, so one
completion gives every model its largest p at once; Holm's adjusted p never falls when a raw
p rises, so the FAIL is decided only when Holm over the largest p is at most alpha. Holm over
the smallest p decides a FAIL that the least favourable completion contradicts.
"""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard_audit.metrics import incomplete as inc
from leaderboard_audit.metrics.identified import holm_adjust


def _grid():
    """3 models x 20 items x 2 configs: config 0 right on every item, config 1 on the last 10
    only (spread 0.5, far above band_warn), one unknown cell per model."""
    C = np.zeros((3, 20, 2), dtype=bool)
    C[:, :, 0] = True
    C[:, 10:, 1] = True
    miss = np.zeros_like(C)
    miss[:, 0, 1] = True
    return C, miss, np.ones((3, 2), dtype=bool)


def _sides(monkeypatch, p_max, p_min):
    C, miss, possible = _grid()
    monkeypatch.setattr(inc, "cochran_p_bounds", lambda *a, **k: (np.array(p_max), np.array(p_min)))
    return inc.band_sides(C, miss, possible, band_pass=0.02, band_warn=0.05, alpha=0.05)


def test_fail_is_not_decided_when_the_least_favourable_completion_is_not_significant(monkeypatch):
    # largest p 0.02, 0.02, 0.9: Holm 0.06, 0.06, 0.9 > 0.05, so the completion giving every model
    # its largest p leaves models 0 and 1 not significant; their smallest p (0.001) is
    # significant after Holm, which is what V20 would read
    p_max, p_min = [0.02, 0.02, 0.9], [0.001, 0.001, 0.001]
    assert (holm_adjust(np.array(p_max)) > 0.05).all() and (holm_adjust(np.array(p_min)) <= 0.05).all()
    s = _sides(monkeypatch, p_max, p_min)
    assert (s.s_lo > 0.05).all()  # the spread is above band_warn in every completion
    assert not s.is_fail.any() and not s.is_pass.any()
    assert not s.is_warn.any()  # Q is significant in some completion: the missing cells decide


def test_fail_is_decided_when_holm_over_the_largest_p_rejects(monkeypatch):
    # largest p 0.01, 0.01, 0.9: Holm 0.03, 0.03, 0.9: models 0 and 1 fail in every completion
    s = _sides(monkeypatch, [0.01, 0.01, 0.9], [0.001, 0.001, 0.001])
    assert s.is_fail.tolist() == [True, True, False]
    # model 2 (p from 0.001 to 0.9: significant in some completion only) stays undecided
    assert not s.is_warn[2] and not s.is_pass[2]


# seeds 0 to 4 in the fast tier; the other 25 (about 1 s each) are slow
@pytest.mark.parametrize("seed", [*range(5), *(pytest.param(s, marks=pytest.mark.slow) for s in range(5, 30))])
def test_decided_fail_holds_in_every_completion(seed):
    _brute_force(seed)


def _brute_force(seed: int) -> int:
    """The decided FAILs of one small random incomplete grid, checked against every completion."""
    # brute force over every completion of a few unknown cells: a decided FAIL is significant
    # after Holm (over the scope's models) in each, with the real p bounds
    from itertools import product

    from leaderboard_audit.metrics.incomplete import cochran_p_bounds

    rng = np.random.default_rng(seed)
    M, N, K = 3, 14, 3
    # config 0 easy, config 2 hard, config 1 in between by a model-specific shift
    shift = rng.uniform(0, 0.45, M)
    C = rng.random((M, N, K)) < np.array([0.9, 0.0, 0.3])
    C[:, :, 1] = rng.random((M, N)) < 0.9 - shift[:, None]
    miss = np.zeros_like(C)
    cells = [(m, int(i), int(k)) for m in range(M) for i, k in zip(rng.integers(0, N, 2), rng.integers(0, K, 2))]
    for c in cells:
        miss[c] = True
    possible = np.ones((M, K), dtype=bool)
    s = inc.band_sides(C, miss, possible, band_pass=0.02, band_warn=0.05, alpha=0.05)
    cells = sorted(set(cells))
    for fill in product([False, True], repeat=len(cells)):
        full = C.copy()
        for c, v in zip(cells, fill):
            full[c] = v
        p, _ = cochran_p_bounds(full, None, possible)  # complete grid: the one p
        adj = holm_adjust(p)
        for m in np.flatnonzero(s.is_fail):
            assert adj[m] <= 0.05, (seed, m, fill)
    return int(s.is_fail.sum())


@pytest.mark.slow
def test_the_brute_force_meets_decided_fails():
    # the property above is not vacuous: most of those grids decide some FAIL
    assert sum(_brute_force(seed) > 0 for seed in range(30)) >= 10
