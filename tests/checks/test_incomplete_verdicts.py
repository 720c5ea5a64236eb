"""Verdicts on incomplete grids, hand-computed (docs/audits.md, "Incomplete grids"; issue 44).

Tiny grids of 3 configurations (the reference ``gen|letter_plain|p0``, ``gen|letter_plain|p1``
and the likelihood ``ll|cloze_plain``) over 100 items, with the missing cells placed by hand.
Each decided verdict is checked against the same grid completed with its true cells."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from leaderboard_audit.engine import audit
from leaderboard_audit.records import Items, Records
from leaderboard_audit.records.grid import Grid, paper_grid
from leaderboard_audit.records.missing import NOT_COLLECTED, NOT_POSSIBLE, IncompleteRecordsError

KEYS = ("gen|letter_plain|p0", "gen|letter_plain|p1", "ll|cloze_plain")
N = 100


def grid3() -> Grid:
    by_key = {c.key: c for c in paper_grid().configs}
    return Grid(tuple(by_key[k] for k in KEYS), KEYS[0])


def build(rights: dict[str, tuple[range, range, range]], missing: dict[str, list[tuple[int, int, int]]]):
    """(complete records, incomplete records): ``rights[model]`` the items right under each
    config; ``missing[model]`` the (item, config, reason) cells hidden."""
    names = tuple(sorted(rights))
    C = np.zeros((len(names), N, 3), dtype=bool)
    miss = np.zeros(C.shape, dtype=np.int8)
    for m, name in enumerate(names):
        for k, rng in enumerate(rights[name]):
            C[m, list(rng), k] = True
        for i, k, why in missing.get(name, []):
            miss[m, i, k] = why
    items = Items(
        np.array(["bench"] * N, dtype=object),
        np.array([f"q{i:03d}" for i in range(N)], dtype=object),
        [0] * N,
        [f"question {i}" for i in range(N)],
        [None] * N,
    )
    full = Records(C, names, items, grid3())
    return full, replace(full, correct=C & (miss == 0), missing=miss)


def verdicts(records: Records) -> dict[str, dict]:
    rep = audit(records, n_boot=100)
    return {v["id"]: v for v in rep["scopes"]["bench"]["verdicts"]}


def cells(*spec: tuple[range, int], why: int = NOT_COLLECTED) -> list[tuple[int, int, int]]:
    return [(i, k, why) for rng, k in spec for i in rng]


# a: 90 items right everywhere, (q000, ll) hidden (truly right): spread in [0, 0.01]
# b: reference 60, p1 30, ll 60; q060-q064 under ll hidden (truly wrong): spread >= 0.3
# c: 40 right everywhere; (q039, p1) hidden (right), q040-q042 under ll hidden (wrong):
#    accuracies 0.40, [0.39, 0.40], [0.40, 0.43], so the spread lies in [0, 0.04]
GRID1 = {
    "a": (range(90), range(90), range(90)),
    "b": (range(60), range(30), range(60)),
    "c": (range(40), range(40), range(40)),
}
MISS1 = {
    "a": cells((range(0, 1), 2)),
    "b": cells((range(60, 65), 2)),
    "c": cells((range(39, 40), 1), (range(40, 43), 2)),
}


@pytest.fixture(scope="module")
def grid1():
    full, inc = build(GRID1, MISS1)
    return verdicts(full), verdicts(inc)


def test_band_pass_decided_when_the_widest_completion_stays_within_band_pass(grid1):
    full, inc = grid1
    v = inc["band[bench-a]"]
    assert (v["status"], v["decided"]) == ("pass", True)
    assert v["evidence"]["value_bounds"] == [0.0, pytest.approx(0.01)]
    assert v["status"] == full["band[bench-a]"]["status"]


def test_band_fail_decided_when_the_narrowest_spread_and_the_least_q_both_fail(grid1):
    full, inc = grid1
    v = inc["band[bench-b]"]
    # spread in [0.60 - 0.30, 0.65 - 0.30]; Cochran's Q at least 6 * 600 / 70 (p ~ 1e-11)
    assert (v["status"], v["decided"]) == ("fail", True)
    assert v["evidence"]["value_bounds"] == [pytest.approx(0.3), pytest.approx(0.35)]
    assert full["band[bench-b]"]["status"] == "fail"


def test_band_undecided_names_the_cells_that_decide_it(grid1):
    full, inc = grid1
    v = inc["band[bench-c]"]
    assert (v["status"], v["decided"]) == ("warn", False)
    assert v["evidence"]["value_bounds"] == [0.0, pytest.approx(0.04)]
    got = v["evidence"]["deciding_cells"]
    assert got["count"] == 4
    assert got["shown"] == [
        ["c", "q039", KEYS[1]],
        ["c", "q040", KEYS[2]],
        ["c", "q041", KEYS[2]],
        ["c", "q042", KEYS[2]],
    ]
    assert "undecided on an incomplete grid" in v["message"] and "4 missing cells would decide it" in v["message"]
    assert full["band[bench-c]"]["status"] == "pass"  # the truth: c never varies


def test_champions_pass_decided_when_one_model_wins_every_config_in_every_completion(grid1):
    full, inc = grid1
    v = inc["champions[bench]"]
    assert (v["status"], v["decided"]) == ("pass", True)
    assert full["champions[bench]"]["status"] == "pass"


def test_ranking_undecided_when_an_adjacent_pair_is_separated_in_some_completions_only(grid1):
    # b v c: least favourable 20 v 10 items (p 0.099 x 3 pairs), most favourable 25 v 9 (p 0.009)
    full, inc = grid1
    v = inc["ranking[bench]"]
    assert (v["status"], v["decided"]) == ("warn", False)
    assert "b > c" in v["message"]
    shown = {(m, k) for m, _, k in v["evidence"]["deciding_cells"]["shown"]}
    assert {m for m, _ in shown} == {"b", "c"}


def test_ranking_pass_decided_when_every_adjacent_pair_is_separated_in_every_completion():
    rights = dict(GRID1, c=(range(10), range(10), range(10)))
    full, inc = build(rights, {**MISS1, "c": cells((range(50, 51), 2))})
    v = verdicts(inc)["ranking[bench]"]
    assert (v["status"], v["decided"]) == ("pass", True)
    assert verdicts(full)["ranking[bench]"]["status"] == "pass"


# x: 60 right everywhere; y: reference 50, but p1 and ll all 100 (ll q095-q099 hidden)
GRID2 = {"x": (range(60), range(60), range(60)), "y": (range(50), range(100), range(100))}
MISS2 = {"y": cells((range(95, 100), 2))}


def test_ranking_and_champions_fail_decided_when_the_contradiction_holds_in_every_completion():
    full, inc = build(GRID2, MISS2)
    got, want = verdicts(inc), verdicts(full)
    # y above x on at least 40 items (q060-q099), below on 10: p 2.4e-5; printed x above y
    assert (got["ranking[bench]"]["status"], got["ranking[bench]"]["decided"]) == ("fail", True)
    assert want["ranking[bench]"]["status"] == "fail"
    # y beats the reference winner x under p1 by 40 items, 40 v 0 (McNemar), Holm over 2 tests
    assert (got["champions[bench]"]["status"], got["champions[bench]"]["decided"]) == ("fail", True)
    assert want["champions[bench]"]["status"] == "fail"


def test_axes_pass_decided_when_every_config_keeps_the_order_in_every_completion(grid1):
    # b's p1 55 (not 30): under p1 (90, 55, [39, 40]) and ll (90, [60, 65], [40, 43]) every
    # pair keeps the reference order (90, 60, 40): tau-b 1 in every completion
    full, inc = build(dict(GRID1, b=(range(60), range(55), range(60))), MISS1)
    v = verdicts(inc)["axes[bench]"]
    assert (v["status"], v["decided"]) == ("pass", True)
    assert v["evidence"]["value_bounds"] == [1.0, 1.0]
    assert verdicts(full)["axes[bench]"]["status"] == "pass"
    # grid1: b's p1 (30) falls below c (39 or 40): tau 1/3 whatever is missing, and a fail
    # would need the interaction test: undecided
    _, inc1 = grid1
    w = inc1["axes[bench]"]
    assert (w["status"], w["decided"]) == ("warn", False)
    assert w["evidence"]["value_bounds"] == [pytest.approx(1 / 3), pytest.approx(1 / 3)]


def test_checks_without_exact_bounds_are_undecided_with_their_reason(grid1):
    _, inc = grid1
    exact_rules = ("band", "ranking", "champions", "axes")
    other = [v for v in inc.values() if v["check"] not in exact_rules and v["status"] != "skip"]
    assert other
    for v in other:
        assert (v["status"], v["decided"]) == ("warn", False), v
        assert "has no exact bound on an incomplete grid" in v["message"]
        assert v["evidence"]["deciding_cells"]["count"] == 10  # every collectable missing cell: 1 + 5 + 4


def test_not_possible_configs_compare_a_model_on_the_configs_it_has():
    # c behind an API: no likelihood scoring (every ll cell not possible)
    rights = dict(GRID1)
    miss = {"c": cells((range(N), 2), why=NOT_POSSIBLE)}
    _, inc = build(rights, miss)
    rep = audit(inc, n_boot=100)
    s = rep["scopes"]["bench"]
    assert s["incomplete"]["compared_on"] == {"c": [KEYS[0], KEYS[1]]}
    band = {v["id"]: v for v in s["verdicts"]}["band[bench-c]"]
    assert (band["status"], band["decided"]) == ("pass", True)  # 0.40 and 0.40 on its two configs
    assert "on its 2 possible configs" in band["message"]
    # only not-possible cells are missing: nothing left to collect
    other = {v["id"]: v for v in s["verdicts"]}["axes[bench]"]
    assert other["evidence"]["deciding_cells"]["count"] == 0
    assert "no collectable cell decides it" in other["message"]


def test_complete_records_carry_no_decided_key_and_no_incomplete_section(grid1):
    full, _ = build(GRID1, MISS1)
    rep = audit(full, n_boot=100)
    for s in rep["scopes"].values():
        assert "incomplete" not in s
        assert all("decided" not in v for v in s["verdicts"])


def test_missing_reference_cells_are_still_refused():
    _, inc = build(GRID1, {"b": cells((range(3), 0))})
    with pytest.raises(IncompleteRecordsError, match="3 of them under the reference configuration"):
        audit(inc, n_boot=100)


# what the rest would cost (issue 53, item 5): the union of the undecided verdicts' deciding cells


def scope_only(records: Records, checks: set[str]) -> tuple[dict, object]:
    from leaderboard_audit.engine.scope import audit_scope_computed

    return audit_scope_computed(records, "bench", n_boot=100, only=checks)


def test_to_decide_is_every_collectable_cell_when_a_verdict_needs_them_all():
    _, inc = build(GRID1, MISS1)
    rep = audit(inc, n_boot=100)
    s = rep["scopes"]["bench"]
    td = s["incomplete"]["to_decide"]
    undecided = {v["id"]: v["evidence"]["deciding_cells"]["count"] for v in s["verdicts"] if v.get("decided") is False}
    assert td["by_verdict"] == undecided and td["undecided"] == len(undecided) > 0
    assert (td["cells"], td["share"]) == (10, 10 / 900)  # a check without an exact rule needs all 1 + 5 + 4
    assert "not_deciding" not in td
    from leaderboard_audit.reports.next_steps import incomplete_line

    line = incomplete_line(rep)
    open_ = sum(1 for sc in rep["scopes"].values() for v in sc["verdicts"] if v.get("decided") is False)
    assert open_ > len(undecided)  # the twin pooled scope repeats them: the line counts each once
    n = int(line.split("cells missing; ")[1].split(" of ")[0])  # "...; N of M verdicts undecided"
    assert f"to decide all {n} undecided verdicts, collect the remaining 10 missing cells (1.1% of the grid)" in line


def test_to_decide_is_the_union_of_the_verdicts_deciding_columns():
    _, inc = build(GRID1, MISS1)
    # band alone: only c's band is undecided, its 4 cells; a's and b's cells decide nothing
    out, _ = scope_only(inc, {"band"})
    td = out["incomplete"]["to_decide"]
    assert (td["cells"], td["undecided"], td["by_verdict"]) == (4, 1, {"band[bench-c]": 4})
    assert td["not_deciding"] == {"count": 6, "columns": {"a": {KEYS[2]: 1}, "b": {KEYS[2]: 5}}}
    # with ranking (b > c undecided: b's and c's cells), the union holds c's 4 cells once
    out, _ = scope_only(inc, {"band", "ranking"})
    td = out["incomplete"]["to_decide"]
    assert td["by_verdict"] == {"band[bench-c]": 4, "ranking[bench]": 9}
    assert (td["cells"], td["share"]) == (9, 9 / 900)
    assert td["not_deciding"] == {"count": 1, "columns": {"a": {KEYS[2]: 1}}}


def test_verdicts_decided_after_the_section_join_its_to_decide():
    # engine/parallel.py decides the leave-one-benchmark-out verdicts after the section is written
    from types import SimpleNamespace

    from leaderboard_audit.checks.incomplete import decide

    _, inc = build(GRID1, MISS1)
    out, sc = scope_only(inc, {"band"})
    copy = dict(out["incomplete"])  # a report's shallow copy of the section keeps seeing it
    late = {"id": "mix[bench]", "check": "mix", "status": "pass", "message": "", "value": 0.0, "margin": 0.0}
    (v,) = decide(SimpleNamespace(name="mix"), sc, [late])
    assert v["decided"] is False
    td = copy["to_decide"]
    assert td["by_verdict"] == {"band[bench-c]": 4, "mix[bench]": 10}
    assert (td["cells"], td["undecided"]) == (10, 2) and "not_deciding" not in td


def test_no_collectable_cell_to_decide_when_only_not_possible_cells_are_missing():
    from leaderboard_audit.reports.next_steps import incomplete_line

    _, inc = build(dict(GRID1), {"c": cells((range(N), 2), why=NOT_POSSIBLE)})
    rep = audit(inc, n_boot=100)
    td = rep["scopes"]["bench"]["incomplete"]["to_decide"]
    assert td["cells"] == 0 and td["undecided"] > 0 and "not_deciding" not in td
    assert "no collectable cell decides them" in incomplete_line(rep)
    # with collectable cells too: the not-possible ones are never among those to collect
    _, inc = build(dict(GRID1), {**MISS1, "c": cells((range(N), 2), why=NOT_POSSIBLE)})
    rep = audit(inc, n_boot=100)
    assert rep["scopes"]["bench"]["incomplete"]["to_decide"]["cells"] == 6
    assert "collect the remaining 6 collectable cells (0.7% of the grid)" in incomplete_line(rep)


def _scope(n_items: int, missing: int, columns: dict | None, cells_: int = 0) -> dict:
    td: dict = {"cells": cells_, "share": 0.0, "undecided": 1, "by_verdict": {}}
    if columns:
        td["not_deciding"] = {"count": sum(n for ks in columns.values() for n in ks.values()), "columns": columns}
    inc = {"cells": n_items * 2, "missing": missing, "not_possible": 0, "to_decide": td}
    return {"n_items": n_items, "incomplete": inc, "verdicts": []}


def test_report_total_counts_the_cells_no_scope_needs_once():
    from leaderboard_audit.checks.incomplete import report_to_decide

    # one model, configs x and y; pooled (10 items) leaves (a, y) out: 5 cells, 2 of them on
    # b1's items, which b1's verdicts leave out too, 3 on b2's, which b2's verdicts need
    pooled = _scope(10, 12, {"a": {"y": 5}}, 7)
    b1 = _scope(4, 5, {"a": {"y": 2}}, 3)
    b2 = _scope(6, 7, None, 7)
    got = report_to_decide({"scopes": {"pooled": pooled, "b1": b1, "b2": b2}})
    assert got == {"cells": 10, "share": 10 / 20, "every_missing_cell": False, "not_possible": 0}
    # a report without b2's scope cannot say where b2's cells stand: no total
    assert report_to_decide({"scopes": {"pooled": pooled, "b1": b1}}) is None
    # the pooled scope needing every cell: the total whatever the other scopes hold
    whole = _scope(10, 12, None, 12)
    assert report_to_decide({"scopes": {"pooled": whole, "b1": b1}})["cells"] == 12
    # a report from before to_decide: no total
    del b1["incomplete"]["to_decide"]
    assert report_to_decide({"scopes": {"pooled": whole, "b1": b1}}) is None
