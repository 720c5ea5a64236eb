"""Leave one benchmark out (docs/audits.md, "Beyond the paper"; paper Table 9): the reduced
records, the headline numbers agreeing with the report, and a planted benchmark that alone
carries the champion claim."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.table9 import headline_numbers, leave_one_out
from leaderboard_audit.metrics.leave_one_out import moved, without_benchmark
from leaderboard_audit.engine import audit_scope
from leaderboard_audit.records.simulate import demo_spec, simulate
from helpers.boards import carried_by_one_benchmark


def test_without_benchmark_drops_its_items_only():
    r = simulate(demo_spec(items_per_benchmark=30))
    red = without_benchmark(r, "hellaswag")
    assert red.benchmarks == ("arc", "mmlu", "truthfulqa") and red.shape == (6, 90, 26)
    assert np.array_equal(red.correct[:, :30], r.correct[:, :30])
    assert np.array_equal(red.correct[:, 30:], r.correct[:, 60:])
    with pytest.raises(KeyError, match="no benchmark"):
        without_benchmark(r, "gsm8k")


def test_planted_benchmark_alone_carries_the_champion_claim():
    r = carried_by_one_benchmark()
    full = headline_numbers(r, seed=1, n_boot=500)
    assert full["champion_count"] == 2 and full["champion_set"] == ["ace", "bolt"]
    assert full["champion_wins"]["bolt"] == {
        "configs": 2,
        "outright": 2,
        "min_margin_items": 26,
        "max_margin_items": 26,
    }
    counts = leave_one_out(r, lambda red: headline_numbers(red, seed=1, n_boot=500)["champion_count"])
    assert counts == {"a": 2, "b": 2, "c": 1}
    red = headline_numbers(without_benchmark(r, "c"), seed=1, n_boot=500)
    assert "champion_count" in moved(full, red) and "champion_set" in moved(full, red)
    other = moved(full, headline_numbers(without_benchmark(r, "a"), seed=1, n_boot=500))
    assert "champion_count" not in other and "champion_set" not in other


@pytest.mark.slow
def test_headline_numbers_agree_with_the_pooled_report():
    r = simulate(demo_spec(items_per_benchmark=60, seed=2))
    h = headline_numbers(r, seed=7, n_boot=2000)
    s = audit_scope(r, "pooled", seed=7, n_boot=2000)
    assert h["champion_count"] == s["champions"]["count"]
    assert h["kendall_tau"] == s["champions"]["kendall_tau"]
    assert h["corr"] == s["compression"]["corr"] and h["corr_ci"] == s["compression"]["ci"]
    # the paper's Table 9 count (printed gaps the robust items do not order); the pairs' v5
    # ``manufactured`` is the harness cause alone
    assert h["manufactured"] == sum(p["gap_items"] != 0 and p["robust_tie"] for p in s["pairs"])
    assert all(p["manufactured"] == (p.get("cause") == "harness") for p in s["pairs"])
    assert h["most_destructive"] == s["axes"]["most_destructive"]
    assert h["reference_order"] == [row["model"] for row in s["leaderboard"]]
    shares = [p["fragile_share"] for p in s["pairs"] if p["fragile_share"] is not None]
    assert h["mean_fragile_share"] == pytest.approx(np.mean(shares))


def test_fewer_than_three_benchmarks_gives_nothing():
    r = simulate(demo_spec(items_per_benchmark=20))
    two = r.select_items(np.flatnonzero(np.isin(r.items.benchmark, ["arc", "mmlu"])))
    assert leave_one_out(two, lambda red: 1) == {}
    assert set(leave_one_out(r, lambda red: red.shape[1])) == {"arc", "hellaswag", "mmlu", "truthfulqa"}
