"""The short terminal summary at narrow widths (UX review 2026-12-04 #8: at 80 columns the
board's rows disappeared without a word)."""

from __future__ import annotations

import pytest

from leaderboard_audit.engine import audit
from leaderboard_audit.reports.terminal import SHORT_LINES, render_short
from leaderboard_audit.records.simulate import demo_spec, simulate


@pytest.fixture(scope="module")
def demo_report() -> dict:
    return audit(simulate(demo_spec(items_per_benchmark=60)), n_boot=200)


def verdicts(report: dict) -> list[dict]:
    return [v for s in report["scopes"].values() for v in s["verdicts"]]


def joined(lines: list[str]) -> str:
    return " ".join(" ".join(lines).split())


def board_rows(lines: list[str]) -> int:
    # a board row starts at column 0 with its rank (wrapped text lines are indented)
    return sum(not line[:1].isspace() and line.split()[:1] in (["1"], ["2"], ["3"]) for line in lines)


def test_at_80_columns_the_board_is_shown_or_said_to_be_left_out(demo_report):
    """pytest's counts paragraph (5 lines at 80 columns) is reserved below the summary; the
    worst offenders come before the board's rows, and a board without rows says so."""
    lines = render_short(demo_report, verdicts(demo_report), width=80, reserve=5)
    assert len(lines) + 1 + 5 <= SHORT_LINES
    assert any("worst offenders" in line for line in lines)
    assert board_rows(lines) > 0 or "board's rows are left out" in joined(lines)
    wide = render_short(demo_report, verdicts(demo_report), width=200, reserve=5)
    assert board_rows(wide) == 3 and not any("left out" in line for line in wide)


def test_a_board_left_out_says_so(demo_report):
    lines = render_short(demo_report, verdicts(demo_report), width=40, reserve=8)
    assert board_rows(lines) == 0
    assert "board's rows are left out at this width" in joined(lines)


def test_rows_left_out_are_counted_in_words():
    """`... 1 more rows (in the full tables and the reports: see the last line)`: a wrong plural,
    and a pointer to full tables the CLI does not have (UX review 2026-12-04 #19, #22)."""
    from leaderboard_audit.reports.terminal import render_table
    from leaderboard_audit.checks.tables import Table

    t = Table(key="t", title="t", headers=["a"], rows=[[1], [2], [3]])
    assert render_table(t, max_rows=2).splitlines()[-1] == (
        "... 1 more row (every row is in the reports; the closing line says how)"
    )
    assert "... 2 more rows" in render_table(t, max_rows=1)


def test_what_to_do_next_names_its_scope_when_pooled_is_not_shown(demo_report):
    """With ``-k "mmlu and manufactured"`` the block described mmlu under a header naming all
    four benchmarks (UX review 2026-12-04 #25)."""
    from leaderboard_audit.reports.html import render_html
    from leaderboard_audit.reports.markdown import render_markdown

    assert "what to do next:" in render_short(demo_report, verdicts(demo_report), width=120)
    only = {**demo_report, "scopes": {"mmlu": demo_report["scopes"]["mmlu"]}}
    assert "what to do next (scope mmlu):" in render_short(only, verdicts(only), width=120)
    assert "## What to do next (scope mmlu)" in render_markdown(only)
    assert "<h2>What to do next (scope mmlu)</h2>" in render_html(only)


def test_the_audit_line_counts_with_thousands_separators(demo_report):
    """`audit: … 8556 warn` beside the Markdown's `4,278 warn` (UX review 2026-12-04 #13)."""
    from leaderboard_audit.reports.terminal import render_summary

    one = {"id": "band[pooled-m]", "check": "band", "status": "warn", "margin": -0.01, "message": ""}
    many = [dict(one, id=f"band[pooled-m{i}]") for i in range(8556)]
    text = render_summary(demo_report, many, width=120)
    assert "audit: 0 pass, 8,556 warn, 0 fail" in text
