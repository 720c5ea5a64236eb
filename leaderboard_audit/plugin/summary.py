"""The audit's part of pytest's terminal summary (the process that audited)."""

from __future__ import annotations

from typing import Any

from .results import FAILURE_DETAILS_LIMIT


def write_summary(session: Any, terminalreporter: Any, width: int) -> None:
    """The audit line and tables (``--audit-summary``), the counts line, the notes on folded
    alias scopes, the dropped failure details, the written reports and any output errors."""
    if session.settings.summary != "none":
        report = session.report()
        from ..reports.terminal import counts_line, wrap_line

        judged = list(session.verdicts.values())
        why = "--audit-submission: only the verdicts about the newcomer" if session.settings.submission else "-k/-m"
        trailer = (
            [counts_line(report, session.test_outcomes, session.multi_verdict_tests, judged, why)]
            if session.test_outcomes
            else []
        )
        if "submission_audit" in report:  # only the newcomer's checks, and one line on the state
            from ..reports.submission_text import render_submission_text

            text = render_submission_text(report, width=width)
            text += "".join("\n" + wrap_line(t, max(60, width)) for t in trailer)
        else:
            from ..reports.terminal import render_summary

            text = render_summary(report, judged, detail=session.settings.summary, width=width, trailer=trailer)
        terminalreporter.write_sep("=", "leaderboard audit")
        for line in text.splitlines():
            terminalreporter.write_line(line)
        # the counts line says it where tests ran
        folded = () if session.test_outcomes else session.folded()
        for alias, target in folded:
            note = (
                f"{alias} = {target} (one benchmark): each {target} test also judges {alias}'s "
                "verdict (the audit counts verdicts, pytest tests)"
            )
            for line in wrap_line(note, max(60, width)).splitlines():
                terminalreporter.write_line(line)
    if session.details_dropped:
        terminalreporter.write_line(
            f"{session.failed_tests} audit tests failed: pytest's per-test failure section is left out above "
            f"{FAILURE_DETAILS_LIMIT} failures (the summary above and the reports hold every verdict); "
            "--tb=short shows it"
        )
    for line in session.written:
        terminalreporter.write_line(line)
    for err in session.output_errors:
        terminalreporter.write_line(f"ERROR: {err}", red=True, bold=True)


__all__ = ["write_summary"]
