"""The verdict rounds of the budgeted plan (collect/verdict_plan.py; issue 44, item 3)."""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard_audit.collect.budget import budget_cells, plan
from leaderboard_audit.collect.replay import replay_plan, replayed_records
from leaderboard_audit.collect.verdict_plan import BAND_PASS, BAND_WARN, BandTargets, scope_groups
from leaderboard_audit.engine import audit
from leaderboard_audit.records import Items, Records
from leaderboard_audit.records.grid import paper_grid


def planted(M: int = 3, N: int = 600, seed: int = 5) -> Records:
    """Each model's configurations planted far apart (accuracies 0.3 to 0.9): every band fails
    on the full grid, by a margin a few whole configurations show."""
    grid = paper_grid()
    K = len(grid)
    rng = np.random.default_rng(seed)
    acc = np.stack([rng.permutation(np.linspace(0.3, 0.9, K)) for _ in range(M)])
    C = rng.random((M, N, K)) < acc[:, None, :]
    bench = np.array(["arc"] * (N // 2) + ["mmlu"] * (N - N // 2), dtype=object)
    ids = np.array([f"q{i}" for i in range(N)], dtype=object)
    items = Items(bench, ids, [0] * N, [None] * N, [None] * N)
    return Records(C, tuple(f"m{j}" for j in range(M)), items, grid)


def band_statuses(records: Records) -> dict[str, tuple[str, bool]]:
    rep = audit(records, n_boot=50)
    return {
        v["id"]: (v["status"], v.get("decided", True))
        for s in rep["scopes"].values()
        for v in s["verdicts"]
        if v["check"] == "band"
    }


@pytest.mark.slow
def test_the_verdict_rounds_decide_band_fails_the_robust_first_plan_does_not():
    full = planted()
    truth = band_statuses(full)
    assert {s for s, _ in truth.values()} == {"fail"}
    got = {}
    for rounds in (True, False):
        p = replay_plan(full, 0.25, 0, verdict_rounds=rounds)
        got[rounds] = band_statuses(replayed_records(full, p, fraction=0.25, seed=0))
        for vid, (status, decided) in got[rounds].items():
            assert not decided or status == truth[vid][0], vid  # decided means the full grid's
    n_with = sum(d for _, d in got[True].values())
    n_without = sum(d for _, d in got[False].values())
    assert n_with == len(truth), got[True]  # every band fail, in the pooled and benchmark scopes
    assert n_without <= len(truth) // 2, got[False]  # measured: 4 of 9


def test_the_plan_is_deterministic_spends_within_the_budget_and_keeps_the_sample():
    full = planted(M=2, N=300)
    C = np.asarray(full.correct)
    a = replay_plan(full, 0.2, 7)
    b = replay_plan(full, 0.2, 7)
    assert np.array_equal(a.observed, b.observed) and a.rounds == b.rounds
    assert a.cells == sum(r["cells"] for r in a.rounds)  # no cell asked twice (plan also refuses)
    assert a.cells <= budget_cells(0.2, full.shape)
    assert any(r["kind"] == "verdicts" for r in a.rounds)
    plain = replay_plan(full, 0.2, 7, verdict_rounds=False)
    assert np.array_equal(a.sample, plain.sample)  # the design-based sample is the same draw
    assert a.observed[:, a.sample].all() and np.array_equal(a.correct, C & a.observed)
    assert not np.array_equal(a.observed, replay_plan(full, 0.2, 8).observed)


def test_targets_name_only_unobserved_cells_within_what_is_left():
    full = planted(M=2, N=300)
    C = np.asarray(full.correct)
    M, N, K = full.shape
    ref = full.grid.reference_index
    t = BandTargets(scope_groups(full.items.benchmark))
    observed = np.zeros(full.shape, dtype=bool)
    observed[:, :, ref] = True
    sample = np.arange(0, N, 10)
    observed[:, sample] = True
    for left in (50, N, 4 * N, 10**6):
        m, i, k = t(observed, C & observed, sample, left)
        assert len(m) <= left
        assert not observed[m, i, k].any()
        assert len(set(zip(m.tolist(), i.tolist(), k.tolist()))) == len(m)
    m, i, k = t(observed, C & observed, sample, 50)
    assert len(m) == 0  # a part of a verdict's columns decides nothing: not bought


def test_answers_are_asked_only_for_planned_cells():
    full = planted(M=2, N=300)
    C = np.asarray(full.correct)
    asked = np.zeros(full.shape, dtype=int)

    def answer(m, i, k):
        np.add.at(asked, (m, i, k), 1)
        return C[m, i, k]

    p = plan(
        answer,
        full.shape,
        full.grid.reference_index,
        0.3,
        3,
        targets=BandTargets(scope_groups(full.items.benchmark)),
    )
    assert asked.max() == 1 and np.array_equal(asked == 1, p.observed)


@pytest.mark.parametrize("benchmarks", [["a"] * 4, ["a", "b", "a", "b"]])
def test_scope_groups_are_the_audit_scopes(benchmarks):
    g = scope_groups(np.array(benchmarks, dtype=object))
    assert np.array_equal(g[0], np.arange(4))
    assert len(g) == (1 if len(set(benchmarks)) == 1 else 3)


def spreads(N: int = 400, seed: int = 3) -> Records:
    """Four models whose full-grid bands pass (m0: robust items), warn (m1: 0.58..0.62) and
    fail (m2: 0.3..0.9, m3: 0.5..0.7), in the pooled scope and both benchmarks'."""
    grid = paper_grid()
    K = len(grid)
    rng = np.random.default_rng(seed)
    acc = np.stack(
        [
            np.full(K, 0.6),
            np.linspace(0.58, 0.62, K),
            rng.permutation(np.linspace(0.3, 0.9, K)),
            rng.permutation(np.linspace(0.5, 0.7, K)),
        ]
    )
    C = rng.random((4, N, K)) < acc[:, None, :]
    C[0] = C[0, :, :1]
    bench = np.array(["arc"] * (N // 2) + ["mmlu"] * (N - N // 2), dtype=object)
    items = Items(bench, np.array([f"q{i}" for i in range(N)], dtype=object), [0] * N, [None] * N, [None] * N)
    return Records(C, ("m0", "m1", "m2", "m3"), items, grid)


@pytest.mark.parametrize("fraction,n_decided", [(0.3, 0), (0.8, 3), (0.97, 6), (0.995, 9)])
def test_the_plan_judges_a_band_decided_exactly_when_the_audit_does(fraction, n_decided):
    """The plan's stopping test and the audit's band verdicts are one rule
    (metrics.incomplete.band_sides): on each scope, a model's band is decided for the plan
    exactly when the audit of the same cells reports it decided (pass, warn and fail among
    them); and the plan's default thresholds are the band check's."""
    from leaderboard_audit.checks import registry

    assert registry()["band"].thresholds == {"band_pass": BAND_PASS, "band_warn": BAND_WARN}
    full = spreads()
    observed = np.random.default_rng(1).random(full.shape) < fraction
    observed[:, :, full.grid.reference_index] = True
    missing = np.where(observed, 0, 1).astype(np.int8)
    got = band_statuses(Records(full.correct & observed, full.models, full.items, full.grid, missing=missing))
    assert sum(d for _, d in got.values()) == n_decided
    targets = BandTargets(scope_groups(full.items.benchmark))
    scopes = {"pooled": np.arange(full.shape[1])} | {
        b: np.flatnonzero(full.items.benchmark == b) for b in full.benchmarks
    }
    for scope, g in scopes.items():
        plan_says = targets.decided(observed, full.correct, g)
        for m, model in enumerate(full.models):
            assert got[f"band[{scope}-{model}]"][1] == bool(plan_says[m]), (scope, model)
