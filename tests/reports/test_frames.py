"""The report's tables as DataFrames (UX review 2026-12-04 #18: no pandas view)."""

from __future__ import annotations

import leaderboard_audit
from helpers.paths import TINY


def test_every_list_of_rows_is_a_dataframe():
    report = leaderboard_audit.audit(TINY, n_boot=200)
    tables = leaderboard_audit.report_tables(report)
    board = tables["pooled/leaderboard"]
    assert list(board["model"]) == [r["model"] for r in report["scopes"]["pooled"]["leaderboard"]]
    assert len(tables["pooled/pairs"]) == len(board) - 1
    assert set(tables["pooled/verdicts"]["status"]) <= {"pass", "warn", "fail", "skip"}
    assert "pooled/champions/per_config" in tables
    assert all(not t.empty for t in tables.values())
