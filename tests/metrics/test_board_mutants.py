"""The board's Benjamini-Hochberg, pinned (review 2026-12-07, U11: mutants V13, V24 survived).

* ``bh_adjust`` / ``bh_adjust_distinct`` equal a brute-force BH computed from its definition
  (the smallest level at which the textbook step-up rejects the hypothesis), ties included,
  on a family where the step-up's running minimum matters (V13: without it, an adjusted p
  can exceed a larger raw p's).
* ``bh_edges`` at alpha identifies exactly the pairs BH rejects at alpha, and not the ones BH
  rejects only at 2 alpha, on both code paths, and the board section calls it at the scope's
  alpha (V24: BH at 2 alpha).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from scipy.stats import binomtest

from leaderboard_audit.metrics import board as board_mod
from leaderboard_audit.metrics.board import bh_adjust, bh_adjust_distinct, bh_edges


def bh_reject(p: np.ndarray, alpha: float) -> np.ndarray:
    """The textbook step-up: k = max{j : p_(j) <= j alpha / m}; reject every p <= p_(k)."""
    m = len(p)
    s = np.sort(p)
    ok = [j for j in range(1, m + 1) if s[j - 1] <= j * alpha / m + 1e-15]
    return p <= s[max(ok) - 1] + 1e-15 if ok else np.zeros(m, dtype=bool)


def brute_bh(p: np.ndarray) -> np.ndarray:
    """Each hypothesis's adjusted p: the smallest level at which the step-up rejects it (the
    candidate levels are the values m p_(j) / j, capped at 1)."""
    m = len(p)
    s = np.sort(p)
    levels = sorted({min(1.0, m * s[j - 1] / j) for j in range(1, m + 1)} | {1.0})
    out = np.ones(m)
    for a in reversed(levels):
        out[bh_reject(p, a)] = a
    return out


HAND = [
    # the running minimum matters: stepped 0.04, 0.06, 0.0533, 0.045 in sorted order
    ([0.01, 0.04, 0.03, 0.045], [0.04, 0.045, 0.045, 0.045]),
    # ties share the rank of the last of them
    ([0.02, 0.02, 0.04, 0.9], [0.04, 0.04, 0.04 * 4 / 3, 0.9]),
    # capped at 1, and a tie at the top
    ([0.5, 0.7, 0.7], [0.7, 0.7, 0.7]),
    ([0.001], [0.001]),
]


@pytest.mark.parametrize("p, want", HAND)
def test_bh_adjust_equals_the_hand_computation(p, want):
    p = np.array(p)
    np.testing.assert_allclose(bh_adjust(p), want, rtol=0, atol=1e-15)
    np.testing.assert_allclose(brute_bh(p), want, rtol=0, atol=1e-15)
    values, counts = np.unique(p, return_counts=True)
    idx = np.searchsorted(values, p)
    np.testing.assert_allclose(bh_adjust_distinct(values, counts)[idx], want, rtol=0, atol=1e-15)


def test_bh_adjust_is_monotone_where_the_stepped_values_are_not():
    # V13: without np.minimum.accumulate the second-smallest raw p gets 0.06 > the third's 0.0533
    p = np.array([0.01, 0.03, 0.04, 0.045])
    stepped = p * 4 / np.arange(1, 5)
    assert not np.all(np.diff(stepped) >= 0)  # the family is one where the minimum matters
    for adj in (bh_adjust(p), bh_adjust_distinct(p, np.ones(4, dtype=np.int64))):
        assert np.all(np.diff(adj) >= 0) and adj[1] == pytest.approx(0.045)
        # rejected at 0.05 by the step-up: all four (p_(4) = 0.045 <= 4 x 0.05 / 4)
        assert np.array_equal(adj <= 0.05, bh_reject(p, 0.05)) and bh_reject(p, 0.05).all()


def test_bh_adjust_equals_brute_force_on_random_families_with_ties():
    rng = np.random.default_rng(5)
    for _ in range(300):
        m = int(rng.integers(1, 12))
        p = np.round(rng.beta(0.4, 2.0, m), 2)  # rounded: many ties
        want = brute_bh(p)
        np.testing.assert_allclose(bh_adjust(p), want, rtol=0, atol=1e-12)
        values, counts = np.unique(p, return_counts=True)
        got = bh_adjust_distinct(values, counts)[np.searchsorted(values, p)]
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def _family():
    """4 models over 60 items: ``only[a, b]`` = items a gets right and b wrong. The 6 pairs'
    sign tests give raw p-values that BH at 0.05 and at 0.10 separate."""
    only = np.zeros((4, 4), dtype=np.int64)
    # (a, b, a only, b only)
    for a, b, x, y in [(0, 1, 14, 1), (0, 2, 12, 2), (0, 3, 12, 3), (1, 2, 11, 3), (1, 3, 10, 3), (2, 3, 9, 3)]:
        only[a, b], only[b, a] = x, y
    return only, 60


def _brute_edges(only: np.ndarray, alpha: float) -> np.ndarray:
    M = only.shape[0]
    pairs = [(a, b) for a in range(M) for b in range(a + 1, M)]
    p = np.array([binomtest(int(only[a, b]), int(only[a, b] + only[b, a]), 0.5).pvalue for a, b in pairs])
    rej = bh_reject(p, alpha)
    above = np.zeros((M, M), dtype=bool)
    for (a, b), r in zip(pairs, rej):
        if r and only[a, b] != only[b, a]:
            above[(a, b) if only[a, b] > only[b, a] else (b, a)] = True
    return above


def test_the_family_separates_bh_at_alpha_from_bh_at_twice_alpha():
    only, _ = _family()
    at, twice = _brute_edges(only, 0.05), _brute_edges(only, 0.10)
    assert at.sum() < twice.sum() and not (at & ~twice).any()


@pytest.mark.parametrize("path", ["by cell", "pair by pair"])
def test_bh_edges_rejects_exactly_what_bh_rejects_at_alpha(path, monkeypatch):
    only, n = _family()
    if path == "pair by pair":
        monkeypatch.setattr(board_mod, "CELL_TABLE_MAX", 0)
    for alpha in (0.05, 0.10, 0.01):
        assert np.array_equal(bh_edges(only, n, alpha), _brute_edges(only, alpha)), alpha
    # V24: at alpha the pairs rejected only at 2 alpha are not edges
    extra = _brute_edges(only, 0.10) & ~_brute_edges(only, 0.05)
    assert extra.any() and not (bh_edges(only, n, 0.05) & extra).any()


def test_the_board_section_uses_the_scopes_alpha():
    # AUDITS v5 (checks/averaged.py board_section): the rank intervals at the scope's alpha, not at
    # 2 alpha (V24 on the v5 rule: a board at 2 alpha separates pairs the 0.05 board does not)
    from leaderboard_audit.checks.averaged import board_section
    from leaderboard_audit.metrics.rank_intervals import board_intervals, item_scores

    M, N = 6, 80
    for seed in range(40):
        rng = np.random.default_rng(seed)
        S = rng.random((M, N, 1)) < np.linspace(0.75, 0.45, M)[:, None, None]
        a = item_scores(S)
        key = "rank-intervals/pooled"
        at, twice = (board_intervals(a, alpha, 1, key=key) for alpha in (0.05, 0.10))
        if (at[0] != twice[0]).any():
            break
    else:
        raise AssertionError("no board tells 0.05 from 0.10")
    scope = SimpleNamespace(
        names=[f"m{j}" for j in range(M)], shape=(M, N, 1), alpha=0.05, S=S, seed=1, name="pooled", order=np.arange(M)
    )
    sec = board_section(None, scope)
    got = {r["model"]: r["rank_interval"] for r in sec["rows"]}
    assert [got[f"m{j}"][0] for j in range(M)] == at[0].tolist()
    assert [got[f"m{j}"][1] for j in range(M)] == at[1].tolist()
    assert [got[f"m{j}"][0] for j in range(M)] != twice[0].tolist()
