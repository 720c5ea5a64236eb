"""The gate's tables as text (reports/submission_text.py): counts in words and with
thousands separators (UX review 2026-12-04 #22: `92 of 4277` beside `4,277`)."""

from __future__ import annotations

from leaderboard_audit.reports.submission_text import _capped
from leaderboard_audit.checks.tables import Table


def test_rows_left_out_are_counted_with_separators():
    t = Table("gate-verdicts", "t", ["a"], [[i] for i in range(1500)])
    assert _capped(t, 10).note == "1,490 of 1,500 rows left out (the JSON report has them all)."
    assert _capped(t, None) is t


def test_gate_tables_are_fitted_to_the_terminal_ids_whole():
    """At 80 columns the gate's tables were 200 characters wide (UX review 2026-12-04 #15)."""
    from leaderboard_audit.reports.submission_text import MIN_CUT, fit_to_width
    from leaderboard_audit.reports.terminal import render_table

    vid = "manufactured[pooled-org/a-very-long-model-name>mid]"
    rows = [["pooled", vid, "FAIL", "created by the newcomer: fails the gate", "x" * 300]]
    t = Table(
        "gate-verdicts", "t", ["scope", "verdict", "status", "effect", "message"], rows, widths={1: 60, 3: 48, 4: 60}
    )
    wide = render_table(t)
    assert max(map(len, wide.splitlines())) > 150
    fitted = render_table(fit_to_width(t, 100))
    assert max(map(len, fitted.splitlines())) <= 100 and vid in fitted  # the id whole
    narrow = render_table(fit_to_width(t, 60))  # cannot fit with the id whole: the rest at their floor
    assert vid in narrow and max(map(len, narrow.splitlines())) <= len(vid) + 6 + 6 + 2 * MIN_CUT + 8
