"""The gate's tables as text (reports/submission_text.py): counts in words and with
thousands separators (UX review 2026-12-04 #22: `92 of 4277` beside `4,277`)."""

from __future__ import annotations

from leaderboard_audit.reports.submission_text import _capped
from leaderboard_audit.tables_model import Table


def test_rows_left_out_are_counted_with_separators():
    t = Table("gate-verdicts", "t", ["a"], [[i] for i in range(1500)])
    assert _capped(t, 10).note == "1,490 of 1,500 rows left out (the JSON report has them all)."
    assert _capped(t, None) is t
