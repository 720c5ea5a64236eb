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
BAND_KEYS = ("reference", "min", "max", "spread", "robust", "optimistic", "config_lucky")


def band_row(spread: float, p_holm: float | None = 0.0078125) -> dict:
    """A leaderboard row; ``p_holm`` is Cochran's Q Holm p (AUDITS v4; None: a v3 row without the test)."""
    row = {
        "reference": 0.5,
        "min": 0.5,
        "max": 0.5 + spread,
        "spread": spread,
        "robust": 0.375,
        "optimistic": 0.75,
        "config_lucky": "ll|x",
    }
    if p_holm is not None:
        row.update(cochran_q=12.5, harness_p=0.00390625, harness_p_holm=p_holm)
    return row


@pytest.mark.parametrize(
    "spread,p_holm,status,margin",
    [
        (0.125, 0.0078125, PASS, 0.125),
        (0.25, 0.0078125, PASS, 0.0),  # pass <= band_pass (boundary included)
        (0.25, 1.0, PASS, 0.0),  # a pass needs no test
        (0.375, 0.0078125, WARN, -0.125),
        (0.5, 0.0078125, WARN, -0.25),  # warn <= band_warn (boundary included), whatever the test says
        (0.75, 0.0078125, FAIL, -0.5),  # v4: spread > band_warn and Cochran's Q significant
        (0.75, 0.05, FAIL, -0.5),  # Holm p exactly alpha: significant (closed boundary)
        (0.75, 0.0625, WARN, -0.5),  # v4: spread > band_warn but within item sampling: warn, not fail
        (0.75, 1.0, WARN, -0.5),
    ],
)
def test_band(spread, p_holm, status, margin):
    v = band_verdict("arc", "org/m", band_row(spread, p_holm), T)
    assert outcome(v) == (status, spread, 0.25, margin)
    assert v["check"] == "band" and v["id"] == "band[arc-org/m]"
    assert v["evidence"] == {
        **{k: band_row(spread)[k] for k in BAND_KEYS},
        "cochran_q": 12.5,
        "harness_p": 0.00390625,
        "harness_p_holm": p_holm,
    }
    assert f"org/m: accuracy ranges 0.500..{0.5 + spread:.3f} across configs (spread {spread:.3f}" in v["message"]
    if p_holm <= 0.05:
        assert f"the configs differ beyond item sampling (Cochran's Q p {p_holm:.2g}, Holm over models)" in v["message"]
    else:
        assert f"within item sampling: Cochran's Q p {p_holm:.2g} (Holm over models)" in v["message"]


def test_band_alpha_reaches_the_cochran_test():
    # Holm p 0.0625 is not significant at 0.05, but is at alpha 0.125
    assert band_verdict("s", "m", band_row(0.75, 0.0625), T)["status"] == WARN
    assert band_verdict("s", "m", band_row(0.75, 0.0625), T, alpha=0.125)["status"] == FAIL
    assert band_verdict("s", "m", band_row(0.75, 0.125), T, alpha=0.0625)["status"] == WARN


@pytest.mark.parametrize("spread,status", [(0.25, PASS), (0.5, WARN), (0.75, FAIL)])
def test_band_row_without_the_test_is_judged_on_the_spread(spread, status):
    # a hand-built (v3) row without harness_p_holm: the spread alone decides, as documented
    v = band_verdict("arc", "org/m", band_row(spread, None), T)
    assert v["status"] == status and v["evidence"] == {k: band_row(spread)[k] for k in BAND_KEYS}
    assert "Cochran" not in v["message"]


def test_band_with_default_thresholds_is_exact_at_the_boundary():
    # 2 items of 100: 0.52 - 0.50 is 0.020000000000000018 in floats, and passes
    v = band_verdict("s", "m", band_row(0.52 - 0.50), Thresholds())
    assert v["status"] == PASS and v["margin"] == 0.0
    v = band_verdict("s", "m", band_row(0.03), Thresholds())
    assert v["status"] == WARN and v["margin"] == -0.01
    assert band_verdict("s", "m", band_row(0.0625), Thresholds())["status"] == FAIL
    assert band_verdict("s", "m", band_row(0.0625, 0.5), Thresholds())["status"] == WARN


# ------------------------------------------------------------------ manufactured (pairs), AUDITS v4
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


def board(**kw) -> dict:
    """A pair as ``manufactured.board_tests`` completes it (AUDITS v4): the board-wide Holm p of
    "the robust items order it the other way", the configurations that reverse it beyond item
    sampling and the most significant of them, the harness-averaged sign test, the v4 cause."""
    b = {"p_against_board": 1.0, "board_tests": 12, "reversing_significant": 0, "reversal": None}
    b.update(kw)
    return pair(**b)


# the most significant reversing configuration of a pair that some configuration reverses
REVERSAL = {"config": "c3", "lower_only": 9, "higher_only": 0, "p": 0.00390625, "p_board": 0.005}
DECADE = -1.0  # log10(0.005) - log10(0.05): a board-wide Holm p of 0.005 is one decade below alpha


@pytest.mark.parametrize(
    "kw,status,value,margin,why",
    [
        # manufactured (3 v 1: p = 0.625) and a configuration reverses it beyond item sampling
        # (board-wide Holm p 0.005): fail, margin in decades of p below alpha
        (
            {
                "higher_only": 3,
                "lower_only": 1,
                "reversing": 2,
                "fragile_share": 0.75,
                "cause": "harness",
                "reversing_significant": 1,
                "reversal": REVERSAL,
            },
            FAIL,
            val(3, 1),
            DECADE,
            "manufactured by the harness: the robust items do not order the pair, and 1/8 config reverses it beyond "
            "item sampling (c3: b 9 v 0 items only one gets right, board-wide Holm p 0.005); 2/8 print the opposite "
            "order",
        ),
        # v4: the same pair whose reversing configurations are all within item sampling is a warn (v3 failed it)
        (
            {
                "higher_only": 3,
                "lower_only": 1,
                "reversing": 2,
                "fragile_share": 0.75,
                "cause": "undecidable",
                "averaged_above": 30,
                "averaged_below": 20,
                "averaged_p": 0.25,
            },
            WARN,
            val(3, 1),
            round(val(3, 1) - THR, 12),
            "not decidable on robust items: 4 disagreements among 20 jointly robust items, and no split of 4 can "
            "reach p <= 0.05; harness-averaged sign test 30 v 20 items, p 0.25 (does not separate it either); 2/8 "
            "configs print the opposite order, none beyond item sampling",
        ),
        # 7 v 3 (p = 0.34375) can be decided on more robust items: a sampling problem
        (
            {"higher_only": 7, "lower_only": 3, "reversing": 1, "cause": "sampling", "items_needed": 30},
            WARN,
            val(7, 3),
            round(val(7, 3) - THR, 12),
            "too few jointly robust items to tell the pair apart (20 of them; about 30 needed at the same "
            "proportions): a sampling problem, not the harness; 1/8 configs print the opposite order, none beyond "
            "item sampling",
        ),
        # the robust items order the pair the other way (0 v 8: p = 0.0078) beyond the board's multiplicity
        (
            {"higher_only": 0, "lower_only": 8, "p_against_board": 0.005},
            FAIL,
            val(0, 8),
            DECADE,
            "the jointly robust items order the pair the other way (board-wide Holm p 0.005 over 12 tests)",
        ),
        # v4: the same 0 v 8, not significant once the board's tests are counted: a warn (v3 failed it)
        (
            {"higher_only": 0, "lower_only": 8, "p_against_board": 0.25},
            WARN,
            val(0, 8),
            round(val(0, 8) - THR, 12),
            "the robust items lean the other way (p 0.0078 unadjusted), but not beyond the board's multiplicity "
            "(board-wide Holm p 0.25)",
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
        # manufactured, no config reverses (5 v 0: no split of 5 reaches 0.05)
        (
            {"higher_only": 5, "lower_only": 0, "fragile_share": 0.75, "cause": "undecidable"},
            WARN,
            val(5, 0),
            round(val(5, 0) - THR, 12),
            "not decidable on robust items: 5 disagreements among 20 jointly robust items, and no split of 5 can "
            "reach p <= 0.05; no configuration reverses the pair",
        ),
        # the harness-averaged test separates what the robust items cannot (6 v 0: p = 1/32)
        (
            {
                "higher_only": 2,
                "lower_only": 1,
                "cause": "undecidable",
                "averaged_above": 6,
                "averaged_below": 0,
                "averaged_p": 0.03125,
            },
            WARN,
            val(2, 1),
            round(val(2, 1) - THR, 12),
            "not decidable on robust items: 3 disagreements among 20 jointly robust items, and no split of 3 can "
            "reach p <= 0.05; harness-averaged sign test 6 v 0 items, p 0.031 (separates the pair); no "
            "configuration reverses the pair",
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
        # no jointly robust items: p = 1, value 0, manufactured, not decidable
        (
            {
                "higher_only": 0,
                "lower_only": 0,
                "robust_items": 0,
                "ci": None,
                "fragile_share": 1.0,
                "cause": "undecidable",
            },
            WARN,
            0.0,
            -THR,
            "not decidable on robust items: 0 disagreements among 0 jointly robust items, and no split of 0 can "
            "reach p <= 0.05; no configuration reverses the pair",
        ),
    ],
)
def test_pair(kw, status, value, margin, why):
    p = board(**kw)
    v = pair_verdict("mmlu", p, 8, T)
    assert outcome(v) == (status, value, THR, margin)
    assert (v["margin"] >= 0) == (v["status"] == PASS)
    assert v["check"] == "manufactured" and v["id"] == "manufactured[mmlu-a>b]"
    assert v["message"].startswith(f"a > b: {why}. gap ")
    ev = v["evidence"]
    assert ev["configs"] == 8 and ev["reversing"] == p["reversing"]
    assert (ev["p_against_board"], ev["reversing_significant"], ev["reversal"], ev["board_tests"]) == (
        p["p_against_board"],
        p["reversing_significant"],
        p["reversal"],
        12,
    )
    assert ev["averaged_p"] == p.get("averaged_p")


@pytest.mark.parametrize(
    "kw,status",
    [
        ({"higher_only": 3, "lower_only": 1, "reversing": 2}, FAIL),  # manufactured and reversed
        ({"higher_only": 5, "lower_only": 0}, WARN),  # manufactured, nothing reverses it
        ({"higher_only": 0, "lower_only": 8}, FAIL),  # the robust items order it the other way
        ({"fragile_share": 0.75}, WARN),
        ({}, PASS),
    ],
)
def test_pair_without_the_board_tests_is_judged_by_v3(kw, status):
    # a hand-built (v3) pair without p_against_board: reversing > 0 fails a manufactured pair,
    # and the pair's own p decides "the other way", as the docstring says
    v = pair_verdict("mmlu", pair(**kw), 8, T)
    assert v["status"] == status and "p_against_board" not in v["evidence"]


def test_pair_alpha_reaches_the_board_tests():
    p = board(higher_only=0, lower_only=8, p_against_board=0.0625)
    assert pair_verdict("s", p, 8, T)["status"] == WARN
    assert pair_verdict("s", p, 8, T, alpha=0.125)["status"] == FAIL


def test_pair_at_alpha_boundary_and_one_configuration():
    # p exactly at alpha passes (closed boundary: margin 0, never -0)
    p = pair(higher_only=6, p_value=0.05)
    v = pair_verdict("s", p, 8, T)
    assert v["status"] == PASS and v["margin"] == 0.0 and str(v["margin"]) == "0.0"
    # one configuration: no vacuous "no config reverses" and no reversing count
    v = pair_verdict("s", board(higher_only=2, lower_only=1, cause="undecidable"), 1, T)
    assert v["status"] == WARN and "reverses" not in v["message"] and "reversing" not in v["message"]
    assert "sign test p 1" in v["message"]


def test_pair_message_carries_the_sign_test_and_ci():
    msg = pair_verdict("s", board(higher_only=3, lower_only=0, ci=(0.0, 0.25), cause="undecidable"), 8, T)["message"]
    assert (
        "higher_only 3, lower_only 0, sign test p 0.25 (alpha 0.05, unadjusted); robust diff CI [0.000, 0.250]" in msg
    )
    msg = pair_verdict("s", board(ci=None), 8, T)["message"]
    assert "robust diff CI n/a (no jointly robust items)" in msg


# ------------------------------------------------------------------ champions, AUDITS v4
CH_THR = round(-math.log10(0.05), 12)  # the champions threshold: -log10 alpha


def champs(per_config: list[tuple], champion_set: list[str], challenges: list[dict] | None = None, tested: int = 2):
    """(config, winners, margin_items[, lead_items]): lead_items = items the winners lead the
    reference winner(s) by, None (the default) where a reference winner wins the config.
    ``challenges``: the significant challenges (``champions.challenges``), Holm over ``tested``
    tests; ``min_p_holm`` is the smallest of their Holm p (1 when none)."""
    ch = {
        "count": len(champion_set),
        "set": champion_set,
        "per_config": [
            {"config": c, "winners": w, "margin_items": m, "runner_up": "r", "lead_items": rest[0] if rest else None}
            for c, w, m, *rest in per_config
        ],
    }
    if challenges is not None:
        ch["challenges"] = {
            "tested": tested,
            "alpha": 0.05,
            "min_p_holm": min((c["p_holm"] for c in challenges), default=1.0),
            "significant": challenges,
        }
    return ch


def challenge(model: str, config: str, wins: int, losses: int, tested: int = 2, ref: str = "a") -> dict:
    """A challenge as ``champions.challenges`` writes it: exact McNemar of ``model`` against the
    reference winner under ``config`` (``wins`` v ``losses`` items only one gets right), Holm p
    = ``tested`` x p (the smallest of the family)."""
    pv = float(sign_test_p(np.array([wins]), np.array([losses]))[0])
    return {
        "config": config,
        "model": model,
        "reference_winner": ref,
        "wins": wins,
        "losses": losses,
        "lead_items": wins - losses,
        "p": pv,
        "p_holm": min(1.0, tested * pv),
    }


def ch_value(p_holm: float) -> float:
    return round(-math.log10(p_holm), 12) + 0.0


def test_champions_one_champion_passes():
    ch = champs([("ref", ["a"], 5), ("c1", ["a"], 2)], ["a"], [], tested=1)
    v = champions_verdict("pooled", ch, "ref", T)
    assert outcome(v) == (PASS, 0.0, CH_THR, 0.0)  # margin in champions beyond one
    assert v["id"] == "champions[pooled]" and v["message"].startswith("one champion (a) under every config.")
    assert v["evidence"] == {"set": ["a"], "other_wins": [], "significant": [], "tested": 1}


def test_champions_a_significant_win_by_more_than_the_threshold_fails():
    # b beats a under c1 on 10 v 0 items only one of them gets right: p = 2/1024, Holm x 2 = 1/256
    win = challenge("b", "c1", 10, 0)
    assert win["p_holm"] == 1 / 256
    ch = champs([("ref", ["a"], 5), ("c1", ["b"], 10, 10), ("c2", ["b"], 2, 2)], ["a", "b"], [win])
    v = champions_verdict("pooled", ch, "ref", T)
    value = ch_value(1 / 256)  # 2.408239965312
    assert outcome(v) == (FAIL, value, CH_THR, round(CH_THR - value, 12))  # margin: decades of p below alpha
    assert v["message"].startswith(
        "2 champions; under c1, b beats the reference winner a by 10 items (10 v 0 items only one gets right, "
        "Holm p 0.0039), beyond item sampling."
    )
    assert v["evidence"]["other_wins"] == [
        {"config": "c1", "winners": ["b"], "margin_items": 10, "lead_items": 10},
        {"config": "c2", "winners": ["b"], "margin_items": 2, "lead_items": 2},
    ]
    assert v["evidence"]["significant"] == [win] and v["evidence"]["tested"] == 2


def test_champions_tied_challengers_fail():
    # b and c tie under c1 and both beat the reference winner a by 10 v 0: two significant wins
    wins = [challenge("b", "c1", 10, 0), challenge("c", "c1", 10, 0)]
    ch = champs([("ref", ["a"], 5), ("c1", ["b", "c"], 0, 10)], ["a", "b", "c"], wins)
    v = champions_verdict("pooled", ch, "ref", T)
    assert outcome(v)[:2] == (FAIL, ch_value(1 / 256))
    assert v["message"].startswith("3 champions; under c1, b beats the reference winner a by 10 items")
    assert "beyond item sampling; 1 more such win." in v["message"]  # UX review M16: not "1 more such wins"
    wins.append(challenge("d", "c1", 10, 0))
    ch = champs([("ref", ["a"], 5), ("c1", ["b", "c", "d"], 0, 10)], ["a", "b", "c", "d"], wins)
    assert "beyond item sampling; 2 more such wins." in champions_verdict("pooled", ch, "ref", T)["message"]


def test_champions_a_large_lead_within_item_sampling_warns():
    # v4: c1's winner leads the reference winner by 10 items, but on 30 v 20 disagreements
    # (p = 0.20, Holm 0.40): no evidence of a harness effect, a warn (v2/v3 failed it)
    pv = float(sign_test_p(np.array([30]), np.array([20]))[0])
    ch = champs([("ref", ["a"], 5), ("c1", ["b"], 10, 10)], ["a", "b"], [])
    ch["challenges"]["min_p_holm"] = 2 * pv
    v = champions_verdict("pooled", ch, "ref", T)
    assert outcome(v) == (WARN, ch_value(2 * pv), CH_THR, -1.0)  # margin: 1 - champions
    assert v["message"].startswith(
        "2 champions by count, but no configuration's winner beats the reference winner beyond item sampling "
        "(exact McNemar, Holm over 2 tests)."
    )
    assert "largest lead of a configuration's winners over the reference winner 10 items" in v["message"]


def test_champions_a_significant_win_within_the_threshold_warns():
    # 7 v 0 (Holm p 1/32) is significant, but a fail also needs more than champion_items (8 here)
    win = challenge("b", "c1", 7, 0)
    ch = champs([("ref", ["a"], 5), ("c1", ["b"], 7, 7)], ["a", "b"], [win])
    t8 = Thresholds({**T.as_dict(), "champion_items": 8.0})
    v = champions_verdict("pooled", ch, "ref", t8)
    assert outcome(v) == (WARN, ch_value(1 / 32), CH_THR, -1.0)
    assert v["evidence"]["significant"] == []  # the wins that fail
    assert outcome(champions_verdict("pooled", ch, "ref", T))[0] == FAIL  # 7 > 3


def test_champions_only_through_ties_warns():
    # c1 is a tie between a and b, c2 between a and c: nobody beats the reference winner a
    ch = champs([("ref", ["a"], 5), ("c1", ["a", "b"], 0), ("c2", ["a", "c"], 0)], ["a", "b", "c"], [], tested=4)
    v = champions_verdict("pooled", ch, "ref", T)
    assert outcome(v) == (WARN, 0.0, CH_THR, -2.0)
    assert v["message"].startswith("3 champions by count, but no configuration's winner beats the reference winner")
    assert v["evidence"]["other_wins"] == [
        {"config": "c1", "winners": ["a", "b"], "margin_items": 0, "lead_items": None},
        {"config": "c2", "winners": ["a", "c"], "margin_items": 0, "lead_items": None},
    ]


def test_champions_reference_tie_counts_both_as_reference_winners():
    # both reference winners win elsewhere by 9 items: no challenger is left to test
    ch = champs([("ref", ["a", "b"], 0), ("c1", ["b"], 9)], ["a", "b"], [], tested=0)
    v = champions_verdict("s", ch, "ref", T)
    assert outcome(v) == (WARN, 0.0, CH_THR, -1.0)
    assert v["message"].startswith("2 champions, the others only through exact ties with the reference winner.")


def test_champions_without_challenges_is_judged_on_the_leads():
    # a hand-built (v2) section without ``challenges``: a lead > champion_items fails, <= warns
    ch = champs([("ref", ["a"], 5), ("c1", ["b"], 4, 4)], ["a", "b"])
    assert champions_verdict("pooled", ch, "ref", T)["status"] == FAIL
    ch = champs([("ref", ["a"], 5), ("c1", ["b"], 3, 3)], ["a", "b"])
    assert champions_verdict("pooled", ch, "ref", T)["status"] == WARN


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
        # an undefined correlation with fragile items is a warn with the reason
        (comp(None, None), WARN, None, -1.0, "corr(disc, fragility) undefined: "),
        # v4: nothing fragile at all (fragility 0 everywhere) is compression's best case: a pass at 0
        (
            comp(None, None, topk=0.0, allf=0.0),
            PASS,
            None,
            0.0,
            "no item is config-fragile for any model: compression cannot keep fragile items",
        ),
        # v4: pass unless the CI's low bound is above 0; the margin is -lo
        (comp(-0.25, (-0.5, 0.125)), PASS, -0.5, 0.5, "discriminative items are not the fragile ones"),
        (comp(0.0, (-0.25, 0.25)), PASS, -0.25, 0.25, "discriminative items are not the fragile ones"),  # corr 0
        (
            comp(0.25, (-0.125, 0.5)),
            PASS,
            -0.125,
            0.125,
            "corr > 0 but its 95% CI includes 0: no evidence that discriminative items are the fragile ones",
        ),
        (comp(0.25, (0.0, 0.5)), PASS, 0.0, 0.0, "corr > 0 but its 95% CI includes 0"),  # lo = 0: closed boundary
        (comp(0.25, None), PASS, 0.25, 0.0, "corr > 0 but its 95% CI includes 0"),  # no CI: no evidence
        (
            comp(0.5, (0.25, 0.75)),
            FAIL,
            0.25,
            -0.25,
            "compression keeps the fragile items: top-10 mean fragility 0.500 > 0.250 over all items",
        ),
        (
            comp(0.5, (0.25, 0.75), topk=0.25, allf=0.25),
            WARN,
            0.25,
            -0.25,
            "corr > 0, but the top-10 items are no more fragile than all items",
        ),
        (
            comp(0.5, (0.25, 0.75), topk=None),
            WARN,
            0.25,
            -0.25,
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


# ------------------------------------------------------------------ axes, AUDITS v4
@pytest.mark.parametrize(
    "taus,means,inter,status,value,axis,lead",
    [
        # boundary: pass; the load-bearing axis is the lowest mean tau (ordering 0.875 < template 0.9375)
        (
            {"template": 0.875, "ordering": 0.75, "joint": 0.0},
            {"template": 0.9375, "ordering": 0.875, "joint": 0.5},
            {"template": 1.0, "ordering": 1.0, "joint": 1.0},
            PASS,
            0.75,
            "ordering",
            "every single axis keeps the order (min Kendall tau 0.75, ordering)",
        ),
        (
            {"template": 0.625, "ordering": 0.875, "joint": 0.0},
            {"template": 0.75, "ordering": 0.9375, "joint": 0.5},
            {"template": 0.001, "ordering": 1.0, "joint": 0.001},
            WARN,
            0.625,
            "template",
            "the order moves along the template axis (lowest mean Kendall tau; min tau 0.62 on template)",
        ),
        # v4 (review T5): the min favours the axis with more configs; the load-bearing axis is the lowest
        # mean tau: template (mean 0.625), though ordering has the lowest min (0.5)
        (
            {"template": 0.625, "ordering": 0.5, "joint": -1.0},
            {"template": 0.625, "ordering": 0.875, "joint": 0.5},
            {"template": 1.0, "ordering": 1.0, "joint": 1.0},
            WARN,
            0.5,
            "template",
            "the order moves along the template axis (lowest mean Kendall tau; min tau 0.50 on ordering)",
        ),
        # below axes_warn with a significant interaction: fail on that axis
        (
            {"template": 0.25, "ordering": None, "scoring": 0.875},
            {"template": 0.5, "ordering": None, "scoring": 0.9375},
            {"template": 0.01, "ordering": None, "scoring": 1.0},
            FAIL,
            0.25,
            "template",
            "the template axis is load-bearing: varying it alone reorders the models (min Kendall tau 0.25; its "
            "configs move the models unequally beyond item sampling (Holm p 0.01))",
        ),
        # p exactly alpha is significant (closed boundary)
        (
            {"template": 0.25, "scoring": 0.875},
            {"template": 0.5, "scoring": 0.9375},
            {"template": 0.05, "scoring": 1.0},
            FAIL,
            0.25,
            "template",
            "the template axis is load-bearing",
        ),
        # v4: below axes_warn, but no axis's configs move the models unequally beyond item sampling: warn
        (
            {"template": 0.25, "ordering": None, "scoring": 0.875},
            {"template": 0.5, "ordering": None, "scoring": 0.9375},
            {"template": 0.0625, "ordering": None, "scoring": 0.001},
            WARN,
            0.25,
            "template",
            "the order moves along the template axis (lowest mean Kendall tau; min tau 0.25 on template), but no "
            "axis's configurations move the models unequally beyond item sampling",
        ),
        # two axes below axes_warn, only scoring significant: the fail names scoring
        (
            {"template": 0.25, "scoring": 0.375},
            {"template": 0.25, "scoring": 0.5},
            {"template": 0.5, "scoring": 0.001},
            FAIL,
            0.25,
            "scoring",
            "the scoring axis is load-bearing: varying it alone reorders the models (min Kendall tau 0.38;",
        ),
    ],
)
def test_axes(taus, means, inter, status, value, axis, lead):
    v = axes_verdict(
        "hellaswag", {"axis_kendall_min": taus, "axis_kendall_mean": means, "axis_interaction_p": inter}, T
    )
    assert outcome(v) == (status, value, 0.75, value - 0.75)
    assert v["id"] == "axes[hellaswag]"
    assert v["evidence"] == {
        "axis_kendall_min": taus,
        "axis_kendall_mean": means,
        "axis_interaction_p": inter,
        "load_bearing": axis,
    }
    assert v["message"].startswith(lead)


@pytest.mark.parametrize(
    "taus,status,axis",
    [
        ({"template": 0.875, "ordering": 0.75, "joint": 0.0}, PASS, "ordering"),
        ({"template": 0.5, "ordering": 0.5, "joint": -1.0}, WARN, "ordering"),  # tie: by name
        ({"template": 0.25, "ordering": None, "scoring": 0.875}, FAIL, "template"),  # None ignored
    ],
)
def test_axes_section_without_the_test_is_judged_by_v2(taus, status, axis):
    # a hand-built section without the interaction test or the mean taus: the min tau alone decides
    v = axes_verdict("hellaswag", {"axis_kendall_min": taus}, T)
    assert v["status"] == status and v["evidence"]["load_bearing"] == axis
    assert v["evidence"]["axis_interaction_p"] is None


def test_axes_alpha_reaches_the_interaction_test():
    ax = {
        "axis_kendall_min": {"template": 0.25},
        "axis_kendall_mean": {"template": 0.25},
        "axis_interaction_p": {"template": 0.0625},
    }
    assert axes_verdict("s", ax, T)["status"] == WARN
    assert axes_verdict("s", ax, T, alpha=0.125)["status"] == FAIL


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
