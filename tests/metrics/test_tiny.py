"""Every audit number on fixtures/tiny against the values computed by hand in
fixtures/tiny/README.md (3 models x 8 items x 4 configs)."""

from __future__ import annotations

from fractions import Fraction as F

import pytest

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
    assert ab["ci"][0] < 0 < ab["ci"][1] and ab["robust_tie"] and ab["manufactured"]
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
    assert ax["most_destructive"] == {"alpha": "ordering", "beta": "ordering", "gamma": "scoring"}


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
    v = {x["id"]: x for x in scope["verdicts"]}
    assert v["band[tiny-alpha]"]["status"] == "fail" and v["band[tiny-alpha]"]["margin"] == approx(0.02 - 0.25)
    assert v["manufactured[tiny-alpha>beta]"]["status"] == "fail"  # manufactured, reversed by L
    assert v["manufactured[tiny-beta>gamma]"]["status"] == "warn"  # a tie printed as an order
    assert v["champions[tiny]"]["status"] == "warn"  # beta wins L by 2 items <= 3
    assert v["champions[tiny]"]["value"] == 2
    assert v["axes[tiny]"]["status"] == "fail" and "scoring" in v["axes[tiny]"]["message"]
    assert v["brittleness[tiny]"]["status"] == "warn"
    assert v["brittleness[tiny]"]["value"] == approx(F(4, 9))
