"""Decided verdicts on incomplete grids are the full grid's (issue 44: "exact ones are identical
by construction, and a test fails if any differs"), and the bounds and the estimator are each
caught when mutated: counting unknown cells one way only, or estimating from adaptively
chosen cells instead of the design's random sample."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from leaderboard_audit.checks import incomplete as inc_checks
from leaderboard_audit.collect.replay import replay_plan, replayed_records
from leaderboard_audit.engine import audit, make_scope
from leaderboard_audit.metrics import incomplete as inc
from leaderboard_audit.records import Records, load_records
from leaderboard_audit.records.simulate import SimModel, SimSpec, simulate

from helpers.builders import stable_records

ROOT = Path(__file__).resolve().parents[2]
# every test here audits fixtures/real (or a replay of it) several times: 5 to 50 s each
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def real() -> tuple[Records, dict[str, str]]:
    full = load_records(ROOT / "fixtures" / "real")
    return full, statuses(full)


def statuses(records: Records) -> dict[str, str]:
    rep = audit(records, n_boot=100)
    return {v["id"]: v for s in rep["scopes"].values() for v in s["verdicts"]}


def masked(full: Records, rate: float, seed: int) -> Records:
    """``full`` with a uniformly random ``rate`` of its non-reference cells not collected."""
    rng = np.random.default_rng(seed)
    miss = (rng.random(full.shape) < rate).astype(np.int8)
    miss[:, :, full.grid.reference_index] = 0
    return replace(full, correct=np.asarray(full.correct) & (miss == 0), missing=miss)


def compare(incomplete: Records, truth: dict[str, dict]) -> tuple[int, list[tuple[str, str, str]]]:
    """(decided verdicts, the decided ones whose status differs from the full grid's)."""
    n, wrong = 0, []
    for s in audit(incomplete, n_boot=100)["scopes"].values():
        for v in s["verdicts"]:
            if v.get("decided"):
                n += 1
                if v["status"] != truth[v["id"]]["status"]:
                    wrong.append((v["id"], v["status"], truth[v["id"]]["status"]))
    return n, wrong


@pytest.fixture(scope="module")
def steady() -> tuple[Records, dict[str, str]]:
    """Every model answers alike under every configuration: every band passes (spread 0)."""
    full = stable_records()
    return full, statuses(full)


def test_every_decided_verdict_equals_the_full_grids(real, steady):
    full, truth = real
    decided = 0
    for rate, seed in ((0.01, 5), (0.05, 6)):
        n, wrong = compare(masked(steady[0], rate, seed), steady[1])
        assert wrong == [], (rate, wrong)
        decided += n
    for rate, seed in ((0.003, 0), (0.01, 1), (0.05, 2)):
        n, wrong = compare(masked(full, rate, seed), truth)
        assert wrong == [], (rate, wrong)
        decided += n
    for budget, seed in ((0.1, 3), (0.3, 4)):
        p = replay_plan(full, budget, seed)
        n, wrong = compare(replayed_records(full, p, fraction=budget, seed=seed), truth)
        assert wrong == [], (budget, wrong)
        decided += n
    assert decided >= 20  # the comparison is not vacuous: the exact rules decide here


def test_counting_unknown_cells_one_way_only_is_caught(steady, monkeypatch):
    """The mutation: every unknown cell counted wrong (the bounds collapse to the observed
    counts). The comparison above then finds decided verdicts that contradict the full grid:
    a hidden right answer reads as a flip, and a steady model's band as wide."""
    full, truth = steady

    def wrong_only(correct, missing):
        lo, _ = inc.count_bounds.__wrapped__(correct, missing)
        return lo, lo

    def wrong_only_r(correct, missing, configs=None):
        lo, _ = inc.right_count_bounds.__wrapped__(correct, missing, configs)
        return lo, lo

    wrong_only.__wrapped__ = inc.count_bounds  # type: ignore[attr-defined]
    wrong_only_r.__wrapped__ = inc.right_count_bounds  # type: ignore[attr-defined]
    monkeypatch.setattr(inc, "count_bounds", wrong_only)
    monkeypatch.setattr(inc, "right_count_bounds", wrong_only_r)
    found = []
    for rate, seed in ((0.01, 1), (0.05, 2)):
        found += compare(masked(full, rate, seed), truth)[1]
    assert found, "one-sided bounds went unnoticed"


# a small grid with planted robust accuracies far apart, so coverage is measured in seconds
SPEC = SimSpec(
    models=tuple(SimModel(f"m{j}", a) for j, a in enumerate((-1.0, 0.0, 0.8, 1.6))),
    items_per_benchmark={"b": 400},
    robust_share=0.2,
    item_noise=1.0,
    seed=7,
)


BUDGET = 0.1  # robust statuses still open, so the intervals are not the exact bounds


def coverage(full: Records, seeds: int) -> float:
    truth = np.asarray(full.correct).all(axis=2).mean(axis=1)
    hits = []
    for s in range(seeds):
        p = replay_plan(full, BUDGET, s)
        rec = replayed_records(full, p, fraction=BUDGET, seed=s)
        est = inc_checks.robust_estimates(make_scope(rec, "b"))
        assert est is not None
        for m, name in enumerate(full.models):
            _, lo, hi = est["robust_accuracy"][name]
            hits.append(lo - 1e-12 <= truth[m] <= hi + 1e-12)
    return float(np.mean(hits))


def test_robust_accuracy_intervals_from_the_random_sample_cover(monkeypatch):
    full = simulate(SPEC)
    assert coverage(full, 40) >= 0.9


def test_estimating_from_adaptively_chosen_cells_is_caught(monkeypatch):
    """The mutation: the (model, item) pairs whose robust status the rounds settled stand in for
    the random sample. The rounds settle a pair at its first failure and a robust one only after
    every configuration, so the settled pairs are mostly not robust: the estimate is biased
    down and the intervals stop covering."""
    full = simulate(SPEC)

    def settled(b, m, sample):
        known = b.status[m] != inc.UNDECIDED
        return b.status[m][known] == inc.ROBUST

    monkeypatch.setattr(inc_checks, "sample_values", settled)
    assert coverage(full, 40) < 0.5


def test_the_band_round_observes_each_models_band_config_whole_and_stays_exact(steady, real):
    """collect/budget.py ``band_round``: each model's config farthest from the reference on the
    sample, on every item (the plan raises if a cell is asked twice); its verdicts stay exact."""
    from leaderboard_audit.collect.budget import band_config

    full, truth = real
    p = replay_plan(full, 0.2, 3, band_round=True)
    assert [r["kind"] for r in p.rounds[:3]] == ["reference", "random_sample", "band"]
    ks = band_config(np.asarray(full.correct) & p.observed, p.sample, full.grid.reference_index)
    assert all(p.observed[m, :, k].all() for m, k in enumerate(ks.tolist()))
    assert p.cells <= p.budget_cells
    n, wrong = compare(replayed_records(full, p, fraction=0.2, seed=3), truth)
    assert wrong == []
    without = replay_plan(full, 0.2, 3)
    assert "band" not in [r["kind"] for r in without.rounds]


def test_forked_scopes_give_the_serial_bytes_on_incomplete_records(real):
    """engine/parallel.py judges mix in the pool: its verdicts are decided there too."""
    from leaderboard_audit.engine import dumps_report

    full, _ = real
    rec = replayed_records(full, replay_plan(full, 0.3, 1), fraction=0.3, seed=1)
    serial = dumps_report(audit(rec, n_boot=100))
    assert dumps_report(audit(rec, n_boot=100, workers=2)) == serial
    assert '"decided": false' in serial


def test_a_replays_design_gives_estimates_in_the_section_and_the_undecided_band_verdicts(real):
    full, _ = real
    p = replay_plan(full, 0.1, 2)
    rep = audit(replayed_records(full, p, fraction=0.1, seed=2), n_boot=100)
    pooled = rep["scopes"]["pooled"]
    est = pooled["incomplete"]["estimates"]
    assert est["items"] == len(p.sample) > 0
    bounds = pooled["incomplete"]["robust_accuracy_bounds"]
    for model, (value, lo, hi) in est["robust_accuracy"].items():
        assert bounds[model][0] <= lo <= hi <= bounds[model][1]
    band = [v for v in pooled["verdicts"] if v["check"] == "band" and v.get("decided") is False]
    assert band and all(v["evidence"]["estimate"]["items"] == len(p.sample) for v in band)


def test_a_model_without_a_config_is_compared_on_the_configs_it_has(real):
    """Every ll cell of one model not possible: the section names the configs it was compared
    on, and its band (all other cells observed) is decided on those configs."""
    from leaderboard_audit.records.missing import NOT_POSSIBLE

    full, _ = real
    ll = [k for k, key in enumerate(full.grid.keys) if key.startswith("ll|")]
    miss = np.zeros(full.shape, dtype=np.int8)
    miss[0][:, ll] = NOT_POSSIBLE
    rec = replace(full, correct=np.asarray(full.correct) & (miss == 0), missing=miss)
    rep = audit(rec, n_boot=100)
    on = rep["scopes"]["pooled"]["incomplete"]["compared_on"]
    assert on == {full.models[0]: [k for k in full.grid.keys if not k.startswith("ll|")]}
    band = {v["id"]: v for v in rep["scopes"]["pooled"]["verdicts"]}[f"band[pooled-{full.models[0]}]"]
    assert band["decided"] is True and f"on its {len(full.grid.keys) - len(ll)} possible configs" in band["message"]
