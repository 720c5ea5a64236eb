"""Compression statistics that a wrong implementation would change (AUDITS.md, "Compression"):
the correlation CI's level, the random top-k tie-break, the mean over draws, the
without-replacement baseline, exact discrimination ties."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import helpers.reference_impl as ref_impl

from leaderboard_audit.metrics.champions import champion_count
from leaderboard_audit.metrics.compression import compression, discrimination, fragility, pearson_rows
from leaderboard_audit.records.simulate import SimModel, SimSpec, simulate


def test_correlation_ci_is_the_95_percent_item_resampling_interval():
    rng = np.random.default_rng(0)
    models = tuple(
        SimModel(f"m{j}", float(rng.normal(0, 1)), scoring_shift={"ll": float(rng.normal(0, 1.5))}) for j in range(8)
    )
    r = simulate(SimSpec(models, {"arc": 150, "mmlu": 150}, seed=2))
    C, ref = r.correct, r.grid.reference_index
    comp = compression(C, ref, seed=1, scope="pooled")
    d, f = discrimination(C, ref), fragility(C)
    keep = ~np.isnan(d)
    d, f = d[keep], f[keep]
    idx = np.random.default_rng(5).integers(0, d.size, size=(8000, d.size))
    boots = pearson_rows(d[idx], f[idx])
    lo, hi = np.percentile(boots[~np.isnan(boots)], [2.5, 97.5])
    width = hi - lo
    assert width > 0.1  # not a degenerate case
    assert comp["ci"][0] == pytest.approx(lo, abs=0.08 * width)
    assert comp["ci"][1] == pytest.approx(hi, abs=0.08 * width)  # an 80% interval is 35% narrower


def tie_case():
    """4 models x 8 items x 2 configs (seeded): with k = 4, three items lie above the
    cutoff and items 2 and 7 tie at it for the last slot; item 2 is fragile for 3 of the
    4 models, item 7 for 1; the champion count is 3 with item 2 and 2 with item 7."""
    C = np.random.default_rng(3).random((4, 8, 2)) < 0.5
    d, f = discrimination(C, 0), fragility(C)
    above, ties = [0, 3, 5], [2, 7]
    v = d[ties[0]]
    assert d[ties[1]] == v and (np.nan_to_num(d, nan=-2) > v).sum() == 3 and set(np.flatnonzero(d == v)) == {2, 7}
    assert f[ties].tolist() == [0.75, 0.25] and f[above].sum() == 1.75
    assert [champion_count(C[:, above + [t]]) for t in ties] == [3, 2]
    return C


def test_topk_tie_break_is_random():
    comp = compression(tie_case(), 0, seed=11, scope="s", k=4)
    assert (comp["cutoff_above"], comp["cutoff_ties"], comp["k"]) == (3, 2, 4)
    # a fixed tie-break (first, last, by index, one permutation reused) gives min == max
    assert (comp["champions_topk_min"], comp["champions_topk_max"]) == (2, 3)
    assert comp["champions_topk_mean"] == pytest.approx(2.5, abs=4 * 0.5 / np.sqrt(200))


def test_topk_fragility_is_the_mean_over_draws():
    comp = compression(tie_case(), 0, seed=11, scope="s", k=4)
    # each draw: (1.75 + 0.75) / 4 = 0.625 or (1.75 + 0.25) / 4 = 0.5, each with chance 1/2
    expected, sd_of_mean = 0.5625, 0.0625 / np.sqrt(200)
    assert comp["mean_fragility_topk"] == pytest.approx(expected, abs=4 * sd_of_mean)
    assert comp["mean_fragility_all"] == pytest.approx(fragility(tie_case()).mean(), abs=1e-15)


def test_random_baseline_draws_without_replacement():
    # model a right on items 0, 1; b on 2, 3; one config; k = 2 of N = 4
    C = np.zeros((2, 4, 1), dtype=bool)
    C[0, :2] = C[1, 2:] = True
    subsets = list(itertools.combinations(range(4), 2))
    without = np.mean([champion_count(C[:, list(s)]) for s in subsets])
    with_repl = np.mean([champion_count(C[:, list(s)]) for s in itertools.product(range(4), repeat=2)])
    assert (without, with_repl) == (pytest.approx(5 / 3), 1.5)
    draws = 2000
    sd_of_mean = np.sqrt((2 / 3) * (1 / 3) / draws)
    comp = compression(C, 0, seed=3, scope="s", k=2, n_draws=draws)
    assert comp["champions_random_mean"] == pytest.approx(without, abs=4 * sd_of_mean)
    assert abs(with_repl - without) > 12 * sd_of_mean  # the test can tell them apart


def test_discrimination_ties_are_exact():
    # 7 models x 60 items, one config: float noise splits 22 exact values into 38 floats
    C = np.random.default_rng(0).random((7, 60, 1)) < 0.5
    keys = ref_impl.exact_disc_order_keys(C.astype(int).tolist(), 0)
    defined = [k for k in keys if k is not None]
    comp = compression(C, 0, seed=1, scope="s")
    assert comp["k"] == 30 and comp["distinct_disc_values"] == len(set(defined)) == 22
    v = sorted(defined, reverse=True)[comp["k"] - 1]
    assert comp["cutoff_above"] == sum(k > v for k in defined)
    assert comp["cutoff_ties"] == sum(k == v for k in defined)
    assert comp["cutoff_ties"] > 1


def test_discrimination_equals_and_orders_as_the_exact_correlations():
    """Integer sums (``discrimination``): items with equal exact correlations get one value,
    unequal ones are ordered as the exact values are, and NaN exactly where a side is constant."""
    from leaderboard_audit.metrics.compression import discrimination

    rng = np.random.default_rng(5)
    C = rng.random((40, 300, 2)) < rng.random((40, 1, 1))  # abilities spread: many distinct values
    C[:, :5, 1] = True  # items every model gets right under the reference: undefined
    keys = ref_impl.exact_disc_order_keys(C.astype(int).tolist(), 1)
    disc = discrimination(C, 1)
    assert [k is None for k in keys] == np.isnan(disc).tolist()
    defined = [i for i, k in enumerate(keys) if k is not None]
    by_key = sorted(defined, key=lambda i: keys[i])
    for a, b in zip(by_key, by_key[1:]):
        if keys[a] == keys[b]:
            assert disc[a] == disc[b]
        else:
            assert disc[a] < disc[b]
    assert len({keys[i] for i in defined}) == len(set(disc[defined].tolist())) > 100
