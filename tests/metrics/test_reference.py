"""The vectorized metrics against the simple loop implementation in tests/helpers/reference_impl.py,
on simulated grids (several seeds, shapes with ties and degenerate items)."""

from __future__ import annotations

import numpy as np
import pytest

import helpers.reference_impl as ref_impl
from leaderboard_audit.metrics.axes import axis_groups
from leaderboard_audit.records.grid import paper_grid
from leaderboard_audit.engine import audit_scope
from leaderboard_audit.records.simulate import SimModel, SimSpec, simulate


def small_spec(seed: int) -> SimSpec:
    rng = np.random.default_rng(seed)
    models = tuple(
        SimModel(
            f"m{j}",
            float(rng.normal(0, 1)),
            scoring_shift={"ll": float(rng.normal(0, 1.5))},
            template_shift={"digit_labels": float(rng.normal(0, 1))},
        )
        for j in range(5)
    )
    models += (SimModel("m5", models[0].ability, twin_of="m0", template_shift={"letter_plain": 0.7}),)
    return SimSpec(models, {"arc": 40, "mmlu": 50}, seed=seed)


@pytest.fixture(params=[1, 2, 3], ids=lambda s: f"seed{s}")
def case(request):
    records = simulate(small_spec(request.param))
    return records, audit_scope(records, "pooled", seed=5, n_boot=4000)


def as_lists(records):
    return records.correct.astype(int).tolist()


def test_per_model_matches_loops(case):
    records, s = case
    C = as_lists(records)
    ref = records.grid.reference_index
    want = ref_impl.per_model(C, ref)
    got = {row["model"]: row for row in s["leaderboard"]}
    for m, name in enumerate(records.models):
        for key, val in want[m].items():
            assert got[name][key] == pytest.approx(val, abs=1e-12), (name, key)
    assert [r["model"] for r in s["leaderboard"]] == [records.models[m] for m in ref_impl.order(C, ref, records.models)]


def test_pairs_match_loops(case):
    records, s = case
    C = as_lists(records)
    ref = records.grid.reference_index
    idx = {n: m for m, n in enumerate(records.models)}
    for p in s["pairs"]:
        want = ref_impl.pair(C, ref, idx[p["higher"]], idx[p["lower"]])
        for key in ("gap_items", "robust_items", "higher_only", "lower_only", "reversing"):
            assert p[key] == want[key], key
        assert p["gap"] == pytest.approx(want["gap"], abs=1e-12)
        if want["fragile_share"] is None:
            assert p["fragile_share"] is None
        else:
            assert p["fragile_share"] == pytest.approx(want["fragile_share"], abs=1e-9)
        if want["ci"] is None:
            assert p["ci"] is None and p["robust_tie"]
        else:
            assert p["robust_diff"] == pytest.approx(want["robust_diff"], abs=1e-12)
            if want["ci"][0] == want["ci"][1]:  # every resample alike: the score interval instead
                assert p["ci_method"].startswith("Wilson") and p["ci"][0] < want["ci"][0] < p["ci"][1]
                continue
            # percentile bounds move in steps of 1/|J|: allow one step beyond Monte Carlo noise
            tol = 0.02 + 1.0 / p["robust_items"]
            assert p["ci"] == pytest.approx(list(want["ci"]), abs=tol)


def test_champions_match_loops(case):
    records, s = case
    C = as_lists(records)
    ref = records.grid.reference_index
    want = ref_impl.champions(C, ref, records.models)
    ch = s["champions"]
    assert sorted(ch["set"]) == want["set"]
    assert sorted(ch["outright"]) == want["outright"]
    assert sorted(ch["top3"]) == want["top3"]
    assert ch["rank_range"] == want["rank_range"]
    for row, (winners, margin) in zip(ch["per_config"], want["per_config"]):
        assert sorted(row["winners"]) == winners
        assert row["margin"] == (None if margin is None else pytest.approx(margin, abs=1e-12))
    assert ch["kendall_tau"]["mean"] == pytest.approx(want["tau_mean"], abs=1e-12)
    assert ch["kendall_tau"]["min"] == pytest.approx(want["tau_min"], abs=1e-12)


def test_kendall_matches_scipy(case):
    from scipy.stats import kendalltau
    from leaderboard_audit.metrics.kendall import kendall_tau_b

    records, _ = case
    acc = records.correct.mean(axis=1)
    ours = kendall_tau_b(acc[:, 0], acc)
    for k in range(acc.shape[1]):
        theirs = kendalltau(acc[:, 0], acc[:, k]).statistic
        assert (np.isnan(ours[k]) and np.isnan(theirs)) or ours[k] == pytest.approx(theirs, abs=1e-12)


def test_compression_inputs_match_loops(case):
    from leaderboard_audit.metrics.compression import discrimination, fragility

    records, s = case
    C = as_lists(records)
    ref = records.grid.reference_index
    disc, frag = ref_impl.disc_and_fragility(C, ref)
    ours_d = discrimination(records.correct, ref)
    ours_f = fragility(records.correct)
    for i, d in enumerate(disc):
        assert (d is None and np.isnan(ours_d[i])) or ours_d[i] == pytest.approx(d, abs=1e-12)
    assert ours_f == pytest.approx(frag, abs=1e-12)
    defined = [(d, f) for d, f in zip(disc, frag) if d is not None]
    corr = ref_impl.pearson([d for d, _ in defined], [f for _, f in defined])
    comp = s["compression"]
    assert comp["corr"] == pytest.approx(corr, abs=1e-9)
    assert comp["disc_undefined"] == sum(d is None for d in disc)
    assert comp["mean_fragility_all"] == pytest.approx(sum(frag) / len(frag), abs=1e-12)
    vals = sorted((d for d, _ in defined), reverse=True)
    v = vals[comp["k"] - 1]
    assert comp["cutoff_above"] == sum(d > v for d in vals)
    assert comp["cutoff_ties"] == sum(d == v for d in vals)
    assert comp["champions_full"] == len(ref_impl.champions(C, ref, records.models)["set"])


def test_axes_and_brittleness_match_loops(case):
    records, s = case
    C = as_lists(records)
    groups = axis_groups(records.grid)
    want = ref_impl.axes(C, groups)
    for m, name in enumerate(records.models):
        for a in groups:
            assert s["axes"]["robust_accuracy"][name][a] == pytest.approx(want[a][m], abs=1e-12)
        b = ref_impl.brittleness(C)[m]
        for key, val in b.items():
            assert s["brittleness"][name][key] == pytest.approx(val, abs=1e-12)


def test_paper_grid_axis_sizes():
    g = axis_groups(paper_grid())
    assert {a: len(v) for a, v in g.items()} == {"ordering": 6, "format": 4, "scoring": 3, "joint": 26}


def test_count_bootstrap_matches_item_resampling_in_distribution():
    from leaderboard_audit.metrics.compression import pearson_rows, weighted_pearson_bootstrap

    rng = np.random.default_rng(3)
    x = np.round(rng.normal(size=400), 1)  # few distinct values, as disc has
    y = rng.integers(0, 7, size=400) / 6  # fragility: k / models
    y = np.clip(y + (x > 0) / 6, 0, 1)
    fast = weighted_pearson_bootstrap(x, y, 4000, np.random.default_rng(9))
    idx = np.random.default_rng(10).integers(0, 400, size=(4000, 400))
    slow = pearson_rows(x[idx], y[idx])
    assert np.mean(fast) == pytest.approx(np.mean(slow), abs=0.005)
    assert np.percentile(fast, [2.5, 97.5]) == pytest.approx(np.percentile(slow, [2.5, 97.5]), abs=0.01)
    # the same item draws give the same correlations as gathering the items
    same = weighted_pearson_bootstrap(x, y, 50, np.random.default_rng(4))
    idx = np.random.default_rng(4).integers(0, 400, size=(50, 400))
    assert same == pytest.approx(pearson_rows(x[idx], y[idx]), abs=1e-9)


def test_count_bootstrap_constant_resamples_are_undefined_not_rounding_noise():
    """A resample that misses the only items with another y has a constant y: its correlation
    is undefined (NaN, dropped from the CI), never a value like -7e-9 left by cancellation."""
    from leaderboard_audit.metrics.compression import pearson_rows, weighted_pearson_bootstrap

    rng = np.random.default_rng(0)
    n = 93
    x = np.round(rng.normal(size=n), 1)
    y = np.full(n, 1.0)
    y[:2] = 2 / 3  # rare: about 13% of resamples draw neither item
    fast = weighted_pearson_bootstrap(x, y, 3000, np.random.default_rng(7), chunk_cells=500)
    idx = np.random.default_rng(7).integers(0, n, size=(3000, n))
    constant = (y[idx] == y[idx][:, :1]).all(axis=1) | (x[idx] == x[idx][:, :1]).all(axis=1)
    assert constant.sum() > 100
    assert np.array_equal(np.isnan(fast), constant)
    slow = pearson_rows(x[idx], y[idx])
    assert fast[~constant] == pytest.approx(slow[~constant], abs=1e-9)
