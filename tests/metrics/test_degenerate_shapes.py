"""Degenerate shapes produce a valid report (no crash, no NaN in the JSON)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from helpers.builders import stable_records
from leaderboard_audit.records import Config, Grid, Items, Records
from leaderboard_audit.engine import audit, dumps_report


@pytest.mark.parametrize(
    "n_items,right,names",
    [
        (4, (3,), ("solo",)),  # one model: no pairs, undefined Kendall tau
        (1, (1, 0, 1), ("a", "b", "c")),  # one item
        (6, (3, 3, 3), ("a", "b", "c")),  # everything tied
    ],
)
def test_degenerate_records(n_items, right, names):
    rep = audit(stable_records(n_items=n_items, right=right, names=names))
    text = dumps_report(rep)
    assert "NaN" not in text
    s = json.loads(text)["scopes"]["pooled"]
    assert len(s["pairs"]) == len(names) - 1
    assert {v["status"] for v in s["verdicts"]} <= {"pass", "warn", "fail", "skip"}


def test_two_config_grid_has_no_ordering_or_format_axis():
    g = Grid(
        (
            Config("gen|letter_plain|p0", "gen", "letter_plain", "p0", (0, 1, 2, 3)),
            Config("ll|cloze", "ll", "cloze", None, None),
        ),
        "gen|letter_plain|p0",
    )
    C = np.random.default_rng(0).random((3, 10, 2)) < 0.5
    items = Items(
        np.array(["b"] * 10, dtype=object),
        np.array([f"i{j}" for j in range(10)], dtype=object),
        [None] * 10,
        [None] * 10,
        [None] * 10,
    )
    s = audit(Records(C, ("a", "b", "c"), items, g))["scopes"]["b"]
    assert s["axes"]["axis_kendall_min"]["ordering"] is None
    assert s["axes"]["axis_kendall_min"]["format"] is None
    assert s["axes"]["groups"]["scoring"] == ["gen|letter_plain|p0", "ll|cloze"]
