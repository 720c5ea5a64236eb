"""Regression tests for verdicts that were wrong (issue 10), each built from records
(``Records`` from a bool tensor) and judged through the auditor, not from internals."""

from __future__ import annotations

import numpy as np
import pytest

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


def spread_records(items_apart: int, N: int = 100) -> tuple[Records, list[str]]:
    """One model per position: ``a`` items right under the reference config and
    ``a + items_apart`` under the other, for every a that fits in N items."""
    positions = range(N - items_apart + 1)
    C = np.zeros((len(positions), N, 2), dtype=bool)
    for m, a in enumerate(positions):
        C[m, :a, 0] = True
        C[m, : a + items_apart, 1] = True
    names = [f"m{a:03d}" for a in positions]
    return records(C, names), names


@pytest.mark.parametrize("items_apart,status", [(2, "pass"), (5, "warn"), (6, "fail")])
def test_band_boundaries_are_exact_at_every_position(items_apart, status):
    # 2 of 100 items is a spread of exactly 0.02 (float: 0.020000000000000018 at 69 of 99 positions)
    rec, names = spread_records(items_apart)
    v = verdicts(rec, n_boot=200)
    bands = [v[f"band[b-{m}]"] for m in names]
    assert {b["status"] for b in bands} == {status}, [b["id"] for b in bands if b["status"] != status][:5]
    if items_apart == 2:
        assert {b["margin"] for b in bands} == {0.0}


def test_champions_tied_challengers_fail():
    # reference config: ref wins with 60 of 100; the other config: x and y tie at 70, ref 60
    C = np.zeros((3, 100, 2), dtype=bool)
    C[0, :60, :] = True  # ref: 60 under both
    C[1, :50, 0] = C[2, :50, 0] = True  # x, y: 50 under the reference config
    C[1, :70, 1] = C[2, :70, 1] = True  # x, y: 70 under the other (tied)
    v = verdicts(records(C, ["ref", "x", "y"]))["champions[b]"]
    assert v["status"] == "fail" and v["value"] == 10 and v["margin"] == -7
    assert "x / y" in v["message"] and "by 10 items over the reference winner ref" in v["message"]


def test_champions_tie_with_the_reference_winner_is_a_warn():
    C = np.zeros((2, 100, 2), dtype=bool)
    C[0, :60, :] = True  # ref: 60 under both
    C[1, :50, 0] = True
    C[1, :60, 1] = True  # x ties ref under the other config
    v = verdicts(records(C, ["ref", "x"]))["champions[b]"]
    assert v["status"] == "warn" and v["value"] == 0 and "exact ties" in v["message"]


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
    assert (pair["fragile_share"], pair["manufactured"], pair["cause"]) == (0.0, True, "sampling")
    assert pair["items_needed"] == 330  # v3: 1 v 0 of 60 needs 6 v 0: J' = 5.5 * 60
    assert ab["status"] == "warn" and "too few jointly robust items" in ab["message"]
    assert "manufactured by config-fragile" not in ab["message"]
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
    """a printed above b; the robust items say: b better (fail), nothing (warn), a better (pass)."""
    blocks = {
        "fail": [(20, "WR"), (30, "FW"), (20, "RR"), (30, "WW")],
        "warn": [(3, "RW"), (1, "WR"), (30, "FW"), (66, "WW")],
        "pass": [(30, "RW"), (2, "WR"), (68, "WW")],
    }[kind]
    parts = []
    for n, codes in blocks:
        b = np.zeros((2, n, 2), dtype=bool)
        for m, c in enumerate(codes):
            b[m] = c == "R"
            if c == "F":
                b[m, :, 0] = True
        parts.append(b)
    return records(np.concatenate(parts, axis=1), ["a", "b"])


@pytest.mark.parametrize("kind", ["fail", "warn", "pass"])
def test_ranking_verdict(kind):
    rec = ranking_records(kind)
    s = audit_scope(rec, "b", n_boot=500)
    v = {x["id"]: x for x in s["verdicts"]}["ranking[b]"]
    assert [r["model"] for r in s["leaderboard"]] == ["a", "b"]
    assert v["status"] == kind
    ident = s["identified"]
    assert ident["method"] == "holm-sign-test" and ident["alpha"] == 0.05
    if kind == "fail":
        assert ident["edges"] == [["b", "a"]] and ident["tiers"] == [["b"], ["a"]]
        assert ident["robust_winner"] == "b"
        assert "a is printed above b" in v["message"] and v["value"] == 0.0 and v["margin"] == -1.0
    elif kind == "warn":
        assert ident["edges"] == [] and ident["tiers"] == [["a", "b"]] and ident["robust_winner"] is None
        assert "1 of 1 adjacent pairs are not identified" in v["message"]
    else:
        assert ident["edges"] == [["a", "b"]] and ident["robust_winner"] == "a"
        assert v["value"] == 1.0 and v["margin"] == 0.0


def test_alpha_reaches_the_identified_order():
    rec = ranking_records("warn")  # 3 v 1: p = 0.625
    s = audit_scope(rec, "b", n_boot=200, alpha=0.7)
    assert s["identified"]["alpha"] == 0.7 and s["identified"]["edges"] == [["a", "b"]]


def test_report_carries_the_v2_fields_and_renderers_show_the_tiers():
    from leaderboard_audit.reports.html import render_html
    from leaderboard_audit.reports.markdown import render_markdown
    from leaderboard_audit.reports.terminal import render_summary

    rep = audit(ranking_records("fail"), n_boot=200)
    s = rep["scopes"]["b"]
    assert set(s["pairs"][0]) >= {"cause", "items_needed"}
    assert set(s["identified"]) >= {"alpha", "method", "edges", "tiers", "robust_winner", "reason"}
    md = render_markdown(rep)
    assert "Printed order and identified tiers" in md and "REVERSED" in md and "robust winner: b" in md
    html = render_html(rep)
    assert "Printed order and identified tiers" in html and "REVERSED" in html
    verdicts = [v for sc in rep["scopes"].values() for v in sc["verdicts"]]
    text = render_summary(rep, verdicts)
    assert "identified order: 2 tiers of 1, 1 models; top tier: b; winner: b" in text
    assert "ranking" in text
