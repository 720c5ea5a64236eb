"""The report of an incomplete grid never reads a missing cell as a wrong answer (issue 53,
item 1): a metamorphic test over the whole report. Complete the missing cells all wrong and
all right; every value the incomplete report prints as exact is the same in both completions'
reports, every range holds both completions' values, every estimate carries its interval, and
no other section appears (checks/incomplete_sections.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from leaderboard_audit.checks.incomplete_sections import BOARD_MIN_SHARE, EXACT_KEYS
from leaderboard_audit.collect.replay import replay_plan, replayed_records
from leaderboard_audit.engine import audit
from leaderboard_audit.records import Records, load_records
from leaderboard_audit.reports.leaderboard import render_csv, render_md
from leaderboard_audit.reports.next_steps import next_steps

ROOT = Path(__file__).resolve().parents[2]
TOL = 1e-9


def completed(inc: Records, value: bool) -> Records:
    """``inc`` with every missing cell right (``value``) or wrong: a complete grid."""
    miss = np.asarray(inc.missing) != 0
    c = np.asarray(inc.correct).copy()
    c[miss] = value
    score = None
    if inc.score is not None:
        score = np.asarray(inc.score, dtype=float).copy()
        score[miss] = float(value)
    return replace(inc, correct=c, missing=None, score=score)


def replayed(name: str, budget: float, seed: int = 1, **kw) -> Records:
    full = load_records(ROOT / "fixtures" / name / ("records" if name == "release" else ""))
    return replayed_records(full, replay_plan(full, budget, seed, **kw), fraction=budget, seed=seed)


def inside(value: float, span: list[float]) -> bool:
    return span[0] - TOL <= value <= span[1] + TOL


def check_metamorphic(inc: Records, rep: dict | None = None) -> dict:
    """Audits ``inc`` (or takes its report ``rep``) and both completions; asserts the module
    docstring's rules; returns the report."""
    rep = audit(inc, n_boot=50) if rep is None else rep
    lows, highs = (audit(completed(inc, v), n_boot=50) for v in (False, True))
    for name, s in rep["scopes"].items():
        if not (s.get("incomplete") or {}).get("missing"):
            continue  # a scope whose own cells are all observed is a complete grid
        extra = set(s) - EXACT_KEYS - {"leaderboard", "averaged"}
        for key in extra:  # only a skipped section (its reason, no value) may stay
            assert set(s[key]) == {"skipped"}, (name, key)
        for key, why in s["incomplete"].get("withheld", {"?": None}).items():
            assert isinstance(why, str) and why, (name, key)
        for done in (lows, highs):
            t = done["scopes"][name]
            for k in ("n_items", "n_models", "n_configs", "reference"):
                assert s[k] == t[k]
            truth = {r["model"]: r for r in t["leaderboard"]}
            assert [r["model"] for r in s["leaderboard"]] == [r["model"] for r in t["leaderboard"]]
            avg = {r["model"]: r["averaged"] for r in t["averaged"]["board"]["rows"]}
            for r in s["leaderboard"]:
                full = truth[r["model"]]
                for k in ("rank", "tie", "reference", "reference_items"):  # exact
                    assert r[k] == full[k], (name, r["model"], k)
                for k in ("min", "max", "spread", "robust"):  # ranges over every completion
                    assert inside(full[k], r["bounds"][k]), (name, r["model"], k, full[k], r["bounds"][k])
                assert inside(avg[r["model"]], r["bounds"]["averaged"])
            for v in s["verdicts"]:
                if v.get("decided"):
                    other = next(x for x in t["verdicts"] if x["id"] == v["id"])
                    assert v["status"] == other["status"], v["id"]
        if "averaged" in s:  # an estimate: with its interval, inside the exact range
            assert s["averaged"]["estimated_from"]["items"] >= BOARD_MIN_SHARE * s["n_items"]
            for r in s["averaged"]["board"]["rows"]:
                assert r["ci"][0] - TOL <= r["averaged"] <= r["ci"][1] + TOL
                assert r["ci"][1] > r["ci"][0] or r["bounds"][0] == r["bounds"][1]
                assert inside(r["ci"][0], r["bounds"]) and inside(r["ci"][1], r["bounds"])
        else:
            assert "averaged" in s["incomplete"]["withheld"]
    return rep


@pytest.mark.parametrize(
    ("name", "budget"),
    [("tiny", 0.3), ("tiny", 0.5)]  # tiny at 0.1 buys less than its reference round; the fast tier runs tiny
    + [
        pytest.param(n, b, marks=pytest.mark.slow)
        for n, b in [("demo", 0.1), ("demo", 0.3), ("real", 0.1), ("real", 0.3), ("release", 0.1), ("release", 0.3)]
    ],
)
def test_report_of_a_replay_holds_only_exact_bounded_or_estimated_values(name: str, budget: float) -> None:
    rep = check_metamorphic(replayed(name, budget))
    lines = next_steps(rep)
    assert not any("manufactured by the harness" in x for x in lines)  # a claim the pairs cannot support here
    assert any(x.startswith(("no board to publish yet", "publish the board")) for x in lines)


@pytest.mark.slow
def test_a_large_design_sample_prints_an_estimated_board() -> None:
    """With most of the budget spent on the uniform sample, the board is estimated from it, and
    says so on every output; its ranks come from the sample's own tests."""
    inc = replayed("demo", 0.8, sample_share=0.99)
    rep = check_metamorphic(inc)
    s = rep["scopes"]["pooled"]
    assert s["averaged"]["estimated_from"]["items"] >= 240
    md, csv = render_md(rep), render_csv(rep)
    assert "Incomplete grid" in md and "uniform random item sample" in md.replace("\\", "")
    assert csv.count("\n") == 1 + s["n_models"]
    assert any("design sample" in x for x in next_steps(rep))


@pytest.mark.slow
def test_a_small_design_sample_leaves_the_board_out_with_what_it_needs() -> None:
    rep = audit(replayed("demo", 0.3), n_boot=50)
    s = rep["scopes"]["pooled"]
    why = s["incomplete"]["withheld"]["averaged"]
    assert "more cells" in why and "of 480 items" in why
    md = render_md(rep).replace("\\", "")
    assert "Not ranked by the harness-averaged comparison" in md
    assert "Incomplete grid: 22,464 of 74,880 cells observed" in md


@pytest.mark.slow
def test_missing_read_as_wrong_fails_the_metamorphic_test() -> None:
    """The test's teeth: the report as the checks compute it on the bits (a missing cell read as
    0: the board, the pairs and the tables before this rule), labelled with the incomplete set's
    own ``incomplete`` sections, breaks its rules."""
    inc = replayed("demo", 0.3)
    honest = audit(inc, n_boot=50)
    on_the_bits = audit(completed(inc, False), n_boot=50)
    for name, s in on_the_bits["scopes"].items():
        s["incomplete"] = {k: v for k, v in honest["scopes"][name]["incomplete"].items() if k != "withheld"}
    with pytest.raises(AssertionError):
        check_metamorphic(inc, on_the_bits)
