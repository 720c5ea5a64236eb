"""With one benchmark, a failing test that also judges pooled's identical verdict prints the
evidence once and names the pooled twin in one line (issue 22: each pooled copy was printed
in full beside its benchmark twin)."""

from __future__ import annotations

import re

import pytest

from helpers.paths import REPO

TINY = REPO / "fixtures" / "tiny"


def test_a_pooled_twin_is_named_not_printed_again(pytester, tmp_path):
    from leaderboard_audit.records import write_records
    from leaderboard_audit.records.simulate import SimModel, SimSpec, simulate

    # one benchmark, a model whose score swings with the scoring method: its band fails (v4: beyond sampling)
    models = (SimModel("alpha", 0.5, scoring_shift={"ll": 3.0}), SimModel("beta", 0.0))
    write_records(simulate(SimSpec(models, {"one": 200}, seed=5)), tmp_path / "one")
    res = pytester.runpytest(
        f"--audit={tmp_path / 'one'}", "-p", "no:cacheprovider", "-k", "band", "--audit-boot", "200"
    )
    out = res.stdout.str()
    assert re.search(r"band\[one-alpha\]: FAIL  value \d", out)
    assert "band[pooled-alpha]: FAIL" not in out
    assert "band[pooled-alpha]: the same verdict (FAIL; one benchmark: pooled holds its items)" in out


# ---- issue 22: one line reconciles pytest's counts, the audit's and the HTML/Markdown headers'


DEMO = REPO / "fixtures" / "demo"


def _counts(text: str) -> str:
    """The summary's counts line, unwrapped."""
    lines = text.splitlines()
    i = next(j for j, line in enumerate(lines) if line.startswith("counts: "))
    out = [lines[i]]
    for line in lines[i + 1 :]:
        if not line.startswith("    "):
            break
        out.append(line.strip())
    return " ".join(out)


def _header_counts(html: str, md: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    h = re.search(
        r'<span class="pass">(\d+) pass</span>, <span class="warn">(\d+) warn</span>, '
        r'<span class="fail">(\d+) fail</span>',
        html,
    )
    m = re.search(r"\*\*(\d+) pass, (\d+) warn, (\d+) fail\*\*", md)
    return tuple(map(int, h.groups())), tuple(map(int, m.groups()))


@pytest.mark.slow
def test_counts_line_relates_pytest_the_audit_and_the_headers(pytester, tmp_path):
    html, md = tmp_path / "a.html", tmp_path / "a.md"
    res = pytester.runpytest(
        f"--audit={DEMO}",
        "-p",
        "no:cacheprovider",
        "--tb=no",
        "-q",
        "--audit-boot",
        "200",
        f"--audit-html={html}",
        f"--audit-markdown={md}",
    )
    out = res.stdout.str()
    failed, passed, warned = (res.parseoutcomes().get(k, 0) for k in ("failed", "passed", "warn"))
    n = failed + passed + warned
    audit = re.search(r"^audit: (\d+) pass, (\d+) warn, (\d+) fail$", out, re.M)
    assert tuple(map(int, audit.groups())) == (passed, warned, failed)
    line = _counts(out)
    assert line.startswith(
        f"counts: pytest's {n} audit tests ({failed} failed, {passed} passed, {warned} warn; warn = passed with "
        f"a warning) are the audit line's {n} verdicts, one each; the HTML and Markdown headers count the "
        f"report's {n} verdicts over 5 scopes"
    ), line
    h, m = _header_counts(html.read_text(), md.read_text())
    assert h == m == (passed, warned, failed)
    assert f"These count the {n} verdicts of the report over 5 scopes" in html.read_text()
    assert "pytest --audit runs one test per verdict" in html.read_text()


def test_counts_line_with_a_twin_scope_and_a_selection(pytester, tmp_path):
    """One benchmark and -k: pytest counts fewer tests than the audit line has verdicts (a test
    judges pooled's twin too) and the headers count the whole report; the line says each."""
    html, md = tmp_path / "a.html", tmp_path / "a.md"
    res = pytester.runpytest(
        f"--audit={TINY}",
        "-p",
        "no:cacheprovider",
        "--tb=no",
        "-q",
        "--audit-boot",
        "200",
        "-k",
        "band",
        f"--audit-html={html}",
        f"--audit-markdown={md}",
    )
    out = res.stdout.str()
    o = res.parseoutcomes()
    n_tests = sum(o.get(k, 0) for k in ("failed", "passed", "warn"))
    audit = re.search(r"^audit: (\d+) pass, (\d+) warn, (\d+) fail$", out, re.M)
    n_verdicts = sum(map(int, audit.groups()))
    assert n_verdicts == 2 * n_tests  # each tiny test judges pooled's verdict too
    line = _counts(out)
    h, m = _header_counts(html.read_text(), md.read_text())
    assert h == m
    n_report = sum(h)
    assert f"pytest's {n_tests} audit tests (" in line
    assert (
        f"judge the audit line's {n_verdicts} verdicts ({n_tests} tests judge two: each tiny test also judges " in line
    )
    assert f"count the report's {n_report} verdicts over 1 scope (tiny repeats pooled: counted once; " in line
    assert f"{n_report - n_tests} judged by no test run here (-k/-m)" in line
    assert "pooled = tiny (one benchmark)" not in out  # the older note, now part of the line


@pytest.mark.slow
def test_counts_line_under_the_submission_gate(pytester, monkeypatch):
    """The gate's summary ends with the counts line too: its xfails are the gate's context (fails the
    newcomer did not create), the verdicts left out are the ones not about the newcomer; the
    newcomer's row names at most three configs it wins and counts the rest (on a terminal wide
    enough: at 80 columns the tables are fitted to the width, their free text cut)."""
    monkeypatch.setenv("COLUMNS", "300")  # the row holds the board rank too (AUDITS v5)
    res = pytester.runpytest(
        f"--audit={DEMO}", "-p", "no:cacheprovider", "--tb=no", "-q", "--audit-boot", "200",
        "--audit-submission", "atlas-70b-instruct",
    )  # fmt: skip
    out = res.stdout.str()
    xfailed = res.parseoutcomes().get("xfailed", 0)
    assert xfailed > 0
    line = _counts(out)
    assert f"{xfailed} xfailed" in line and "xfailed = a fail the newcomer did not create (gate context)" in line
    assert "judged by no test run here (--audit-submission: only the verdicts about the newcomer)" in line
    assert "skipped" not in line.split(")")[0]
    # the newcomer's row: its board rank (and interval), then its printed position "1/6"
    rows = [
        ln for ln in out.splitlines() if ln.startswith("pooled ") and "atlas-70b-instruct  1" in ln and " 1/6 " in ln
    ]
    assert rows and rows[0].count(" items over the rest)") == 3 and "more configs (report: submission_audit)" in rows[0]
