"""UX review 2026-12-04, minor items fixed with the v4 work: #16 (one-model boards), #21 (the
flip line next to the base rate), #23 (a fragile share above 1 explained)."""

from __future__ import annotations

import pytest

from leaderboard_audit import audit
from leaderboard_audit.checks.flip import flip_line
from leaderboard_audit.checks.manufactured import pair_verdict
from leaderboard_audit.checks.thresholds import Thresholds
from leaderboard_audit.records.simulate import SimModel, SimSpec, simulate
from leaderboard_audit.reports.next_steps import next_steps


def test_one_model_board_says_there_is_no_order_and_gives_its_band():
    rep = audit(simulate(SimSpec((SimModel("solo", 0.3, scoring_shift={"ll": 1.0}),), {"arc": 60})), n_boot=200)
    steps = next_steps(rep)
    assert steps and steps[0].startswith("one model (solo): there is no order to audit; add models to compare")
    assert "Its score is a band:" in steps[0] and "26 configurations" in steps[0]


def test_flip_line_says_when_the_target_is_barely_above_the_base_rate():
    f = {
        "config": "ll|cloze_plain",
        "precision_target": 0.8,
        "pooled": {"auc": 0.6, "ci": [0.55, 0.65], "base_rate": 0.78, "screen": {"recall": 0.96, "flagged": 625}},
    }
    assert "barely above flagging every item (which gives 78% precision)" in flip_line(f)
    f["pooled"]["base_rate"] = 0.4
    assert "barely above" not in flip_line(f)


def _pair(fs: float) -> dict:
    return {
        "higher": "a",
        "lower": "b",
        "gap": 0.01,
        "gap_items": 1,
        "fragile_share": fs,
        "robust_items": 40,
        "higher_only": 3,
        "lower_only": 5,
        "robust_diff": -0.05,
        "ci": [-0.2, 0.1],
        "p_value": 0.73,
        "identified": None,
        "robust_tie": True,
        "manufactured": True,
        "reversing": 0,
        "cause": "sampling",
        "items_needed": None,
        "p_against_board": 1.0,
        "reversing_significant": 0,
    }


def test_a_fragile_share_above_one_is_explained():
    # 2026-12-07 M9: a value above 1 is no share; it is said as a multiple of the gap
    v = pair_verdict("s", _pair(3.0), 26, Thresholds())
    assert "the fragile items carry 3.0x the gap (the robust items favour the lower model)" in v["message"]
    assert "fragile share 3" not in v["message"]
    v = pair_verdict("s", _pair(0.5), 26, Thresholds())
    assert "fragile share 0.500" in v["message"] and "x the gap" not in v["message"]


@pytest.mark.slow
def test_the_published_board_says_where_it_comes_from(tmp_path):
    """#20: the board's files carried no provenance (tool version, benchmarks, seed, records hash)."""
    from leaderboard_audit.records import load_records
    from leaderboard_audit.reports.leaderboard import render_leaderboard

    from helpers.paths import REPO

    demo = REPO / "fixtures" / "demo"
    rep = audit(load_records(demo), n_boot=200, path=str(demo))
    md = render_leaderboard(rep, "b.md").replace("\\", "")
    assert "Made by leaderboard-audit" in md and "sha256 " in md and "seed 1234" in md
    html = render_leaderboard(rep, "b.html")
    assert (
        "<title>Leaderboard (arc, hellaswag, mmlu, truthfulqa)</title>" in html and "Made by leaderboard-audit" in html
    )


def test_champion_evidence_prints_the_lead_the_verdict_reads():
    """Statistical review T14: "by N" was the margin over the runner-up, not the lead over the
    reference winner that the verdict uses."""
    from leaderboard_audit.reports.terminal import _list_entry

    win = {"config": "k", "winners": ["b"], "margin_items": 6, "lead_items": 2}
    assert _list_entry(win) == "k: b +2 over the reference winner"
    tie = {"config": "k", "winners": ["a", "b"], "margin_items": 6, "lead_items": None}
    assert "ties the reference winner" in _list_entry(tie)
    sig = {
        "config": "k",
        "model": "b",
        "reference_winner": "a",
        "wins": 46,
        "losses": 2,
        "lead_items": 44,
        "p_holm": 1e-9,
    }
    assert _list_entry(sig) == "k: b +44 over a (46 v 2, Holm p 1e-09)"
