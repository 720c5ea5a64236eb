"""Properties that hold for any correctness tensor (hypothesis-generated)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from leaderboard_audit.metrics.axes import axis_groups, axis_robust
from leaderboard_audit.metrics.brittleness import variance_parts
from leaderboard_audit.metrics.champions import champion_count, champions
from leaderboard_audit.metrics.pairs import adjacent_pairs
from leaderboard_audit.metrics.per_model import band, leaderboard_order
from leaderboard_audit.records.grid import paper_grid

GRID = paper_grid()
REF = GRID.reference_index

tensors = st.tuples(st.integers(2, 6), st.integers(1, 30)).flatmap(lambda s: arrays(np.bool_, (s[0], s[1], len(GRID))))


@settings(max_examples=60, deadline=None)
@given(tensors)
def test_band_order(C):
    b = band(C, REF)
    assert np.all(b["robust"] <= b["reference"] + 1e-12)
    assert np.all(b["reference"] <= b["optimistic"] + 1e-12)
    assert np.all(b["min"] <= b["reference"]) and np.all(b["reference"] <= b["max"])
    assert np.all(b["spread"] >= 0)


@settings(max_examples=60, deadline=None)
@given(tensors)
def test_champion_set_contains_every_winner_and_ranks_are_consistent(C):
    acc = C.mean(axis=1)
    ch = champions(acc, REF)
    for k in range(acc.shape[1]):
        assert set(np.flatnonzero(acc[:, k] == acc[:, k].max())) <= set(ch["champion_set"])
        assert set(ch["winners"][k]) <= set(ch["top3"])
    lo, hi = ch["rank_range"][:, 0], ch["rank_range"][:, 1]
    assert np.all(lo <= ch["ranks"][:, REF]) and np.all(ch["ranks"][:, REF] <= hi)
    assert champion_count(C) == len(ch["champion_set"])
    assert set(ch["outright"]) <= set(ch["champion_set"])


@settings(max_examples=60, deadline=None)
@given(tensors)
def test_pair_decomposition_identities(C):
    N = C.shape[1]
    names = tuple(f"m{j}" for j in range(C.shape[0]))
    acc = C[:, :, REF].mean(axis=1)
    order = leaderboard_order(acc, names)
    for p in adjacent_pairs(C, REF, order, seed=1, scope="s", models=names, n_boot=200):
        assert p.gap >= 0
        assert p.higher_only + p.lower_only <= p.robust_items <= N
        if p.fragile_share is not None:
            robust_part = (p.higher_only - p.lower_only) / N
            assert abs(p.fragile_share * p.gap - (p.gap - robust_part)) < 1e-9
        if p.ci is not None:
            assert -1 <= p.ci[0] <= p.ci[1] <= 1
        assert p.manufactured == (p.robust_tie and p.gap_items != 0)
        assert (p.cause is not None) == p.manufactured
        assert (p.items_needed is None) == (p.robust_items == 0 or p.higher_only == p.lower_only)


@settings(max_examples=60, deadline=None)
@given(tensors)
def test_axes_and_brittleness_bounds(C):
    rob = axis_robust(C, axis_groups(GRID))
    for a in ("ordering", "format", "scoring"):
        assert np.all(rob["joint"] <= rob[a] + 1e-12)
    assert np.allclose(rob["joint"], band(C, REF)["robust"])
    v = variance_parts(C)
    assert np.all((v["brittleness"] >= 0) & (v["brittleness"] <= 1))
    # total variance of the bits = V_item + V_prompt (law of total variance)
    assert np.allclose(v["v_item"] + v["v_prompt"], C.reshape(C.shape[0], -1).astype(float).var(axis=1))
