"""The grid checks on hand-made grids: identified order, printed ties, exploit flag."""

from __future__ import annotations

import numpy as np

from leaderboard_audit.arena.orders import (
    ScoreGrid,
    adjacent_pairs,
    averaged_order,
    exploit_flags,
    identified_order,
    kendall_and_reversals,
    rank_ranges,
)


def grid(S, se=None, ref=0) -> ScoreGrid:
    S = np.asarray(S, dtype=float)
    names = tuple("abcdefgh"[: S.shape[0]])
    return ScoreGrid(
        names, tuple(f"c{k}" for k in range(S.shape[1])), S, ref, None if se is None else np.asarray(se, float)
    )


def test_identified_order_by_hand():
    g = grid([[10.0], [9.9], [5.0]], se=[[0.1], [0.1], [0.1]])
    ident = identified_order(g, 0.05)
    assert ident["tiers"] == [["a", "b"], ["c"]]
    assert ident["identified_pairs"] == 2
    pairs = adjacent_pairs(g)
    assert [p["separated"] for p in pairs] == [False, True]
    assert identified_order(grid([[1.0], [0.0]]), 0.05) is None  # no standard errors


def test_exploit_flag_needs_a_decisive_lone_crown():
    # a: champion only under c1, by 20 points with SE 1 -> flagged
    # b: champion only under c0, by 0.5 with SE 1 -> a candidate, not flagged
    S = [[70, 90], [71, 70], [69, 69], [60, 60]]
    g = grid(S, se=np.ones((4, 2)))
    flags = {(e["model"], e["as"]): e for e in exploit_flags(g)}
    assert flags[("a", "champion")]["flagged"] is True
    assert flags[("a", "champion")]["rival"] == "b"
    assert flags[("b", "champion")]["flagged"] is False
    # no intervals: nothing can be flagged
    assert not any(e["flagged"] for e in exploit_flags(grid(S)))
    # the same champion everywhere: no candidate
    assert [e for e in exploit_flags(grid([[3, 3], [2, 1], [1, 2]], se=np.ones((3, 2)))) if e["as"] == "champion"] == []


def test_reversals_tau_ranges_averaged():
    S = [[4, 1], [3, 2], [2, 3], [1, 4]]
    g = grid(S)
    (o,) = kendall_and_reversals(g)
    assert (o["reversed"], o["adjacent_pairs"], o["kendall_tau"]) == (3, 3, -1.0)
    rows = {r["model"]: r for r in rank_ranges(g)}
    assert (rows["a"]["best"], rows["a"]["worst"]) == (1, 4)
    avg = averaged_order(g)
    assert avg["order"] == ["a", "b", "c", "d"]  # all mean ranks 2.5: the reference breaks ties
