"""Planted-truth simulations: the pair tests' false-alarm rate under a real null, and power.

Simulator: ``leaderboard_audit.records.simulate`` (4 benchmarks x 100 items, the paper's 26
configs, robust_share 0.35, item_noise 0.6). Models are independent (own latent draws)
and have no model-specific config shifts, so two models of equal ability are
exchangeable: a true null for "the robust items order the pair".

* False alarm: the pair is called ordered (the bootstrap CI of the robust difference
  excludes 0; for the identified order: an edge) although the abilities are equal.
* Power: the share of seeds in which the stronger model is identified above the weaker,
  over ability differences 0.1 .. 1.2 logits.
The measured figures are in docs/audits.md ("Planted-truth checks").
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

from leaderboard_audit.metrics.identified import identified_order, sign_test_p
from leaderboard_audit.metrics.pairs import adjacent_pairs, pair_cis
from leaderboard_audit.metrics.per_model import leaderboard_order, robust_masks
from leaderboard_audit.records.simulate import SimModel, SimSpec, simulate

ITEMS = {b: 100 for b in ("arc", "hellaswag", "mmlu", "truthfulqa")}
NULL_SEEDS = 1000
POWER_SEEDS = 400
N_BOOT = 10_000  # resamples per pair, as the audit
EFFECTS = (0.1, 0.2, 0.3, 0.5, 0.8, 1.2)


def pair_counts(delta: float, seeds: range) -> np.ndarray:
    """(a_only, b_only, |J|) per seed for models a (ability delta) and b (ability 0)."""
    out = np.empty((len(seeds), 3), dtype=np.int64)
    for j, seed in enumerate(seeds):
        r = simulate(SimSpec((SimModel("a", delta), SimModel("b", 0.0)), ITEMS, seed=seed))
        rc, rw, _ = robust_masks(r.correct)
        out[j] = (rc[0] & rw[1]).sum(), (rc[1] & rw[0]).sum(), ((rc | rw)[0] & (rc | rw)[1]).sum()
    return out


def called(counts: np.ndarray, key: str, n_boot: int = N_BOOT) -> tuple[np.ndarray, np.ndarray]:
    """Per seed: (bootstrap CI says a > b, says b > a), one draw for every seed."""
    ci = pair_cis(counts[:, 0], counts[:, 1], counts[:, 2], seed=1234, scope=key, n_boot=n_boot)
    return ci[:, 0] > 0, ci[:, 1] < 0


def power_curve() -> dict[float, tuple[float, float, float]]:
    """effect -> (bootstrap power, sign-test power, wrong-direction rate of the bootstrap)."""
    out = {}
    for delta in EFFECTS:
        counts = pair_counts(delta, range(POWER_SEEDS))
        up, down = called(counts, f"power-{delta}")
        p = sign_test_p(counts[:, 0], counts[:, 1])
        out[delta] = (float(up.mean()), float(((p <= 0.05) & (counts[:, 0] > counts[:, 1])).mean()), float(down.mean()))
    return out


@pytest.mark.slow
def test_null_false_alarm_rate_of_the_pair_tests():
    counts = pair_counts(0.0, range(10_000, 10_000 + NULL_SEEDS))
    assert counts[:, 2].min() > 100  # enough jointly robust items to test
    up, down = called(counts, "null")
    boot_rate = float((up | down).mean())
    sign_rate = float((sign_test_p(counts[:, 0], counts[:, 1]) <= 0.05).mean())
    assert boot_rate <= 0.05, boot_rate
    assert sign_rate <= 0.05, sign_rate
    assert abs(float(up.mean()) - float(down.mean())) <= 0.02  # no direction is favoured


@pytest.mark.slow
def test_null_family_wise_rate_of_the_identified_order():
    names = ("a", "b", "c", "d", "e")
    any_edge = 0
    for seed in range(400):
        r = simulate(SimSpec(tuple(SimModel(n, 0.3) for n in names), ITEMS, seed=20_000 + seed))
        any_edge += len(identified_order(r.correct, models=r.models).edges) > 0
    assert any_edge / 400 <= 0.05, any_edge


@pytest.mark.slow
def test_power_grows_with_the_effect():
    curve = power_curve()
    boot = [curve[d][0] for d in EFFECTS]
    sign = [curve[d][1] for d in EFFECTS]
    assert all(b2 >= b1 - 0.02 for b1, b2 in pairwise(boot)), boot
    assert all(s2 >= s1 - 0.02 for s1, s2 in pairwise(sign)), sign
    assert boot[0] <= 0.2 and sign[0] <= 0.2  # a tenth of a logit is rarely visible
    assert boot[-1] >= 0.99 and sign[-1] >= 0.99
    assert curve[0.5][0] >= 0.5
    assert max(curve[d][2] for d in EFFECTS) <= 0.01  # never the wrong way round


def test_twins_are_manufactured_by_the_harness():
    harness = manufactured = 0
    for seed in range(120):
        spec = SimSpec(
            (
                SimModel("base", 0.5, template_shift={"instruction": -0.8}),
                SimModel("tuned", 0.5, twin_of="base", template_shift={"letter_plain": 0.6}),
            ),
            ITEMS,
            seed=seed,
        )
        r = simulate(spec)
        ref = r.grid.reference_index
        order = leaderboard_order(r.correct[:, :, ref].mean(axis=1), r.models)
        p = adjacent_pairs(r.correct, ref, order, seed=seed, scope="pooled", models=r.models, n_boot=2000)[0]
        manufactured += p.manufactured
        harness += p.cause == "harness"
    assert manufactured >= 100 and harness >= 0.95 * manufactured, (manufactured, harness)


@pytest.mark.slow
def test_demo_plants_every_truth():
    from leaderboard_audit.engine import audit_scope
    from leaderboard_audit.records.simulate import demo_spec

    s = audit_scope(simulate(demo_spec()), "pooled", n_boot=2000)
    pairs = {(p["higher"], p["lower"]): p for p in s["pairs"]}
    twins = [p for (h, l), p in pairs.items() if {h, l} == {"atlas-70b", "atlas-70b-instruct"}]
    assert twins and twins[0]["robust_tie"]
    assert not pairs[("cirrus-3b", "dune-1b")]["robust_tie"]
    assert pairs[("cirrus-3b", "dune-1b")]["ci"][0] > 0
    per = {c["config"]: c for c in s["champions"]["per_config"]}
    assert per["ll|cloze_plain"]["winners"] == ["borealis-8b"]  # the planted second champion
    assert s["champions"]["count"] >= 2
