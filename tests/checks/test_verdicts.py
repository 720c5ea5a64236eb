"""Every status branch of every verdict rule (``*_verdict`` in leaderboard_audit/checks/), on hand-built
inputs, with the exact status, value, threshold and margin (margin = signed distance from the value to the
pass region: positive inside).

Inputs are the dictionaries the metrics layer hands the rules (a leaderboard row, a pair, the
champions / compression / axes / brittleness results), built by hand with binary fractions so
that every expected number is exact. Only the public functions are used (name + inputs).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from leaderboard_audit.checks.axes import axes_verdict
from leaderboard_audit.checks.band import band_verdict
from leaderboard_audit.checks.brittleness import brittleness_verdict
from leaderboard_audit.checks.champions import champions_verdict
from leaderboard_audit.checks.compression import compression_verdict
from leaderboard_audit.checks.manufactured import pair_verdict
from leaderboard_audit.metrics.identified import sign_test_p
from leaderboard_audit.checks import Thresholds
from leaderboard_audit.checks.verdicts import FAIL, PASS, SKIP, WARN, make_verdict

# binary fractions: band 1/4 .. 1/2, fragile share 1/2, champion items 3, axes 3/4 .. 1/2,
# brittleness 1/4 .. 1/2
T = Thresholds(
    {
        "band_pass": 0.25,
        "band_warn": 0.5,
        "fragile_share": 0.5,
        "champion_items": 3.0,
        "axes_pass": 0.75,
        "axes_warn": 0.5,
        "brittleness_pass": 0.25,
        "brittleness_warn": 0.5,
        "compression_k": 10,
    }
)


def outcome(v: dict) -> tuple:
    return v["status"], v["value"], v["threshold"], v["margin"]


# ------------------------------------------------------------------ Thresholds, make_verdict()
def test_threshold_defaults_and_conversion():
    d = Thresholds()
    assert d.as_dict() == {
        "axes_pass": 0.9,
        "axes_warn": 0.6,
        "band_pass": 0.02,
        "band_warn": 0.05,
        "brittleness_pass": 0.25,
        "brittleness_warn": 0.5,
        "champion_items": 3.0,
        "compression_k": 100,
        "flip_boot": 1000,
        "flip_precision": 0.8,
        "fragile_share": 0.5,
        "mix_draws": 100,
    }
    assert Thresholds.names() == list(d.as_dict())
    t = Thresholds.from_mapping({"band_pass": "0.125", "compression_k": "50"})
    assert t.band_pass == 0.125 and t.compression_k == 50 and type(t.compression_k) is int
    assert t.band_warn == 0.05 and t["band_warn"] == 0.05  # the rest keep their defaults
    with pytest.raises(ValueError, match=r"unknown audit threshold\(s\) \['band_pas'\]; known: \['axes_pass'"):
        Thresholds.from_mapping({"band_pas": 0.1})


def test_verdict_record_carries_evidence_only_when_given():
    v = make_verdict("band", "band[arc-m]", PASS, 0.5, 0.25, -0.25, "msg")
    assert v == {
        "check": "band",
        "id": "band[arc-m]",
        "status": "pass",
        "value": 0.5,
        "threshold": 0.25,
        "margin": -0.25,
        "message": "msg",
    }
    assert make_verdict("band", "x", WARN, None, 0.0, None, "m", {"a": 1})["evidence"] == {"a": 1}


# ------------------------------------------------------------------ band
def band_row(spread: float) -> dict:
    return {
        "reference": 0.5,
        "min": 0.5,
        "max": 0.5 + spread,
        "spread": spread,
        "robust": 0.375,
        "optimistic": 0.75,
        "config_lucky": "ll|x",
    }


@pytest.mark.parametrize(
    "spread,status,margin",
    [
        (0.125, PASS, 0.125),
        (0.25, PASS, 0.0),  # pass <= band_pass (boundary included)
        (0.375, WARN, -0.125),
        (0.5, WARN, -0.25),  # warn <= band_warn (boundary included)
        (0.75, FAIL, -0.5),
    ],
)
def test_band(spread, status, margin):
    v = band_verdict("arc", "org/m", band_row(spread), T)
    assert outcome(v) == (status, spread, 0.25, margin)
    assert v["check"] == "band" and v["id"] == "band[arc-org/m]"
    assert v["evidence"] == {
        k: band_row(spread)[k] for k in ("reference", "min", "max", "spread", "robust", "optimistic", "config_lucky")
    }
    assert f"org/m: accuracy ranges 0.500..{0.5 + spread:.3f} across configs (spread {spread:.3f}" in v["message"]


def test_band_with_default_thresholds_is_exact_at_the_boundary():
    # 2 items of 100: 0.52 - 0.50 is 0.020000000000000018 in floats, and passes
    v = band_verdict("s", "m", band_row(0.52 - 0.50), Thresholds())
    assert v["status"] == PASS and v["margin"] == 0.0
    v = band_verdict("s", "m", band_row(0.03), Thresholds())
    assert v["status"] == WARN and v["margin"] == -0.01
    assert band_verdict("s", "m", band_row(0.0625), Thresholds())["status"] == FAIL


# ------------------------------------------------------------------ manufactured (pairs), AUDITS.md v3
THR = round(-math.log10(0.05), 12)  # the pair test's threshold: -log10 alpha


def pair(**kw) -> dict:
    """A pair entry as ``manufactured.pair_entry`` writes it; ``p_value``, ``identified`` and
    ``manufactured`` follow from the counts (exact sign test) unless given."""
    p = {
        "higher": "a",
        "lower": "b",
        "gap": 0.125,
        "gap_items": 4,
        "fragile_share": 0.25,
        "robust_items": 20,
        "higher_only": 12,
        "lower_only": 0,
        "robust_diff": 0.6,
        "ci": (0.4, 0.8),
        "reversing": 0,
    }
    p.update(kw)
    h, lo = p["higher_only"], p["lower_only"]
    pv = float(sign_test_p(np.array([h]), np.array([lo]))[0])
    p.setdefault("p_value", pv)
    side = None if p["p_value"] > 0.05 or h == lo else ("higher" if h > lo else "lower")
    p.setdefault("identified", side)
    p.setdefault("robust_tie", side is None)
    p.setdefault("manufactured", side is None and p["gap_items"] != 0)
    return p


def val(h: int, lo: int) -> float:
    pv = float(sign_test_p(np.array([h]), np.array([lo]))[0])
    return round((1.0 if h >= lo else -1.0) * -math.log10(pv), 12) + 0.0


@pytest.mark.parametrize(
    "kw,status,value,margin,why",
    [
        # manufactured (3 v 1: p = 0.625) and some config reverses the pair: fail; the message follows the cause
        (
            {"higher_only": 3, "lower_only": 1, "reversing": 2, "fragile_share": 0.75, "cause": "harness"},
            FAIL,
            val(3, 1),
            round(val(3, 1) - THR, 12),
            "manufactured by config-fragile items: the robust items do not order the pair, and 2/8 configs print the "
            "opposite order",
        ),
        # 4 v 0 is not identified (p = 0.125): the v2 bootstrap called it identified at any |J|
        (
            {"higher_only": 4, "lower_only": 0, "reversing": 1, "cause": "sampling", "items_needed": 30},
            FAIL,
            val(4, 0),
            round(val(4, 0) - THR, 12),
            "too few jointly robust items to tell the pair apart (20 of them; about 30 needed at the same "
            "proportions; no split of 4 disagreements can reach p <= 0.05): a sampling problem, not the harness, "
            "and 1/8 configs print the opposite order",
        ),
        # the robust items order the pair the other way (0 v 8: p = 0.0078)
        (
            {"higher_only": 0, "lower_only": 8},
            FAIL,
            val(0, 8),
            round(val(0, 8) - THR, 12),
            "the jointly robust items order the pair the other way",
        ),
        # a printed tie carries no claim: warn, never fail, even when the robust items order it
        (
            {"gap_items": 0, "gap": 0.0, "higher_only": 3, "lower_only": 1},
            WARN,
            val(3, 1),
            -1.0,
            "printed tie (reference gap = 0; the printed order is the name order)",
        ),
        (
            {"gap_items": 0, "gap": 0.0, "higher_only": 0, "lower_only": 30, "reversing": 3},
            WARN,
            val(0, 30),
            -1.0,
            "printed as a tie; the robust items order it: b above a",
        ),
        # manufactured, no config reverses
        (
            {"higher_only": 5, "lower_only": 0, "fragile_share": 0.75, "cause": "harness"},
            WARN,
            val(5, 0),
            round(val(5, 0) - THR, 12),
            "manufactured by config-fragile items: the robust items do not order the pair; no config reverses the pair",
        ),
        # without a cause key (an older report) it is derived from the fragile share: 0.25 -> sampling
        (
            {"higher_only": 2, "lower_only": 1},
            WARN,
            val(2, 1),
            round(val(2, 1) - THR, 12),
            "too few jointly robust items to tell the pair apart (20 of them; no split of 3 disagreements can reach "
            "p <= 0.05): a sampling problem, not the harness; no config reverses the pair",
        ),
        # identified, but the gap is carried by fragile items: the margin is in fragile share
        (
            {"fragile_share": 0.75},
            WARN,
            val(12, 0),
            -0.25,
            "identified, but 75% of the gap is carried by fragile items",
        ),
        # pass: identified, fragile share at the threshold (strictly greater warns)
        ({"fragile_share": 0.5}, PASS, val(12, 0), round(val(12, 0) - THR, 12), "the robust items order the pair"),
        # 6 v 0 is the smallest one-sided split identified at 0.05 (p = 0.03125)
        ({"higher_only": 6}, PASS, val(6, 0), round(val(6, 0) - THR, 12), "the robust items order the pair"),
        # no jointly robust items: p = 1, value 0, manufactured
        (
            {
                "higher_only": 0,
                "lower_only": 0,
                "robust_items": 0,
                "ci": None,
                "fragile_share": 1.0,
                "cause": "harness",
            },
            WARN,
            0.0,
            -THR,
            "manufactured by config-fragile items: the robust items do not order the pair; no config reverses the pair",
        ),
    ],
)
def test_pair(kw, status, value, margin, why):
    v = pair_verdict("mmlu", pair(**kw), 8, T)
    assert outcome(v) == (status, value, THR, margin)
    assert (v["margin"] >= 0) == (v["status"] == PASS)
    assert v["check"] == "manufactured" and v["id"] == "manufactured[mmlu-a>b]"
    assert v["message"].startswith(f"a > b: {why}. gap ")
    assert v["evidence"]["configs"] == 8 and v["evidence"]["reversing"] == pair(**kw)["reversing"]


def test_pair_at_alpha_boundary_and_one_configuration():
    # p exactly at alpha passes (closed boundary: margin 0, never -0)
    p = pair(higher_only=6, p_value=0.05)
    v = pair_verdict("s", p, 8, T)
    assert v["status"] == PASS and v["margin"] == 0.0 and str(v["margin"]) == "0.0"
    # one configuration: no vacuous "no config reverses" and no reversing count
    v = pair_verdict("s", pair(higher_only=2, lower_only=1), 1, T)
    assert v["status"] == WARN and "reverses" not in v["message"] and "reversing" not in v["message"]
    assert "sign test p 1" in v["message"]


def test_pair_message_carries_the_sign_test_and_ci():
    msg = pair_verdict("s", pair(higher_only=3, lower_only=0, ci=(0.0, 0.25)), 8, T)["message"]
    assert "higher_only 3, lower_only 0, sign test p 0.25 (alpha 0.05); robust diff CI [0.000, 0.250]" in msg
    msg = pair_verdict("s", pair(ci=None), 8, T)["message"]
    assert "robust diff CI n/a (no jointly robust items)" in msg


# ------------------------------------------------------------------ champions
def champs(per_config: list[tuple], champion_set: list[str]) -> dict:
    """(config, winners, margin_items[, lead_items]): lead_items = items the winners lead the
    reference winner(s) by, None (the default) where a reference winner wins the config."""
    return {
        "count": len(champion_set),
        "set": champion_set,
        "per_config": [
            {"config": c, "winners": w, "margin_items": m, "runner_up": "r", "lead_items": rest[0] if rest else None}
            for c, w, m, *rest in per_config
        ],
    }


def test_champions_one_champion_passes():
    ch = champs([("ref", ["a"], 5), ("c1", ["a"], 2)], ["a"])
    v = champions_verdict("pooled", ch, "ref", T)
    assert outcome(v) == (PASS, 0, 3.0, 0.0)  # v3: margin in champions beyond one
    assert v["id"] == "champions[pooled]" and v["message"].startswith("one champion (a) under every config.")
    assert v["evidence"] == {"set": ["a"], "other_wins": []}


def test_champions_other_winner_by_more_than_the_threshold_fails():
    ch = champs([("ref", ["a"], 5), ("c1", ["b"], 4, 4), ("c2", ["b"], 2, 2)], ["a", "b"])
    v = champions_verdict("pooled", ch, "ref", T)
    assert outcome(v) == (FAIL, 4, 3.0, -1.0)
    assert v["message"].startswith("2 champions; c1 is won by b by 4 items over the reference winner a.")
    assert v["evidence"]["other_wins"] == [
        {"config": "c1", "winners": ["b"], "margin_items": 4, "lead_items": 4},
        {"config": "c2", "winners": ["b"], "margin_items": 2, "lead_items": 2},
    ]


def test_champions_tied_challengers_fail():
    # v2: b and c tie under c1 (margin 0 between them) and both lead the reference winner by 10 items
    ch = champs([("ref", ["a"], 5), ("c1", ["b", "c"], 0, 10)], ["a", "b", "c"])
    v = champions_verdict("pooled", ch, "ref", T)
    assert outcome(v) == (FAIL, 10, 3.0, -7.0)
    assert "c1 is won by b / c (tied: b / c) by 10 items over the reference winner a" in v["message"]


def test_champions_other_winner_within_the_threshold_warns():
    ch = champs([("ref", ["a"], 5), ("c1", ["b"], 3, 3)], ["a", "b"])  # 3 == threshold: warn
    v = champions_verdict("pooled", ch, "ref", T)
    assert outcome(v) == (WARN, 3, 3.0, -1.0)  # v3: 2 champions, one beyond one
    assert v["message"].startswith("2 champions, the others lead the reference winner by <= 3 items (coin flips).")


def test_champions_only_through_ties_warns():
    # c1 is a tie between a and b, c2 between a and c: the set grows only through ties with the
    # reference winner a, so no configuration is challenged and the value stays 0
    ch = champs([("ref", ["a"], 5), ("c1", ["a", "b"], 0), ("c2", ["a", "c"], 0)], ["a", "b", "c"])
    v = champions_verdict("pooled", ch, "ref", T)
    assert outcome(v) == (WARN, 0, 3.0, -2.0)
    assert v["message"].startswith("3 champions, the others only through exact ties with the reference winner.")
    assert v["evidence"]["other_wins"] == [
        {"config": "c1", "winners": ["a", "b"], "margin_items": 0, "lead_items": None},
        {"config": "c2", "winners": ["a", "c"], "margin_items": 0, "lead_items": None},
    ]


def test_champions_reference_tie_counts_both_as_reference_winners():
    # both reference winners win elsewhere by 9 items: not "other" winners, so the value is 0
    ch = champs([("ref", ["a", "b"], 0), ("c1", ["b"], 9)], ["a", "b"])
    assert outcome(champions_verdict("s", ch, "ref", T)) == (WARN, 0, 3.0, -1.0)


# ------------------------------------------------------------------ compression
def comp(corr, ci, topk=0.5, allf=0.25, **kw) -> dict:
    c = {
        "k": 10,
        "corr": corr,
        "ci": ci,
        "mean_fragility_topk": topk,
        "mean_fragility_all": allf,
        "cutoff_above": 9,
        "cutoff_ties": 1,
        "champions_full": 2,
        "champions_topk_mean": 1.5,
        "champions_random_mean": 1.25,
    }
    c.update(kw)
    return c


@pytest.mark.parametrize(
    "c,status,value,margin,why",
    [
        # v3: an undefined correlation is a warn with the reason, never a pass
        (comp(None, None), WARN, None, -1.0, "corr(disc, fragility) undefined: "),
        (comp(-0.25, (-0.5, 0.125)), PASS, -0.5, 0.25, "discriminative items are not the fragile ones"),
        (comp(0.0, (-0.25, 0.25)), PASS, -0.25, 0.0, "discriminative items are not the fragile ones"),  # corr 0
        (comp(0.25, (-0.125, 0.5)), WARN, -0.125, -0.25, "corr > 0 but its CI includes 0"),
        (comp(0.25, (0.0, 0.5)), WARN, 0.0, -0.25, "corr > 0 but its CI includes 0"),  # lo = 0
        (comp(0.25, None), WARN, 0.25, -0.25, "corr > 0 but its CI includes 0"),  # no CI
        (
            comp(0.5, (0.25, 0.75)),
            FAIL,
            0.25,
            -0.5,
            "compression keeps the fragile items: top-10 mean fragility 0.500 > 0.250 over all items",
        ),
        (
            comp(0.5, (0.25, 0.75), topk=0.25, allf=0.25),
            WARN,
            0.25,
            -0.5,
            "corr > 0, but the top-10 items are no more fragile than all items",
        ),
        (
            comp(0.5, (0.25, 0.75), topk=None),
            WARN,
            0.25,
            -0.5,
            "corr > 0, but the top-10 items are no more fragile than all items",
        ),
    ],
)
def test_compression(c, status, value, margin, why):
    v = compression_verdict("arc", c, T)
    assert outcome(v) == (status, value, 0.0, margin)
    assert (v["margin"] >= 0) == (v["status"] == PASS)
    assert v["id"] == "compression[arc]" and v["message"].startswith(why)
    assert v["evidence"] == {
        k: c[k]
        for k in (
            "k",
            "corr",
            "ci",
            "mean_fragility_topk",
            "mean_fragility_all",
            "champions_full",
            "champions_topk_mean",
            "champions_random_mean",
        )
    }
    assert "(k reduced to N//2)" not in v["message"]


def test_compression_undefined_says_why_and_labels_the_real_subset():
    # every item fragile for every model: fragility is constant (fixtures/real's arc)
    v = compression_verdict("arc", comp(None, None, topk=1.0, allf=1.0, k_used=4, disc_defined=4), T)
    assert v["status"] == WARN and "every item is config-fragile for every model" in v["message"]
    assert "top-4 (of k=10: only 4 items have a defined discrimination)" in v["message"]


def test_compression_reduced_k_is_said():
    v = compression_verdict("arc", comp(0.5, (0.25, 0.75), k_reduced=True), T)
    assert v["message"].endswith("(k reduced to N//2)")


# ------------------------------------------------------------------ axes
@pytest.mark.parametrize(
    "taus,status,value,axis",
    [
        ({"template": 0.875, "ordering": 0.75, "joint": 0.0}, PASS, 0.75, "ordering"),  # boundary: pass
        ({"template": 0.625, "ordering": 0.875, "joint": 0.0}, WARN, 0.625, "template"),
        ({"template": 0.5, "ordering": 0.5, "joint": -1.0}, WARN, 0.5, "ordering"),  # tie: by name
        ({"template": 0.25, "ordering": None, "scoring": 0.875}, FAIL, 0.25, "template"),  # None ignored
    ],
)
def test_axes(taus, status, value, axis):
    v = axes_verdict("hellaswag", {"axis_kendall_min": taus}, T)
    assert outcome(v) == (status, value, 0.75, value - 0.75)
    assert v["id"] == "axes[hellaswag]"
    assert v["evidence"] == {"axis_kendall_min": taus, "load_bearing": axis}
    lead = (
        f"every single axis keeps the order (min Kendall tau {value:.2f}, {axis})"
        if status == PASS
        else f"the {axis} axis is load-bearing: varying it alone reorders the models (min Kendall tau {value:.2f})"
    )
    assert v["message"].startswith(lead)


@pytest.mark.parametrize("taus", [{}, {"joint": 0.25}, {"template": None, "joint": 0.5}])
def test_axes_without_a_usable_axis_is_skipped(taus):
    # v2: an axis group with only the reference is null; with no usable axis the check is skipped
    v = axes_verdict("s", {"axis_kendall_min": taus}, T)
    assert outcome(v) == (SKIP, None, None, None)
    assert "evidence" not in v
    assert v["message"].startswith("no usable axis")


# ------------------------------------------------------------------ brittleness
@pytest.mark.parametrize(
    "per,status,value,model",
    [
        ({"a": 0.125, "b": 0.25}, PASS, 0.25, "b"),  # boundary: pass
        ({"a": 0.375, "b": 0.125}, WARN, 0.375, "a"),
        ({"ab": 0.5, "ba": 0.5}, WARN, 0.5, "ba"),  # tie: the later name; boundary: warn
        ({"a": 0.125, "b": 0.75}, FAIL, 0.75, "b"),
    ],
)
def test_brittleness(per, status, value, model):
    br = {m: {"brittleness": x, "v_item": 1.0} for m, x in per.items()}
    br["pi_model"] = 0.5  # not a model entry: ignored
    br["pi_benchmark"] = {"arc": 0.875}  # a dict without "brittleness": ignored
    v = brittleness_verdict("pooled", br, T)
    assert outcome(v) == (status, value, 0.25, 0.25 - value)
    assert v["id"] == "brittleness[pooled]" and v["evidence"] == {"model": model, "per_model": per}
    assert v["message"].startswith(f"largest prompt-sensitivity share {value:.3f} ({model})")
