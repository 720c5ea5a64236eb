"""Regression tests for verdicts that were wrong (issue 10), each built from records
(``Records`` from a bool tensor) and judged through the auditor, not from internals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import chi2

from leaderboard_audit.engine import audit, audit_scope
from leaderboard_audit.records import Config, Grid, Items, Records

P0 = Config("gen|letter_plain|p0", "gen", "letter_plain", "p0", (0, 1, 2, 3))
P1 = Config("gen|letter_plain|p1", "gen", "letter_plain", "p1", (1, 2, 3, 0))
LL = Config("ll|cloze", "ll", "cloze", None, None)
DIGITS_P1 = Config("gen|digit_labels|p1", "gen", "digit_labels", "p1", (1, 2, 3, 0))


def records(
    C: np.ndarray, names: list[str], configs: tuple[Config, ...] = (P0, P1), benches: list[str] | None = None
) -> Records:
    N = C.shape[1]
    bench = np.array(benches or ["b"] * N, dtype=object)
    ids = np.array([f"{b}/q{i:04d}" for i, b in enumerate(bench)], dtype=object)
    order = np.argsort(names)
    return Records(
        C[order],
        tuple(names[i] for i in order),
        Items(bench, ids, [None] * N, [None] * N, [None] * N),
        Grid(configs, configs[0].key),
    )


def verdicts(rec: Records, scope: str = "b", **kw) -> dict[str, dict]:
    s = audit_scope(rec, scope, n_boot=kw.pop("n_boot", 500), **kw)
    return {v["id"]: v for v in s["verdicts"]}


#: configs beyond the reference for the band test: P1 plus three more orderings
MORE = tuple(
    Config(f"gen|letter_plain|p{j}", "gen", "letter_plain", f"p{j}", perm)
    for j, perm in ((2, (2, 3, 0, 1)), (3, (3, 0, 1, 2)), (4, (0, 2, 1, 3)))
)


def spread_records(items_apart: int, N: int = 100, n_configs: int = 2) -> tuple[Records, list[str]]:
    """One model per position: ``a`` items right under the reference config and
    ``a + items_apart`` under every other config, for every a that fits in N items."""
    positions = range(N - items_apart + 1)
    C = np.zeros((len(positions), N, n_configs), dtype=bool)
    for m, a in enumerate(positions):
        C[m, :a, 0] = True
        C[m, : a + items_apart, 1:] = True
    names = [f"m{a:03d}" for a in positions]
    return records(C, names, configs=(P0, P1, *MORE)[:n_configs]), names


@pytest.mark.parametrize(
    "items_apart,n_configs,status", [(2, 2, "pass"), (5, 2, "warn"), (6, 2, "warn"), (5, 5, "warn"), (6, 5, "fail")]
)
def test_band_boundaries_are_exact_at_every_position(items_apart, n_configs, status):
    # 2 of 100 items is a spread of exactly 0.02 (float: 0.020000000000000018 at 69 of 99 positions).
    # AUDITS v4: a spread above 0.05 fails only with Cochran's Q (Holm over the models). With d items
    # right under the K - 1 other configs only, Q = (K - 1)^2 d^2 / ((K - 1) d) = (K - 1) d on K - 1 df:
    # one other config and d = 6 give Q = 6 (p 0.014; Holm over 95 models: within item sampling, a
    # warn); four give Q = 24 on 4 df (p 7.9e-5, x 95 = 0.0075): a fail
    rec, names = spread_records(items_apart, n_configs=n_configs)
    v = verdicts(rec, n_boot=200)
    bands = [v[f"band[b-{m}]"] for m in names]
    assert {b["status"] for b in bands} == {status}, [b["id"] for b in bands if b["status"] != status][:5]
    if items_apart == 2:
        assert {b["margin"] for b in bands} == {0.0}
    q = (n_configs - 1) * items_apart
    p = chi2.sf(q, n_configs - 1)
    for b in bands:
        assert b["evidence"]["cochran_q"] == pytest.approx(q) and b["evidence"]["harness_p"] == pytest.approx(p)
        assert b["evidence"]["harness_p_holm"] == pytest.approx(min(1.0, len(names) * p))  # all equal: m x p


CH_THR = round(-math.log10(0.05), 12)


def test_champions_tied_challengers_fail():
    # reference config: ref wins with 60 of 100; the other config: x and y tie at 70, ref 60.
    # v4: x and y each beat ref on 10 v 0 items only one of the two gets right (exact McNemar p =
    # 2/1024), Holm over (K - 1)(M - |R|) = 2 tests: 1/256
    C = np.zeros((3, 100, 2), dtype=bool)
    C[0, :60, :] = True  # ref: 60 under both
    C[1, :50, 0] = C[2, :50, 0] = True  # x, y: 50 under the reference config
    C[1, :70, 1] = C[2, :70, 1] = True  # x, y: 70 under the other (tied)
    v = verdicts(records(C, ["ref", "x", "y"]))["champions[b]"]
    value = round(-math.log10(1 / 256), 12)
    assert v["status"] == "fail" and v["value"] == value and v["margin"] == round(CH_THR - value, 12)
    assert v["threshold"] == CH_THR
    assert "under gen|letter_plain|p1, x beats the reference winner ref by 10 items" in v["message"]
    assert "(10 v 0 items only one gets right, Holm p 0.0039)" in v["message"] and "1 more such win." in v["message"]
    assert [
        (c["model"], c["wins"], c["losses"], c["lead_items"], c["p_holm"]) for c in v["evidence"]["significant"]
    ] == [
        ("x", 10, 0, 10, 1 / 256),
        ("y", 10, 0, 10, 1 / 256),
    ]
    assert v["evidence"]["tested"] == 2


def test_champions_tie_with_the_reference_winner_is_a_warn():
    C = np.zeros((2, 100, 2), dtype=bool)
    C[0, :60, :] = True  # ref: 60 under both
    C[1, :50, 0] = True
    C[1, :60, 1] = True  # x ties ref under the other config
    v = verdicts(records(C, ["ref", "x"]))["champions[b]"]
    assert v["status"] == "warn" and v["value"] == 0 and v["margin"] == -1.0
    assert "2 champions by count, but no configuration's winner beats the reference winner" in v["message"]


def two_reference_winners(x_other: int) -> Records:
    """r1 and r2 tie under the reference config (60 of 100); under the other config r1 gets 70
    right, r2 50 and the challenger x ``x_other`` (x: 40 under the reference). Every model's
    right items are a prefix, so x v r1 under the other config is (x_other - 70) v 0 or 0 v
    (70 - x_other), and x v r2 is (x_other - 50) v 0."""
    C = np.zeros((3, 100, 2), dtype=bool)
    C[0, :60, 0] = C[1, :60, 0] = True
    C[0, :70, 1] = True
    C[1, :50, 1] = True
    C[2, :40, 0] = True
    C[2, :x_other, 1] = True
    return records(C, ["r1", "r2", "x"])


def test_champions_a_challenger_is_measured_against_the_strongest_reference_winner():
    # review T20: with two tied reference winners, the lead and the test are against the one with
    # most items right under that config (r1, 70), not the weakest (r2, 50)
    s = audit_scope(two_reference_winners(65), "b", n_boot=200)
    ch = s["champions"]
    assert sorted(ch["set"]) == ["r1", "r2"]
    # x (65) does not beat r1 (70) under the other config, though it beats r2 on 15 v 0 items
    assert ch["challenges"] == {"tested": 1, "alpha": 0.05, "min_p_holm": 1.0, "significant": []}
    v = {x["id"]: x for x in s["verdicts"]}["champions[b]"]
    assert v["status"] == "warn" and v["value"] == 0.0
    # x at 80 beats both; its lead and counts are over r1: 10 v 0 (p 2/1024), not r2's 30 v 0
    s = audit_scope(two_reference_winners(80), "b", n_boot=200)
    (c,) = s["champions"]["challenges"]["significant"]
    assert (c["model"], c["reference_winner"], c["wins"], c["losses"], c["lead_items"]) == ("x", "r1", 10, 0, 10)
    assert c["p"] == c["p_holm"] == 2 / 1024
    v = {x["id"]: x for x in s["verdicts"]}["champions[b]"]
    assert v["status"] == "fail" and v["value"] == round(-math.log10(2 / 1024), 12)
    assert "x beats the reference winner r1 by 10 items" in v["message"]


def test_pooled_brittleness_uses_pi_model():
    # easy benchmark: 6 items right under both configs, 4 right under one; hard: 6 wrong, 4 split.
    # each benchmark: V_item 0.06, V_prompt 0.1 -> 0.625 (fail); the pooled items: V_item 0.15
    # (difficulty counted as item variance), V_prompt 0.1 -> 0.4 (warn); pi_model = 0.2 / 0.32 = 0.625
    one = np.zeros((20, 2), dtype=bool)
    one[:6] = True
    one[6:10, 0] = True
    one[16:20, 0] = True
    other = np.concatenate([one[:10][::-1], one[10:][::-1]])
    C = np.stack([one, other])  # the second model: the same items in another order
    rec = records(C, ["a", "b"], benches=["easy"] * 10 + ["hard"] * 10)
    rep = audit(rec, n_boot=200)
    for bench in ("easy", "hard"):
        vb = {v["id"]: v for v in rep["scopes"][bench]["verdicts"]}[f"brittleness[{bench}]"]
        assert vb["status"] == "fail" and vb["value"] == pytest.approx(0.625)
    pooled = rep["scopes"]["pooled"]
    assert max(pooled["brittleness"][m]["brittleness"] for m in "ab") == pytest.approx(0.4)
    v = {v["id"]: v for v in pooled["verdicts"]}["brittleness[pooled]"]
    assert v["status"] == "fail" and v["value"] == pytest.approx(0.625)
    assert "pi_model" in v["message"]


def one_config_records() -> Records:
    # 3 models, 1 configuration (as on the Open LLM Leaderboard): a 31 v b 30 is one item apart
    C = np.zeros((3, 60, 1), dtype=bool)
    C[0, :31] = True
    C[1, 1:31] = True
    C[2, :10] = True
    return records(C, ["a", "b", "c"], configs=(P0,))


def test_single_configuration_grid_skips_what_needs_configurations():
    rec = one_config_records()
    s = audit_scope(rec, "b", n_boot=500)
    v = {x["id"]: x for x in s["verdicts"]}
    for check in ("band", "champions", "compression", "axes", "brittleness"):
        assert v[f"{check}[b]"]["status"] == "skip" and "one configuration" in v[f"{check}[b]"]["message"]
    assert [x["check"] for x in s["verdicts"]].count("band") == 1  # one skipped case per scope
    ab = v["manufactured[b-a>b]"]
    pair = s["pairs"][0]
    # v4: 1 v 0 is fewer disagreements than any split that can reach 0.05 (6): not decidable;
    # v5: and not "manufactured" (nothing reverses it: one configuration)
    assert (pair["fragile_share"], pair["manufactured"], pair["cause"]) == (0.0, False, "undecidable")
    assert pair["items_needed"] == 330  # v3: 1 v 0 of 60 needs 6 v 0: J' = 5.5 * 60
    assert ab["status"] == "warn" and "not decidable on robust items: 1 disagreement among 60" in ab["message"]
    assert "manufactured by" not in ab["message"] and "reverses" not in ab["message"]
    # one config: the board family is each printed pair's "other way" test only (no configuration to reverse)
    assert pair["board_tests"] == 2 and pair["reversing_significant"] == 0 and pair["reversal"] is None
    assert v["manufactured[b-b>c]"]["status"] == "pass"
    assert v["ranking[b]"]["status"] == "warn"


def test_axes_without_a_usable_axis_is_skipped_and_lone_groups_are_null():
    rng = np.random.default_rng(0)
    C = rng.random((3, 40, 2)) < 0.5
    # the second config changes template and ordering at once: no single axis varies alone
    s = audit_scope(records(C, ["a", "b", "c"], configs=(P0, DIGITS_P1)), "b", n_boot=200)
    v = {x["id"]: x for x in s["verdicts"]}["axes[b]"]
    assert v["status"] == "skip" and "no usable axis" in v["message"]
    s = audit_scope(records(C, ["a", "b", "c"], configs=(P0, LL)), "b", n_boot=200)
    assert s["axes"]["axis_kendall_min"]["ordering"] is None and s["axes"]["axis_kendall_min"]["format"] is None
    v = {x["id"]: x for x in s["verdicts"]}["axes[b]"]
    assert v["status"] != "skip" and v["evidence"]["load_bearing"] == "scoring"


def ranking_records(kind: str) -> Records:
    """a printed above b (reference config 0). Codes per model: R right under both configs, W
    wrong under both, F right under config 0 only, G right under config 1 only. AUDITS v4 judges
    ranking on the harness-averaged order (items where one model is right under more configs):
    fail: it puts b above a (10 v 40), pass: a above b (30 v 2), warn: it does not separate them
    (3 v 1; the 30 FG items are ties: one config each). "identified_fail": the robust items put b
    above a (20 v 0) but the averaged order does not (30 v 20): the v3 fail, now a warn."""
    blocks = {
        "fail": [(10, "FW"), (40, "WG"), (50, "WW")],
        "identified_fail": [(20, "WR"), (30, "FW"), (20, "RR"), (30, "WW")],
        "warn": [(3, "RW"), (1, "WR"), (30, "FG"), (66, "WW")],
        "pass": [(30, "RW"), (2, "WR"), (68, "WW")],
    }[kind]
    parts = []
    for n, codes in blocks:
        b = np.zeros((2, n, 2), dtype=bool)
        for m, c in enumerate(codes):
            b[m] = c == "R"
            if c == "F":
                b[m, :, 0] = True
            if c == "G":
                b[m, :, 1] = True
        parts.append(b)
    return records(np.concatenate(parts, axis=1), ["a", "b"])


@pytest.mark.parametrize("kind", ["fail", "identified_fail", "warn", "pass"])
def test_ranking_verdict(kind):
    rec = ranking_records(kind)
    s = audit_scope(rec, "b", n_boot=500)
    v = {x["id"]: x for x in s["verdicts"]}["ranking[b]"]
    assert [r["model"] for r in s["leaderboard"]] == ["a", "b"]
    assert v["status"] == kind.replace("identified_fail", "warn")
    assert v["evidence"]["basis"] == "averaged"  # two configs: the harness-averaged order
    ident, avg = s["identified"], s["averaged"]
    assert ident["method"] == "holm-sign-test" and ident["alpha"] == 0.05
    (adj,) = avg["adjacent"]
    if kind == "fail":
        assert (adj["above"], adj["below"]) == (10, 40) and avg["edges"] == [["b", "a"]]
        assert avg["contradictions"] == [
            {
                "printed_above": "a",
                "identified_above": "b",
                "reference_items": [10, 0],
                "only": [10, 40],
                "p_holm": adj["p_holm"],
            }
        ]
        assert ident["edges"] == [] and ident["contradictions"] == []  # no robust item tells them apart
        assert (
            "a is printed above b (reference 10 v 0 items) but the harness-averaged sign test (Holm; the ranking check's own test) puts b above"
            in (v["message"])
        )
        assert v["value"] == 0.0 and v["margin"] == -1.0
    elif kind == "identified_fail":
        # v3 failed this: the robust items identify b above a (20 v 0), against the printed order
        assert ident["edges"] == [["b", "a"]] and ident["tiers"] == [["b"], ["a"]] and ident["robust_winner"] == "b"
        assert len(ident["contradictions"]) == 1
        assert (adj["above"], adj["below"], adj["identified"]) == (30, 20, None) and avg["contradictions"] == []
        assert (
            "1 of 1 adjacent pairs are not separated by the harness-averaged sign test (Holm; the ranking check's own test): a > b (30 v 20)"
            in (v["message"])
        )
    elif kind == "warn":
        assert ident["edges"] == [] and ident["tiers"] == [["a", "b"]] and ident["robust_winner"] is None
        assert (adj["above"], adj["below"], adj["identified"]) == (3, 1, None)
        assert (
            "1 of 1 adjacent pairs are not separated by the harness-averaged sign test (Holm; the ranking check's own test)"
            in v["message"]
        )
    else:
        assert ident["edges"] == [["a", "b"]] and ident["robust_winner"] == "a"
        assert (adj["above"], adj["below"], adj["identified"]) == (30, 2, "higher")
        assert v["value"] == 1.0 and v["margin"] == 0.0


def test_ranking_an_edge_against_a_printed_tie_is_not_a_contradiction():
    # review T09: a and b tie under the reference config (30 v 30); b is right on 30 items under
    # both configs where a is wrong (WR), and a, b split 30 items one config each (FG). Both orders
    # put b above a (robust 30 v 0, averaged 30 v 0), but a printed tie claims no order: warn
    C = ranking_blocks([(30, "WR"), (30, "FG"), (40, "WW")])
    s = audit_scope(C, "b", n_boot=200)
    assert [(r["model"], r["reference"]) for r in s["leaderboard"]] == [("a", 0.3), ("b", 0.3)]
    assert s["identified"]["edges"] == [["b", "a"]] and s["averaged"]["edges"] == [["b", "a"]]
    assert s["identified"]["contradictions"] == [] and s["averaged"]["contradictions"] == []
    v = {x["id"]: x for x in s["verdicts"]}["ranking[b]"]
    assert v["status"] == "warn" and v["evidence"]["contradictions"] == 0 and v["margin"] == -1.0
    assert "1 of 1 adjacent pairs are printed ties" in v["message"]
    assert (
        "the harness-averaged sign test (Holm; the ranking check's own test) orders 1 of them: b above a"
        in v["message"]
    )


def ranking_blocks(blocks: list[tuple[int, str]]) -> Records:
    parts = []
    for n, codes in blocks:
        b = np.zeros((2, n, 2), dtype=bool)
        for m, c in enumerate(codes):
            b[m] = c == "R"
            b[m, :, 0] |= c == "F"
            b[m, :, 1] |= c == "G"
        parts.append(b)
    return records(np.concatenate(parts, axis=1), ["a", "b"])


def test_configs_won_does_not_count_ties():
    # review T18: a v b right counts per config (10, 5), (7, 7), (3, 8): each wins one, the tie neither
    from leaderboard_audit.metrics.averaged import configs_won

    C = np.zeros((2, 20, 3), dtype=bool)
    for k, (a, b) in enumerate([(10, 5), (7, 7), (3, 8)]):
        C[0, :a, k] = True
        C[1, :b, k] = True
    won = configs_won(C)
    assert won.tolist() == [[0, 1], [1, 0]]
    rec = records(C, ["a", "b"], configs=(P0, P1, LL))
    s = audit_scope(rec, "b", n_boot=200)
    (adj,) = s["averaged"]["adjacent"]
    assert (adj["higher"], adj["lower"], adj["configs_won"]) == ("a", "b", [1, 1])


def test_alpha_reaches_the_identified_order():
    rec = ranking_records("warn")  # 3 v 1: p = 0.625
    s = audit_scope(rec, "b", n_boot=200, alpha=0.7)
    assert s["identified"]["alpha"] == 0.7 and s["identified"]["edges"] == [["a", "b"]]


def test_report_carries_the_v2_fields_and_renderers_show_the_tiers():
    from leaderboard_audit.reports.html import render_html
    from leaderboard_audit.reports.markdown import render_markdown
    from leaderboard_audit.reports.terminal import render_summary

    rep = audit(ranking_records("identified_fail"), n_boot=200)  # the robust items reverse the pair
    s = rep["scopes"]["b"]
    assert set(s["pairs"][0]) >= {"cause", "items_needed"}
    assert set(s["identified"]) >= {"alpha", "method", "edges", "tiers", "robust_winner", "reason"}
    md = render_markdown(rep)
    assert "Printed order and identified tiers" in md and "REVERSED" in md and "robust winner: b" in md
    html = render_html(rep)
    assert "Printed order and identified tiers" in html and "REVERSED" in html
    verdicts = [v for sc in rep["scopes"].values() for v in sc["verdicts"]]
    text = render_summary(rep, verdicts)
    # v4 (reports): the summary's board line replaces the tier lines; the robust-item order is its column
    flat = " ".join(text.split())
    assert "publish the board by the harness-averaged comparison" in flat
    assert "robust items identify 1 of 1 pairs (own column)" in flat
    assert "ranking" in text
