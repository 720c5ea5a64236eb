"""Every audit number on fixtures/tiny against the values computed by hand in
fixtures/tiny/README.md (3 models x 8 items x 4 configs)."""

from __future__ import annotations

from fractions import Fraction as F

import pytest
from scipy.stats import chi2

from leaderboard_audit.records import load_records
from leaderboard_audit.engine import audit
from helpers.paths import REPO

TINY = REPO / "fixtures" / "tiny"


@pytest.fixture(scope="module")
def scope():
    rep = audit(load_records(TINY), seed=1234, n_boot=2000)
    assert set(rep["scopes"]) == {"pooled", "tiny"}
    assert rep["scopes"]["pooled"]["leaderboard"] == rep["scopes"]["tiny"]["leaderboard"]
    return rep["scopes"]["tiny"]


def approx(x):
    return pytest.approx(float(x), abs=1e-12)


def test_leaderboard_and_bands(scope):
    rows = {r["model"]: r for r in scope["leaderboard"]}
    assert [r["model"] for r in scope["leaderboard"]] == ["alpha", "beta", "gamma"]
    assert [(r["rank"], r["tie"]) for r in scope["leaderboard"]] == [(1, False), (2, True), (2, True)]
    want = {  # reference, min, max, robust, optimistic, config_lucky
        "alpha": (F(6, 8), F(4, 8), F(6, 8), F(3, 8), F(6, 8), F(3, 6)),
        "beta": (F(5, 8), F(4, 8), F(6, 8), F(2, 8), F(6, 8), F(3, 5)),
        "gamma": (F(5, 8), F(2, 8), F(5, 8), F(2, 8), F(6, 8), F(3, 5)),
    }
    for m, (ref, lo, hi, rob, opt, lucky) in want.items():
        r = rows[m]
        assert (r["reference"], r["min"], r["max"]) == (approx(ref), approx(lo), approx(hi))
        assert r["spread"] == approx(hi - lo)
        assert (r["robust"], r["optimistic"], r["config_lucky"]) == (approx(rob), approx(opt), approx(lucky))


def test_pairs(scope):
    ab, bg = scope["pairs"]
    assert (ab["higher"], ab["lower"], ab["gap_items"], ab["robust_items"]) == ("alpha", "beta", 1, 4)
    assert (ab["higher_only"], ab["lower_only"], ab["reversing"]) == (1, 1, 1)
    assert ab["fragile_share"] == approx(1) and ab["robust_diff"] == approx(0)
    assert ab["ci"][0] < 0 < ab["ci"][1] and ab["robust_tie"]
    # 1 v 1 robust items decide nothing and no configuration reverses the pair beyond sampling:
    # not decidable, and (v5) not called manufactured
    assert (ab["cause"], ab["manufactured"]) == ("undecidable", False)
    assert (bg["higher"], bg["lower"], bg["gap_items"], bg["robust_items"]) == ("beta", "gamma", 0, 3)
    assert (bg["higher_only"], bg["lower_only"], bg["reversing"]) == (0, 1, 0)
    assert bg["fragile_share"] is None and bg["gap"] == 0
    assert bg["robust_diff"] == approx(F(-1, 3))
    assert not bg["manufactured"]  # gap = 0: a tie, not a manufactured order


def test_champions(scope):
    ch = scope["champions"]
    assert sorted(ch["set"]) == ["alpha", "beta"] and ch["count"] == 2
    assert sorted(ch["outright"]) == ["alpha", "beta"]
    assert sorted(ch["top3"]) == ["alpha", "beta", "gamma"]
    per = {c["config"]: c for c in ch["per_config"]}
    assert per["gen|letter_plain|p0"]["winners"] == ["alpha"]
    assert sorted(per["gen|letter_plain|p1"]["winners"]) == ["alpha", "beta"]
    assert per["gen|letter_plain|p1"]["runner_up"] == "gamma"
    assert per["ll|cloze_plain"]["winners"] == ["beta"]
    assert per["ll|cloze_plain"]["runner_up"] == "alpha"
    assert [
        per[k]["margin_items"]
        for k in ("gen|letter_plain|p0", "gen|letter_plain|p1", "gen|digit_labels|p0", "ll|cloze_plain")
    ] == [1, 1, 1, 2]
    assert ch["rank_range"] == {"alpha": [1, 2], "beta": [1, 2], "gamma": [2, 3]}
    assert ch["kendall_tau"] == {"mean": approx(0.5), "min": approx(0)}


def test_axes(scope):
    ax = scope["axes"]
    assert ax["groups"] == {
        "ordering": ["gen|letter_plain|p0", "gen|letter_plain|p1"],
        "format": ["gen|letter_plain|p0", "gen|digit_labels|p0"],
        "scoring": ["gen|letter_plain|p0", "ll|cloze_plain"],
        "joint": ["gen|letter_plain|p0", "gen|letter_plain|p1", "gen|digit_labels|p0", "ll|cloze_plain"],
    }
    want = {"alpha": (4, 5, 4, 3), "beta": (3, 4, 5, 2), "gamma": (3, 3, 2, 2)}
    for m, counts in want.items():
        got = ax["robust_accuracy"][m]
        assert [got[a] for a in ("ordering", "format", "scoring", "joint")] == [approx(F(c, 8)) for c in counts]
    assert ax["axis_kendall_min"] == {
        "ordering": approx(0.5),
        "format": approx(1),
        "scoring": approx(0),
        "joint": approx(0),
    }
    # AUDITS v4 attributions (size-free, review T5). Items answered differently from the reference
    # under P1 / D / L: alpha 2 / 1 / 2 (q5 q7 / q6 / q5 q6), beta 3 / 1 / 1 (q2 q6 q7 / q5 / q6),
    # gamma 2 / 3 / 3 (q4 q7 / q4 q5 q6 / q4 q5 q7); each axis here holds one config besides the
    # reference, joint the mean of the three
    dis = {"alpha": (2, 1, 2), "beta": (3, 1, 1), "gamma": (2, 3, 3)}
    for m, (p1, d, ll) in dis.items():
        want = {"ordering": F(p1, 8), "format": F(d, 8), "scoring": F(ll, 8), "joint": F(p1 + d + ll, 24)}
        assert ax["disagreement"][m] == {a: approx(x) for a, x in want.items()}
    # most destructive = the largest disagreement, first in axis order on ties (gamma: format 3/8 =
    # scoring 3/8); v3's argmin of axis-robust accuracy named scoring for gamma
    assert ax["most_destructive"] == {"alpha": "ordering", "beta": "ordering", "gamma": "format"}
    assert ax["axis_kendall_mean"] == {
        "ordering": approx(0.5),
        "format": approx(1),
        "scoring": approx(0),
        "joint": approx(0.5),
    }
    # the interaction test of L (x = right under L only, y = under R only: alpha 0 v 2, beta 1 v 0,
    # gamma 0 v 3; D_m = (x - y)/8, w_m = 64 / max(x + y - (x - y)^2/8, 1)): statistic 670/99 on 2 df;
    # P1's is 8/29 and D's 0. Holm over the three: L's p x 3, the others 1
    assert ax["interaction_p_holm"]["ll|cloze_plain"] == approx(3 * chi2.sf(670 / 99, 2))
    assert ax["interaction_p_holm"]["gen|letter_plain|p1"] == ax["interaction_p_holm"]["gen|digit_labels|p0"] == 1.0
    assert ax["axis_interaction_p"] == {
        "ordering": 1.0,
        "format": 1.0,
        "scoring": approx(3 * chi2.sf(670 / 99, 2)),
        "joint": approx(3 * chi2.sf(670 / 99, 2)),
    }


def test_brittleness(scope):
    br = scope["brittleness"]
    want = {
        "alpha": (F(159, 1024), F(88, 1024)),
        "beta": (F(143, 1024), F(104, 1024)),
        "gamma": (F(140, 1024), F(112, 1024)),
    }
    for m, (vi, vp) in want.items():
        assert br[m]["v_item"] == approx(vi) and br[m]["v_prompt"] == approx(vp)
        assert br[m]["brittleness"] == approx(vp / (vi + vp))


def test_verdicts(scope):
    """AUDITS v4 on 8 items: every spread, champion and reordering is within item sampling, so
    nothing fails (v3 failed band[alpha], manufactured[alpha>beta] and axes)."""
    v = {x["id"]: x for x in scope["verdicts"]}
    # Cochran's Q by hand: alpha counts (6, 4, 5, 4), T = 19, sum_i R_i^2 = 65: Q = 3 (11 / 11) = 3;
    # beta (5, 4, 4, 6), 63: Q = 3 * 11 / 13; gamma (5, 3, 4, 2), 42: Q = 3 * 20 / 14 = 30/7
    q = {"alpha": F(3), "beta": F(33, 13), "gamma": F(30, 7)}
    p = {m: chi2.sf(float(x), 3) for m, x in q.items()}
    holm = {"gamma": 3 * p["gamma"], "beta": max(3 * p["gamma"], 2 * p["alpha"]), "alpha": 2 * p["alpha"]}
    rows = {r["model"]: r for r in scope["leaderboard"]}
    for m in q:
        assert rows[m]["cochran_q"] == approx(q[m]) and rows[m]["harness_p"] == approx(p[m])
        assert rows[m]["harness_p_holm"] == approx(holm[m])
        b = v[f"band[tiny-{m}]"]
        assert b["status"] == "warn" and "within item sampling" in b["message"]  # spread > 0.05, Q p > 0.05
    assert v["band[tiny-alpha]"]["margin"] == approx(0.02 - 0.25)
    # alpha > beta: manufactured (1 v 1 robust), L reverses it 3 v 1 (p 0.625): not decidable, a warn
    ab = v["manufactured[tiny-alpha>beta]"]
    assert ab["status"] == "warn" and scope["pairs"][0]["cause"] == "undecidable"
    assert ab["evidence"]["reversing_significant"] == 0 and ab["evidence"]["board_tests"] == 4
    assert v["manufactured[tiny-beta>gamma]"]["status"] == "warn"  # a tie printed as an order
    # beta wins L by 2 items: 3 v 1 against alpha, not beyond item sampling (6 tests)
    assert scope["champions"]["challenges"] == {"tested": 6, "alpha": 0.05, "min_p_holm": 1.0, "significant": []}
    assert v["champions[tiny]"]["status"] == "warn" and v["champions[tiny]"]["value"] == 0
    # scoring has min tau 0 < 0.6, but L's interaction Holm p is 0.10: warn, scoring named by its mean tau
    assert v["axes[tiny]"]["status"] == "warn" and v["axes[tiny]"]["evidence"]["load_bearing"] == "scoring"
    assert "the order moves along the scoring axis" in v["axes[tiny]"]["message"]
    assert v["compression[tiny]"]["status"] == "pass"  # corr 0.38, CI low -1
    assert v["ranking[tiny]"]["status"] == "warn"
    assert v["brittleness[tiny]"]["status"] == "warn"
    assert v["brittleness[tiny]"]["value"] == approx(F(4, 9))
