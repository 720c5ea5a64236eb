"""Brittlebench's aggregates over benchmarks, computed by hand (AUDITS.md, "Brittleness").

Two models, two benchmarks of 4 items, two configs. Per (model, benchmark), with the
per-item means x_i over configs: V_item = Var_i(x_i), V_prompt = mean_i Var_k(Y)
(a split item, right under one config of two, has Var_k = 1/4):

  model a, bench x: items 11, 11, 10, 00 -> x = 1, 1, 1/2, 0: V_item = 9/16 - 25/64 = 11/64,
                    V_prompt = (1/4) / 4 = 4/64, V = 15/64
  model a, bench y: items 10, 01, 11, 00 -> x = 1/2, 1/2, 1, 0: V_item = 3/8 - 1/4 = 8/64,
                    V_prompt = (2/4) / 4 = 8/64, V = 16/64
  model b, bench x: items 10, 01, 10, 00 -> x = 1/2, 1/2, 1/2, 0: V_item = 3/16 - 9/64 = 3/64,
                    V_prompt = (3/4) / 4 = 12/64, V = 15/64
  model b, bench y: items 11, 10, 01, 00 -> x = 1, 1/2, 1/2, 0: V_item = 3/8 - 1/4 = 8/64,
                    V_prompt = 8/64, V = 16/64

pi_model[a] = (4 + 8) / (15 + 16) = 12/31, pi_model[b] = (12 + 8) / (15 + 16) = 20/31;
pi_benchmark[x] = (4 + 12) / (15 + 15) = 8/15, pi_benchmark[y] = (8 + 8) / (16 + 16) = 1/2.
(A mean of per-benchmark ratios would give a 23/60, b 13/20; the pooled items' brittleness
a 8/21: all different.)
"""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest

from leaderboard_audit.records import Config, Grid, Items, Records
from leaderboard_audit.engine import audit_scope

BITS = {("a", "x"): "11 11 10 00", ("a", "y"): "10 01 11 00", ("b", "x"): "10 01 10 00", ("b", "y"): "11 10 01 00"}


def records() -> Records:
    grid = Grid(
        (
            Config("gen|letter_plain|p0", "gen", "letter_plain", "p0", (0, 1, 2, 3)),
            Config("gen|letter_plain|p1", "gen", "letter_plain", "p1", (1, 2, 3, 0)),
        ),
        "gen|letter_plain|p0",
    )
    C = np.array([[[c == "1" for c in item] for b in "xy" for item in BITS[(m, b)].split()] for m in "ab"])
    bench = np.array(["x"] * 4 + ["y"] * 4, dtype=object)
    ids = np.array([f"{b}/{i}" for b, i in zip(bench, range(8))], dtype=object)
    return Records(C, ("a", "b"), Items(bench, ids, [None] * 8, [None] * 8, [None] * 8), grid)


def test_pi_model_and_pi_benchmark_by_hand():
    br = audit_scope(records(), "pooled", n_boot=200)["brittleness"]
    assert br["pi_model"] == {
        "a": pytest.approx(float(F(12, 31)), abs=1e-15),
        "b": pytest.approx(float(F(20, 31)), abs=1e-15),
    }
    assert br["pi_benchmark"] == {"x": pytest.approx(float(F(8, 15)), abs=1e-15), "y": pytest.approx(0.5, abs=1e-15)}
    assert br["a"]["brittleness"] == pytest.approx(float(F(8, 21)), abs=1e-15)


def test_benchmark_scopes_by_hand():
    rec = records()
    x = audit_scope(rec, "x", n_boot=200)["brittleness"]
    assert (x["a"]["v_item"], x["a"]["v_prompt"]) == (pytest.approx(11 / 64, abs=1e-15), pytest.approx(4 / 64))
    assert (x["b"]["v_item"], x["b"]["v_prompt"]) == (pytest.approx(3 / 64, abs=1e-15), pytest.approx(12 / 64))
    y = audit_scope(rec, "y", n_boot=200)["brittleness"]
    assert y["a"]["brittleness"] == pytest.approx(0.5) and y["b"]["brittleness"] == pytest.approx(0.5)
