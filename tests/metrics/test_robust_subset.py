"""Robust subset (docs/audits.md, "Beyond the paper"): eligibility, the cap, agreement with
compression's top-k, and planted truth (the robust subset is less fragile than top-k)."""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard_audit.metrics.compression import compression, discrimination
from leaderboard_audit.metrics.rng import rng_for
from leaderboard_audit.metrics.robust_subset import fragile_model_counts, robust_cap, robust_subset, top_k_draws
from leaderboard_audit.records.grid import paper_grid
from leaderboard_audit.records.simulate import demo_spec, simulate


def test_cap_is_a_strict_majority_then_raised():
    n_frag = np.array([0, 1, 2, 3, 4, 5, 5, 5])
    defined = np.arange(8)
    assert robust_cap(n_frag, defined, 5, 3) == (2, False)  # fragile for < 2.5 of 5 models
    assert robust_cap(n_frag, defined, 4, 2) == (1, False)  # < 2 of 4
    assert robust_cap(n_frag, defined, 5, 5) == (4, True)
    assert robust_cap(n_frag, defined, 5, 8) == (5, True)


def test_top_k_draws_keeps_above_and_breaks_ties():
    v = np.array([0.9, 0.5, 0.5, 0.5, 0.1, 0.7])
    subsets, cut, above, ties = top_k_draws(v, np.arange(6), 3, 50, np.random.default_rng(0))
    assert (cut, above, ties) == (0.5, 2, 3)
    assert subsets.shape == (50, 3)
    assert all({0, 5} <= set(s) and len(set(s) & {1, 2, 3}) == 1 for s in subsets.tolist())
    assert len({tuple(s) for s in subsets.tolist()}) > 1


def test_subset_is_eligible_and_matches_compression_topk():
    r = simulate(demo_spec(items_per_benchmark=80, seed=3))
    C, ref = r.correct, r.grid.reference_index
    out = robust_subset(C, ref, seed=5, scope="pooled", k=50)
    comp = compression(C, ref, seed=5, scope="pooled", k=50)
    assert out["topk"]["champions_mean"] == comp["champions_topk_mean"]
    assert out["topk"]["mean_fragility"] == pytest.approx(comp["mean_fragility_topk"], abs=1e-12)
    # rebuild the robust draws and check every item is eligible
    disc = discrimination(C, ref)
    n_frag = fragile_model_counts(C)
    defined = np.flatnonzero(~np.isnan(disc))
    eligible = defined[n_frag[defined] <= out["fragile_models_cap"]]
    assert out["eligible"] == eligible.size
    subsets, *_ = top_k_draws(disc, eligible, 50, 200, rng_for(5, "robust_subset", "pooled"))
    assert (n_frag[subsets] <= out["fragile_models_cap"]).all()
    assert not out["cap_raised"] and out["fragile_models_cap"] == 2  # 6 models: < 3 fragile
    assert out["mean_fragility"] <= out["fragile_models_cap"] / 6


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_planted_robust_subset_is_less_fragile_than_topk(seed):
    """The simulator's robust items (sensitivity 0) never flip; compression's top-k keeps
    fragile items, the robust subset does not, and it keeps the order about as well."""
    r = simulate(demo_spec(items_per_benchmark=150, seed=seed))
    out = robust_subset(r.correct, r.grid.reference_index, seed=seed, scope="pooled", k=100)
    assert out["mean_fragility"] < out["topk"]["mean_fragility"]
    assert out["mean_fragility"] < out["mean_fragility_all"]
    assert out["kendall_tau_mean"] > 0.6 and out["champions_min"] >= 1


def test_reduced_k_and_skip():
    r = simulate(demo_spec(items_per_benchmark=20, seed=1))
    out = robust_subset(r.correct, r.grid.reference_index, seed=1, scope="arc", k=100)
    assert out["k"] == 40 and out["k_reduced"]
    g = paper_grid()
    C = np.ones((3, 10, len(g)), dtype=bool)  # every item right for every model: no disc
    assert "skipped" in robust_subset(C, g.reference_index, seed=1, scope="s", k=4)
