"""The bootstrap over battles against the Fisher information, and the identified order on
planted strengths."""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard_audit.arena.audit import audit_arena
from leaderboard_audit.arena.bootstrap import bootstrap_draws, resample
from leaderboard_audit.arena.rules import ELO_SCALE, bt_scores, outcome_weights

from helpers.arena import simulate_counts


def fisher_se(pc, theta):
    """Standard errors of theta_i - theta_0 from the inverse Fisher information."""
    wi, wj = outcome_weights(pc.counts, "all_halved")
    n = wi + wj
    p = 1 / (1 + np.exp(-(theta[pc.i] - theta[pc.j])))
    M = len(pc.models)
    info = np.zeros((M, M))
    for a, b, v in zip(pc.i, pc.j, n * p * (1 - p)):
        info[a, a] += v
        info[b, b] += v
        info[a, b] -= v
        info[b, a] -= v
    cov = np.linalg.inv(info[1:, 1:])  # theta_0 fixed at 0: the differences against model 0
    return np.sqrt(np.diag(cov))


def test_resample_keeps_the_battle_count():
    pc = simulate_counts(np.zeros(4), 100, seed=1, tie=0.2)
    r = resample(pc, np.random.default_rng(0))
    assert r.n_battles == pc.n_battles and r.counts.shape == pc.counts.shape


def test_bootstrap_se_matches_fisher_information():
    truth = np.array([0.0, 0.4, -0.3, 0.8, 0.1])
    pc = simulate_counts(truth, 500, seed=9, tie=0.15)
    centre = bt_scores(pc, "all_halved")
    draws = bootstrap_draws(pc, "bt_bothbad_halved", centre, 400, seed=3)["bt_bothbad_halved"]
    boot = (draws[:, 1:] - draws[:, [0]]).std(axis=0, ddof=1) / ELO_SCALE
    theta = (centre - 1000) / ELO_SCALE
    assert boot == pytest.approx(fisher_se(pc, theta), rel=0.15)


def test_identified_order_recovers_planted_tiers():
    # three clear levels, two models each; battles enough to separate levels, not twins
    truth = np.array([1.5, 1.5, 0.0, 0.0, -1.5, -1.5])
    pc = simulate_counts(truth, 300, seed=4)
    rep = audit_arena(pc, n_boot=300, seed=1, n_shuffles=1)
    tiers = [sorted(t) for t in rep["identified"]["tiers"]]
    assert tiers == [["m0", "m1"], ["m2", "m3"], ["m4", "m5"]]
    assert rep["champions"]["bt_bothbad_halved"][0] in ("m0", "m1")


def test_the_batched_fit_is_each_rows_own_fit():
    """``bradley_terry_batch`` (one Hessian for every resample, steps until they stop) lands on
    each resample's own optimum, as one tight Newton-CG fit per resample does; a row that
    has not converged after ``max_iter`` steps gets that fit."""
    from leaderboard_audit.arena.rules import bradley_terry, bradley_terry_batch

    truth = np.array([0.0, 0.4, -0.3, 0.8, 0.1, -1.2, 2.0])
    pc = simulate_counts(truth, 300, seed=5, tie=0.1)
    M = len(pc.models)
    init = (bt_scores(pc, "all_halved") - 1000) / ELO_SCALE
    rng = np.random.default_rng(2)
    w = [outcome_weights(resample(pc, rng).counts, "all_halved") for _ in range(12)]
    wi, wj = np.array([a for a, _ in w]), np.array([b for _, b in w])
    own = np.array([bradley_terry(pc.i, pc.j, a, b, M, init, xtol=1e-12) for a, b in w])
    assert np.abs(bradley_terry_batch(pc.i, pc.j, wi, wj, M, init) - own).max() * ELO_SCALE < 1e-4
    assert np.abs(bradley_terry_batch(pc.i, pc.j, wi, wj, M, init, max_iter=1) - own).max() * ELO_SCALE < 1e-3
    assert np.abs(init - own).max() * ELO_SCALE > 1  # the resamples do move the fit
