"""Declared axes (grid.json ``axis_groups``, docs/spec/AUDITS.md v3 "Declared axes"):
validation with named errors, the audit over any axis (a hand-written ``judge`` axis),
and the per-axis variance v_axis, every number computed by hand below."""

from __future__ import annotations

import json
import math
from fractions import Fraction as F

import numpy as np
import pytest

from leaderboard_audit.engine import audit
from leaderboard_audit.records import Items, Records, load_records, write_records
from leaderboard_audit.records.errors import RecordsError
from leaderboard_audit.records.grid import parse_grid
from leaderboard_audit.reports.markdown import render_markdown
from leaderboard_audit.reports.svg import figure_axes
from helpers.paths import REPO

TINY = REPO / "fixtures" / "tiny"
KEYS = ("ref", "p1", "judge=b", "judge=c")
GROUPS = {"ordering": ["ref", "p1"], "judge": ["ref", "judge=b", "judge=c"]}
# bits per item in KEYS order (models a, b, c; items i1..i4)
BITS = {
    "a": ("1111", "1111", "1100", "0000"),
    "b": ("1111", "1011", "0011", "0011"),
    "c": ("1111", "0000", "0000", "0000"),
}


def approx(x):
    return pytest.approx(float(x), abs=1e-12)


def judge_grid_obj(groups=None):
    return {
        "reference": "ref",
        "configs": [{"key": k, "scoring": "gen"} for k in KEYS],
        "axis_groups": GROUPS if groups is None else groups,
    }


def judge_records() -> Records:
    grid = parse_grid(judge_grid_obj(), "grid.json")
    names = tuple(BITS)
    C = np.array([[[b == "1" for b in item] for item in BITS[m]] for m in names], dtype=bool)
    items = Items(
        np.array(["bench"] * 4, dtype=object),
        np.array([f"bench/i{i}" for i in range(1, 5)], dtype=object),
        [0] * 4,
        [f"question {i}" for i in range(1, 5)],
        [None] * 4,
    )
    return Records(C, names, items, grid)


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    root = tmp_path_factory.mktemp("judge")
    write_records(judge_records(), root)
    assert json.loads((root / "grid.json").read_text())["axis_groups"] == GROUPS
    rep = audit(load_records(root), seed=1234, n_boot=2000)
    return rep, rep["scopes"]["bench"]


# ------------------------------------------------------------------ validation


def _error(groups) -> str:
    with pytest.raises(RecordsError) as exc:
        parse_grid(judge_grid_obj(groups), "recs/grid.json")
    return str(exc.value)


@pytest.mark.parametrize(
    ("groups", "words"),
    [
        ({"judge": ["ref", "judge=x"]}, ["recs/grid.json", "axis 'judge'", "'judge=x' is not a config key"]),
        (
            {"judge": ["judge=b", "judge=c"]},
            ["axis 'judge' does not hold the reference 'ref'", "fix: add the reference"],
        ),
        ({"judge": ["ref"]}, ["axis 'judge' holds only the reference"]),
        ({"joint": ["ref", "p1"]}, ["'joint' is reserved"]),
        ({"": ["ref", "p1"]}, ["axis name must be a non-empty string"]),
        ({"Judge": ["ref", "p1"], "judge": ["ref", "judge=b"]}, ["axis 'judge' repeats axis 'Judge'"]),
        ({"judge": ["ref", "p1", "p1"]}, ["['p1'] listed twice"]),
        ({"judge": "ref,p1"}, ["expected a list of config keys"]),
        ({}, ["declares no axis"]),
        (["ref", "p1"], ["must be a JSON object"]),
    ],
)
def test_axis_groups_errors_are_named(groups, words):
    msg = _error(groups)
    for w in words:
        assert w in msg, msg


def test_every_problem_is_reported_once():
    msg = _error({"judge": ["judge=x"], "ordering": ["ref"]})
    assert "invalid records (3 problems)" in msg
    assert "'judge=x' is not a config key" in msg and "does not hold the reference" in msg
    assert "axis 'ordering' holds only the reference" in msg


def test_null_axis_groups_is_absent():
    grid = parse_grid(judge_grid_obj(None) | {"axis_groups": None}, "grid.json")
    assert grid.axis_groups is None


# ------------------------------------------------------------------ the audit over a judge axis


def test_groups_and_robust_accuracy(judged):
    _, s = judged
    ax = s["axes"]
    assert ax["groups"] == {**GROUPS, "joint": list(KEYS)}
    want = {"a": (3, 2, 2), "b": (1, 2, 1), "c": (1, 1, 1)}  # ordering, judge, joint (items of 4)
    for m, counts in want.items():
        assert [ax["robust_accuracy"][m][a] for a in ("ordering", "judge", "joint")] == [
            approx(F(c, 4)) for c in counts
        ]
    # v4 most destructive: the mean share of items answered differently from the reference over
    # the axis's other configs. a: ordering 0, judge 1/4 (i3 under both judges); b: ordering 1/4
    # (i2), judge 2/4 (i3 and i4 under both judges); c: 0 and 0, the first axis
    assert ax["disagreement"]["b"] == {"ordering": approx(F(1, 4)), "judge": approx(F(1, 2)), "joint": approx(F(5, 12))}
    assert ax["most_destructive"] == {"a": "judge", "b": "judge", "c": "ordering"}


def test_kendall_and_load_bearing_axis(judged):
    rep, s = judged
    # reference accuracies (3, 2, 1)/4; p1 (3, 1, 1)/4: tau-b = 2 / sqrt(3 * 2);
    # judge=b, judge=c (2, 4, 1)/4: one discordant pair of three: tau = 1/3
    assert s["axes"]["axis_kendall_min"] == {
        "ordering": approx(2 / math.sqrt(6)),
        "judge": approx(F(1, 3)),
        "joint": approx(F(1, 3)),
    }
    (v,) = [v for v in s["verdicts"] if v["id"] == "axes[bench]"]
    # v4: a fail needs the judge configs to move the models unequally beyond item sampling,
    # which 4 items cannot show: a warn, naming the axis with the lowest mean tau (judge: 1/3)
    assert s["axes"]["axis_kendall_mean"]["judge"] == approx(F(1, 3))
    assert v["status"] == "warn" and v["evidence"]["load_bearing"] == "judge"
    assert "the order moves along the judge axis" in v["message"]


def test_judge_axis_in_table_and_figure(judged):
    rep, s = judged
    svg = figure_axes(s)
    assert "judge (3)" in svg and "ordering (2)" in svg and "joint (4)" in svg
    assert svg.count("<rect") == 3 * 3 + 3  # one bar per model and axis, plus the legend's swatches
    text = render_markdown(rep)
    assert "| model | ordering (2) | judge (3) | joint (4) | most destructive |" in text
    assert "| a | 0.750 | 0.500 | 0.500 | judge |" in text
    assert "| min Kendall tau | 0.816 | 0.333 | 0.333 |  |" in text


def test_per_axis_variance(judged):
    _, s = judged
    br = s["brittleness"]
    # v4: the unbiased variance, g/(g-1) times the population one (ordering g = 2, judge g = 3).
    # a: ordering never differs; judge on i3 (1, 0, 0): Var 2/9 x 3/2 = 1/3, mean over 4 items 1/12.
    # V(a) = V_item 11/64 + V_prompt 4/64 = 15/64
    assert br["a"]["v_axis"] == {"ordering": approx(0), "judge": approx(F(1, 12))}
    assert br["a"]["v_axis_share"]["judge"] == approx(F(1, 12) / F(15, 64))
    # b: ordering on i2 (1, 0): 1/4 x 2 = 1/2, mean 1/8; judge on i3, i4 (0, 1, 1): 1/3 each, mean 1/6
    assert br["b"]["v_axis"] == {"ordering": approx(F(1, 8)), "judge": approx(F(1, 6))}
    assert br["c"]["v_axis_share"] == {"ordering": 0.0, "judge": 0.0}  # V = 0: share 0


def test_paper_axes_derived_without_axis_groups():
    rep = audit(load_records(TINY), seed=1234, n_boot=2000)
    br = rep["scopes"]["tiny"]["brittleness"]
    # fixtures/make_tiny.py bits: ordering = configs 0/1, format 0/2, scoring 0/3; a pair's
    # unbiased Var (v4: x 2/1) is 1/2 where they differ. alpha: 2, 1, 2 items differ; beta: 3, 1, 1 (of 8).
    assert br["alpha"]["v_axis"] == {a: approx(F(n, 16)) for a, n in (("ordering", 2), ("format", 1), ("scoring", 2))}
    assert br["beta"]["v_axis"] == {a: approx(F(n, 16)) for a, n in (("ordering", 3), ("format", 1), ("scoring", 1))}
    assert br["beta"]["v_axis_share"]["ordering"] == approx(F(3, 16) / F(247, 1024))
