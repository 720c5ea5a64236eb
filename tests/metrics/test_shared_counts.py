"""What the orders and the board share instead of computing twice (issue 45, serial speed): the
pair cells, the tested pairs of counts already tested, and only the pairs the report reads."""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard_audit.metrics import board
from leaderboard_audit.metrics.averaged import averaged_order, configs_won
from leaderboard_audit.metrics.identified import identified_order, robust_only_counts, transposed
from leaderboard_audit.metrics.per_model import DerivedCache, robust_masks, sharing


def _grid(M: int, N: int, K: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    logit = rng.normal(0, 1.5, M)[:, None, None] - rng.normal(0, 1, N)[None, :, None]
    C = rng.random((M, N, K)) < 1 / (1 + np.exp(-logit))
    C.flags.writeable = False  # as the readers hand records to the audit
    return C


@pytest.mark.parametrize("shape", [(1, 1), (3, 200), (130, 7), (257, 129)])
def test_blocked_transpose_is_the_transpose(shape):
    a = np.arange(shape[0] * shape[1], dtype=np.int32).reshape(shape)
    t = transposed(a, block=64)
    assert t.flags.c_contiguous and t.dtype == a.dtype and np.array_equal(t, a.T)


def test_one_configuration_averaged_order_reuses_the_identified_tests():
    C = _grid(40, 60, 1, 0)
    names = [f"m{i}" for i in range(40)]
    with sharing(DerivedCache()):
        io = identified_order(C, models=names)
        ao = averaged_order(C, models=names)
    assert ao.above is io.above and ao.edges is io.edges  # tested once, not twice
    assert ao.edges.shape[0] > 0 and np.array_equal(ao.only, io.only)
    # the same order as counting averaged scores from scratch, outside any shared cache
    fresh = averaged_order(C.copy(), models=names)
    assert np.array_equal(fresh.above, ao.above) and np.array_equal(np.asarray(fresh.p_holm), np.asarray(ao.p_holm))
    assert fresh.tiers == ao.tiers and fresh.reason == ao.reason


def test_board_edges_by_cell_are_the_edges_pair_by_pair(monkeypatch):
    rc, rw, _ = robust_masks(_grid(300, 50, 3, 1))
    only = robust_only_counts(rc, rw)
    only.flags.writeable = False
    for alpha in (0.05, 0.5):
        with sharing(DerivedCache()):
            by_cell = board.bh_edges(only, 50, alpha)
        monkeypatch.setattr(board, "CELL_TABLE_MAX", 0)
        by_pair = board.bh_edges(only, 50, alpha)
        monkeypatch.undo()
        assert by_pair.any() and not by_pair.all()
        assert np.array_equal(by_cell, by_pair)


def test_configs_won_of_chosen_pairs_is_the_matrix_at_them():
    C = _grid(30, 40, 5, 2)
    full = configs_won(C)
    a, b = np.arange(29), np.arange(1, 30)
    assert configs_won(C, (a, b)).tolist() == full[a, b].tolist()
    assert configs_won(C, (b, a)).tolist() == full[b, a].tolist()
