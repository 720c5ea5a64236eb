"""Check messages that read right (issue 22's defects in checks/): plurals, whole counts,
a flip line that does not call an all-fragile grid a perfect catch, compliance without
unparseable answers, and the tiers' partial-order note."""

from __future__ import annotations

from leaderboard_audit.checks.flip import flip_line
from leaderboard_audit.checks.manufactured import pair_verdict
from leaderboard_audit.checks.ranking import CHECK as RANKING
from leaderboard_audit.checks.robust_subset import _count
from leaderboard_audit.checks import Thresholds


def test_a_one_item_gap_is_one_item():
    p = {
        "higher": "a",
        "lower": "b",
        "gap": 0.01,
        "gap_items": 1,
        "fragile_share": 1.0,
        "robust_items": 0,
        "higher_only": 0,
        "lower_only": 0,
        "robust_diff": None,
        "ci": None,
        "reversing": 0,
        "p_value": 1.0,
        "identified": None,
        "robust_tie": True,
        "manufactured": True,
        "cause": "harness",
        "items_needed": None,
    }
    msg = pair_verdict("s", p, 26, Thresholds())["message"]
    assert "(1 item)" in msg and "(1 items)" not in msg


def test_champion_counts_are_whole_when_every_draw_agrees():
    assert (_count(3.0), _count(2.5), _count(None)) == ("3", "2.5", "n/a")


def flip(auc, base, recall=None, reason=None):
    screen = {"recall": recall, "flagged": 1200, "margin_cutoff": 0.1} if recall is not None else {"recall": None}
    return {
        "config": "ll|cloze_plain",
        "precision_target": 0.8,
        "pooled": {"auc": auc, "ci": None, "base_rate": base, "screen": screen, "reason": reason},
    }


def test_flip_line_on_all_fragile_data_is_not_a_perfect_catch():
    text = flip_line(flip(None, 0.9975, 1.0, "too few items in a class for an AUC: 1197 fragile, 3 robust"))
    assert "catches 100%" not in text and "n/a n/a" not in text and "no AUC (too few items in a class" in text
    text = flip_line(flip(0.7, 0.85, 1.0))
    assert "above the 80% precision target, so flagging every item reaches it" in text
    assert "never reached" not in flip_line(flip(0.6, 0.3, None))
    assert "catches 40% (1200 flagged)" in flip_line(flip(0.8, 0.3, 0.4))


def test_compliance_without_unparseable_answers_says_so():
    from leaderboard_audit.checks.compliance import CHECK as COMPLIANCE

    c = {
        "source": "pred",
        "generation_configs": ["gen|x"],
        "classes": None,
        "per_model": {
            "m": {
                "loss": 0.2,
                "compliance": 0.0,
                "competence": 0.2,
                "unrecorded": 0.0,
                "unparseable": 0.0,
                "compliance_share": 0.0,
                "unparseable_correct": 0.0,
            }
        },
        "scoring_tau": {"skipped": "no per-config predictions"},
    }
    lines = [t for t in COMPLIANCE.tables("s", {"compliance": c}) if getattr(t, "model_kind", "") == "line"]
    assert lines and "(most: m, 0.00)" not in lines[0].text and "no unparseable answer recorded" in lines[0].text


def test_the_ranking_table_says_tiers_are_a_partial_order():
    s = {
        "identified": {
            "alpha": 0.05,
            "tiers": [["a", "b"]],
            "robust_winner": None,
            "reason": "r",
            "pairs_tested": 1,
            "adjacent": [
                {
                    "higher": "a",
                    "lower": "b",
                    "higher_only": 0,
                    "lower_only": 0,
                    "p_holm": 1.0,
                    "identified": None,
                    "printed_tie": True,
                }
            ],
        },
        "leaderboard": [{"rank": 1, "model": "a", "reference": 0.5}, {"rank": 1, "model": "b", "reference": 0.5}],
    }
    table = next(t for t in RANKING.tables("s", s) if getattr(t, "model_kind", "") == "table")
    assert "Tiers are a partial order" in table.note


def test_counted_words_agree_in_mix_and_compression():
    """No "verdict(s)" / "item(s)" left in the checks' messages (issue 22: "(1 items)", "entr(ies)")."""
    from leaderboard_audit.checks.compression import _undefined_reason
    from leaderboard_audit.checks.mix import _changed

    assert (_changed(1), _changed(3)) == ("1 pooled verdict changes", "3 pooled verdicts change")
    assert _undefined_reason({"disc_defined": 1}) == "only 1 item has a defined discrimination"
    assert _undefined_reason({"disc_defined": 2}) == "only 2 items have a defined discrimination"
    import pathlib

    import leaderboard_audit.checks as checks

    for f in pathlib.Path(checks.__file__).parent.glob("*.py"):
        for bad in ("verdict(s)", "item(s)", "(ies)", "config(s)"):
            assert bad not in f.read_text(), (f.name, bad)
