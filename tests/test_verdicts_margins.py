"""AUDITS.md v3, "Margins agree with statuses": every verdict's margin is >= 0 exactly when
its status is pass and < 0 when it is warn or fail, for every check, and a pass on a closed
boundary has margin 0, never -0. Asserted over every verdict of every bundled fixture and
of generated grids (one to three benchmarks, one configuration up to the paper's 26)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leaderboard_audit import load_records
from leaderboard_audit.engine import audit
from leaderboard_audit.records import Grid, Items, Records
from leaderboard_audit.records.grid import paper_grid
from leaderboard_audit.checks import Thresholds
from helpers.paths import REPO

FIXTURES = REPO / "fixtures"


def assert_margins_agree(report: dict) -> int:
    seen = 0
    for name, s in report["scopes"].items():
        for v in s["verdicts"]:
            if v["status"] == "skip":
                assert v["margin"] is None
                continue
            m = v["margin"]
            assert isinstance(m, (int, float)) and math.isfinite(m), (name, v["id"], m)
            assert (m >= 0) == (v["status"] == "pass"), (name, v["id"], v["status"], m, v["message"][:200])
            assert math.copysign(1.0, m) > 0 or m != 0, (v["id"], "negative zero")
            seen += 1
    return seen


@pytest.mark.parametrize(
    "fixture",
    [
        "tiny",
        pytest.param("demo", marks=pytest.mark.slow),
        pytest.param("real", marks=pytest.mark.slow),
        "release/records",
    ],
)
def test_every_fixture_verdict_has_a_margin_that_agrees(fixture):
    path = FIXTURES / fixture
    if not path.exists():
        pytest.skip(f"fixtures/{fixture} missing")
    report = audit(load_records(path), n_boot=500)
    assert assert_margins_agree(report) > 10


def generated(seed: int, n_models: int, n_items: int, n_configs: int, n_bench: int, fragile: float) -> Records:
    rng = np.random.default_rng(seed)
    full = paper_grid()
    configs = tuple(full.configs[:n_configs]) if n_configs < len(full) else tuple(full.configs)
    grid = Grid(configs, configs[0].key)
    ability = rng.uniform(0.1, 0.9, n_models)
    base = rng.random((n_models, n_items)) < ability[:, None]
    flip = rng.random((n_models, n_items, n_configs)) < fragile
    C = base[:, :, None] ^ flip
    bench = np.array([f"b{j % n_bench}" for j in range(n_items)], dtype=object)
    order = np.argsort(bench, kind="stable")
    bench = bench[order]
    C = C[:, order]
    ids = np.array([f"{b}/q{i:03d}" for i, b in enumerate(bench)], dtype=object)
    items = Items(bench, ids, [None] * n_items, [None] * n_items, [None] * n_items)
    return Records(np.ascontiguousarray(C), tuple(f"m{j}" for j in range(n_models)), items, grid)


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**31),
    n_models=st.integers(2, 5),
    n_items=st.integers(6, 48),
    n_configs=st.sampled_from([1, 2, 5, 26]),
    n_bench=st.integers(1, 3),
    fragile=st.sampled_from([0.0, 0.05, 0.3]),
)
def test_generated_grids_have_margins_that_agree(seed, n_models, n_items, n_configs, n_bench, fragile):
    rec = generated(seed, n_models, n_items, n_configs, n_bench, fragile)
    report = audit(rec, n_boot=200, thresholds=Thresholds({"mix_draws": 8, "flip_boot": 50}))
    assert_margins_agree(report)
