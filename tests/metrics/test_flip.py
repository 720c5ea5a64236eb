"""Flip predictor (docs/audits.md, "Beyond the paper"): hand-computed cases, the bootstrap
identity, and planted truth (margins that predict flips vs margins that do not)."""

from __future__ import annotations


import numpy as np
import pytest

from leaderboard_audit.metrics.flip import (
    auc,
    auc_bootstrap,
    calibration,
    flip_predictor,
    item_resample_weights,
    margin_config,
    roc_curve,
    screen,
)
from leaderboard_audit.metrics.per_model import robust_masks
from leaderboard_audit.records import load_records
from leaderboard_audit.records.simulate import SimModel, SimSpec, simulate
from helpers.paths import REPO

REAL = REPO / "fixtures" / "real"


def brute_auc(margin: np.ndarray, fragile: np.ndarray) -> float:
    p, n = margin[fragile], margin[~fragile]
    return float(((p[:, None] < n[None, :]) + 0.5 * (p[:, None] == n[None, :])).mean())


@pytest.mark.parametrize("seed", range(8))
def test_auc_matches_pairwise_count_with_ties(seed):
    rng = np.random.default_rng(seed)
    m = rng.integers(0, 6, 80).astype(float)  # many ties
    f = rng.random(80) < 0.4
    assert auc(m, f) == pytest.approx(brute_auc(m, f), abs=1e-12)


def test_auc_undefined_with_one_class():
    assert auc(np.array([0.1, 0.2]), np.array([True, True])) is None
    assert auc(np.array([0.1, 0.2]), np.array([False, False])) is None


def test_auc_direction_low_margin_is_fragile():
    m = np.array([0.1, 0.2, 0.8, 0.9])
    assert auc(m, np.array([True, True, False, False])) == 1.0
    assert auc(m, np.array([False, False, True, True])) == 0.0


@pytest.mark.parametrize("seed", range(4))
def test_bootstrap_equals_auc_on_gathered_resamples(seed):
    """The weighted per-level formula must equal the AUC of the explicitly resampled
    observations (items drawn with replacement; every model's answer to an item kept)."""
    rng = np.random.default_rng(seed)
    M, N = 3, 40
    margin = rng.integers(0, 8, (M, N)).astype(float)
    fragile = rng.random((M, N)) < 0.5
    has = rng.random((M, N)) < 0.9
    mi, ii = np.nonzero(has)
    W = item_resample_weights(N, 30, np.random.default_rng(seed + 100))
    boots = auc_bootstrap(margin[mi, ii], fragile[mi, ii], ii, W)
    for b in range(W.shape[0]):
        draw = np.repeat(np.arange(N), W[b].astype(int))
        rows = [(m, i) for i in draw for m in range(M) if has[m, i]]
        mm = np.array([margin[m, i] for m, i in rows])
        ff = np.array([fragile[m, i] for m, i in rows])
        want = auc(mm, ff)
        assert boots[b] == pytest.approx(np.nan if want is None else want, abs=1e-9, nan_ok=True)


def test_resample_weights_are_item_counts():
    W = item_resample_weights(50, 20, np.random.default_rng(0))
    assert W.shape == (20, 50) and (W.sum(axis=1) == 50).all()


def test_screen_hand_computed():
    m = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    f = np.array([True, True, False, True, False])
    s = screen(m, f)
    assert (s["recall"], s["precision"], s["flagged"], s["margin_cutoff"]) == (2 / 3, 1.0, 2, 0.2)
    s = screen(m, f, precision=0.75)  # 3 of 4 flagged: exactly 0.75
    assert (s["recall"], s["flagged"], s["margin_cutoff"]) == (1.0, 4, 0.4)
    assert screen(m, np.array([False, False, False, False, True]))["recall"] is None


def test_screen_flags_ties_together():
    s = screen(np.array([0.0, 0.0, 0.0, 1.0]), np.array([True, True, False, True]))
    assert s["recall"] is None  # the tie at 0 flags 3 items at 2/3 precision


def test_roc_and_calibration_shape():
    rng = np.random.default_rng(1)
    m = rng.random(5000)
    f = rng.random(5000) < 1 - m  # lower margin: more often fragile
    roc = roc_curve(m, f)
    assert len(roc["fpr"]) <= 101 and roc["fpr"][0] == roc["tpr"][0] == 0.0
    assert roc["fpr"][-1] == roc["tpr"][-1] == 1.0 and roc["margin"][0] is None
    assert np.all(np.diff(roc["fpr"]) >= 0) and np.all(np.diff(roc["tpr"]) >= 0)
    cal = calibration(m, f)
    assert [c["decile"] for c in cal] == list(range(1, 11))
    assert sum(c["items"] for c in cal) == 5000 and sum(c["fragile"] for c in cal) == int(f.sum())
    rates = [c["rate"] for c in cal]
    assert rates[0] > 0.85 and rates[-1] < 0.15 and rates == sorted(rates, reverse=True)


def test_calibration_ties_share_a_decile():
    m = np.r_[np.zeros(50), np.arange(1, 51)].astype(float)
    cal = calibration(m, np.zeros(100, dtype=bool))
    assert sum(c["items"] for c in cal) == 100
    assert any(c["items"] == 0 and c["rate"] is None for c in cal)


def _planted(seed: int, predictive: bool, n_items: int = 100):
    spec = SimSpec(
        (SimModel("a", 0.8), SimModel("b", 0.0, scoring_shift={"ll": 1.0}), SimModel("c", -0.8)),
        {bb: n_items for bb in ("arc", "mmlu", "truthfulqa")},
        seed=seed,
    )
    r = simulate(spec)
    fragile = robust_masks(r.correct)[2]
    rng = np.random.default_rng(seed + 1000)
    margin = np.full(r.correct.shape, np.nan)
    k = r.grid.index("ll|cloze_plain")
    if predictive:  # fragile items have smaller margins on average (overlapping ranges)
        margin[:, :, k] = np.where(fragile, rng.uniform(0.0, 1.0, fragile.shape), rng.uniform(0.5, 1.5, fragile.shape))
    else:
        margin[:, :, k] = rng.uniform(0.0, 1.0, fragile.shape)
    return r, margin


def test_margins_that_predict_flips_give_high_auc():
    r, margin = _planted(3, predictive=True)
    out = flip_predictor(r.correct, margin, r.grid, models=r.models, seed=1, scope="pooled", n_boot=500)
    assert out["config"] == "ll|cloze_plain"
    # planted truth: P(U(0,1) < U(.5,1.5)) + 0 ties = 0.875
    assert out["pooled"]["auc"] == pytest.approx(0.875, abs=0.03)
    assert out["pooled"]["ci"][0] > 0.8
    for stats in out["per_model"].values():
        assert stats["auc"] > 0.75 and stats["ci"][0] > 0.65
    assert out["pooled"]["screen"]["recall"] > 0.3


def test_random_margins_give_chance_auc_and_the_ci_covers_it():
    covered = 0
    for seed in range(20):
        r, margin = _planted(seed, predictive=False)
        p = flip_predictor(r.correct, margin, r.grid, models=r.models, seed=seed, scope="pooled", n_boot=400)["pooled"]
        assert p["auc"] == pytest.approx(0.5, abs=0.08)
        covered += p["ci"][0] <= 0.5 <= p["ci"][1]
    assert covered >= 17, covered


def test_skipped_without_margins_and_config_choice():
    r, _ = _planted(0, predictive=True)
    assert "skipped" in flip_predictor(r.correct, None, r.grid, models=r.models, seed=1, scope="s")
    gen_only = np.full(r.correct.shape, np.nan)
    gen_only[:, :, 0] = 0.5
    assert margin_config(r.grid, gen_only)[0] is None
    assert "likelihood" in flip_predictor(r.correct, gen_only, r.grid, models=r.models, seed=1, scope="s")["skipped"]
    q_only = np.full(r.correct.shape, np.nan)
    q_only[:, :, r.grid.index("ll|cloze_question")] = 0.3
    assert r.grid.keys[margin_config(r.grid, q_only)[0]] == "ll|cloze_question"


def test_model_without_margins_and_deterministic():
    r, margin = _planted(5, predictive=True)
    margin[1] = np.nan
    a = flip_predictor(r.correct, margin, r.grid, models=r.models, seed=9, scope="pooled", n_boot=200)
    b = flip_predictor(r.correct, margin, r.grid, models=r.models, seed=9, scope="pooled", n_boot=200)
    assert a == b
    assert a["per_model"]["b"]["auc"] is None and a["per_model"]["b"]["no_margin"] == r.shape[1]
    assert a["pooled"]["items"] == 2 * r.shape[1]


@pytest.mark.skipif(not (REAL / "grid.json").exists(), reason="fixtures/real missing")
def test_real_fixture_margins():
    r = load_records(REAL)
    out = flip_predictor(r.correct, r.margin, r.grid, models=r.models, seed=1234, scope="pooled", n_boot=300)
    assert out["config"] == "ll|cloze_plain"
    assert set(out["per_model"]) == set(r.models)
    for stats in [*out["per_model"].values(), out["pooled"]]:
        assert stats["items"] == r.shape[1] * (len(r.models) if stats is out["pooled"] else 1)
        if stats["fragile"] in (0, stats["items"]):  # tiny models: every item can be fragile
            assert stats["auc"] is None and stats["reason"]
        else:
            # v3: tiny models have 0-3 robust items (399 v 1): no AUC below 10 items a class, and why
            assert stats["auc"] is None and stats["ci"] is None
            assert stats["reason"].startswith("too few items in a class for an AUC")
    assert "3 robust (both need >= 10)" in out["pooled"]["reason"]
