"""The aggregation rules against independent computations and planted strengths."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.arena import simulate_counts  # noqa: F401 - used below
from leaderboard_audit.arena.data import Battles, PairCounts
from leaderboard_audit.arena.rules import (
    ELO_SCALE,
    bt_scores,
    expand,
    mean_pairwise,
    online_elo,
    outcome_weights,
    rule_scores,
    win_share,
)


def zermelo(pc: PairCounts, ties: str, iters: int = 20000) -> np.ndarray:
    """Hunter's MM iteration for Bradley-Terry (an independent fit), Elo scale, mean 1000."""
    wi, wj = outcome_weights(pc.counts, ties)
    M = len(pc.models)
    W = np.zeros((M, M))
    W[pc.i, pc.j] = wi
    W[pc.j, pc.i] = wj
    N = W + W.T
    p = np.ones(M)
    for _ in range(iters):
        p = W.sum(axis=1) / (N / (p[:, None] + p[None, :])).sum(axis=1)
        p /= np.exp(np.log(p).mean())
    theta = np.log(p)
    return 1000 + ELO_SCALE * (theta - theta.mean())


@pytest.mark.parametrize("ties", ["dropped", "halved", "all_halved"])
def test_bradley_terry_equals_zermelo(ties):
    pc = simulate_counts(np.array([0.0, 0.3, -0.2, 0.8, 0.1]), 400, seed=3, tie=0.2)
    assert np.allclose(bt_scores(pc, ties), zermelo(pc, ties), atol=0.05)


def test_bradley_terry_recovers_planted_order():
    truth = np.linspace(-1, 1, 8)
    pc = simulate_counts(truth, 4000, seed=5)
    got = bt_scores(pc, "dropped")
    assert np.argsort(got).tolist() == list(range(8))
    assert np.allclose((got - 1000) / ELO_SCALE, truth - truth.mean(), atol=0.06)


def test_tie_rules_differ_as_defined():
    # one pair: 6 wins, 2 losses, 4 ties, 8 both-bad
    pc = PairCounts(("a", "b"), np.array([0]), np.array([1]), np.array([[6, 2, 4, 8]]))
    for ties, (w, lo) in {"dropped": (6, 2), "halved": (8, 4), "all_halved": (12, 8)}.items():
        got = bt_scores(pc, ties)
        assert got[0] - got[1] == pytest.approx(ELO_SCALE * math.log(w / lo), abs=0.01)


def test_online_elo_by_hand():
    r = online_elo(np.array([0, 1]), np.array([1, 0]), np.array([1.0, 1.0]), 2)
    ra, rb = 1002.0, 998.0  # first battle: expected 0.5, K = 4
    e_b = 1 / (1 + 10 ** ((ra - rb) / 400))
    assert r.tolist() == pytest.approx([ra - 4 * (1 - e_b), rb + 4 * (1 - e_b)])


def test_win_rates_by_hand():
    # a-b: a 3 wins 1 loss; a-c: 0 wins 2 losses 2 ties; b-c: 1 win 1 loss
    pc = PairCounts(
        ("a", "b", "c"), np.array([0, 0, 1]), np.array([1, 2, 2]), np.array([[3, 1, 0, 0], [0, 2, 2, 0], [1, 1, 0, 0]])
    )
    assert mean_pairwise(pc).tolist() == pytest.approx([(3 / 4 + 1 / 4) / 2, (1 / 4 + 1 / 2) / 2, (3 / 4 + 1 / 2) / 2])
    assert win_share(pc).tolist() == pytest.approx([(3 + 1) / 8, (1 + 1) / 6, (3 + 1) / 6])


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 3)).filter(lambda t: t[0] != t[1]),
        min_size=1,
        max_size=60,
    )
)
def test_battles_to_counts_and_back(rows):
    a = np.array([r[0] for r in rows], dtype=np.int32)
    b = np.array([r[1] for r in rows], dtype=np.int32)
    out = np.array([r[2] for r in rows], dtype=np.int8)
    bt = Battles(tuple("abcde"), a, b, out)
    pc = bt.pair_counts()
    assert pc.n_battles == len(rows)
    assert (pc.i < pc.j).all()
    ea, eb, s = expand(pc)
    # the score each model earns is the same whichever way the battles are written
    earned = np.bincount(ea, s, 5) + np.bincount(eb, 1 - s, 5)
    sa = np.where(out == 0, 1.0, np.where(out == 1, 0.0, 0.5))
    assert np.allclose(earned, np.bincount(a, sa, 5) + np.bincount(b, 1 - sa, 5))


def test_time_order_elo_needs_battles():
    pc = simulate_counts(np.zeros(3), 10, seed=1)
    scores, skipped = rule_scores(pc, None, seed=1, n_shuffles=2)
    assert "elo_time" not in scores and "battle order" in skipped["elo_time"]
    bt = Battles(pc.models, *expand(pc)[:2], np.zeros(pc.n_battles, dtype=np.int8))
    scores, skipped = rule_scores(bt.pair_counts(), bt, seed=1, n_shuffles=2)
    assert "time stamps" in skipped["elo_time"]
