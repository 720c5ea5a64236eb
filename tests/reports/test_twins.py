"""One benchmark: the pooled scope repeats it and the reports show repeated verdicts once,
but a user check's verdict on the benchmark's scope is shown everywhere (UX review
2026-12-04 #7: it failed the run and no table showed it)."""

from __future__ import annotations

import re

from helpers.builders import stable_records, write
from leaderboard_audit.reports.twins import reported_verdicts, twin_copy_test, twin_only

USER_CHECK = """
def test_floor(audit_records, audit_verdict):
    m = audit_records.models.index("gamma")
    for bench in audit_records.benchmarks:
        acc = audit_records.scope(bench).correct[m].mean(axis=0)
        audit_verdict("floor", float(acc.min()), pass_at=0.6, scope=bench, message=f"gamma on {bench}: {acc.min():.3f}")
"""


def _v(vid: str, status: str = "pass", **kw) -> dict:
    return {"id": vid, "check": vid.split("[")[0], "status": status, **kw}


def test_twin_copies_are_the_pooled_verdicts_repeated():
    report = {
        "scopes": {
            "arc": {"verdicts": [_v("band[arc-a]"), _v("ranking[arc]"), _v("floor[arc]", "fail", scope="arc")]},
            "pooled": {"verdicts": [_v("band[pooled-a]"), _v("ranking[pooled]"), _v("band[pooled-arc-b]")]},
        }
    }
    is_copy = twin_copy_test(report)
    assert [is_copy(v) for v in report["scopes"]["arc"]["verdicts"]] == [True, True, False]
    assert not is_copy(_v("band[pooled-arc-b]"))  # a model named arc-b is not the scope arc
    assert [v["id"] for v in twin_only(report, "arc")] == ["floor[arc]"]
    assert [v["id"] for v in reported_verdicts(report)] == [
        "floor[arc]",
        "band[pooled-a]",
        "ranking[pooled]",
        "band[pooled-arc-b]",
    ]
    two = {"scopes": {**report["scopes"], "mmlu": {"verdicts": [_v("band[mmlu-a]")]}}}
    assert len(reported_verdicts(two)) == 7  # two benchmarks: no twins


def test_a_user_verdict_on_the_only_benchmark_is_in_every_report(pytester, tmp_path):
    records = write(stable_records(), tmp_path / "records")  # one benchmark, "bench"
    pytester.makepyfile(test_ours=USER_CHECK)
    md, html = tmp_path / "r.md", tmp_path / "r.html"
    result = pytester.runpytest(
        "--audit", str(records), "test_ours.py", "-p", "no:cacheprovider", "--tb=no", "-q",
        "--audit-markdown", str(md), "--audit-html", str(html),
    )  # fmt: skip
    assert result.ret == 1
    out = result.stdout.str()
    assert re.search(r"^  floor\s+0 pass, 0 warn, 1 fail$", out, re.M), out  # the per-check table
    assert re.search(r"^FAIL floor\[bench\]  margin -0\.433", out, re.M)  # the worst offenders
    assert "count the report's 11 verdicts" in re.sub(r"\s+", " ", out)  # 10 bundled + floor
    text = md.read_text()
    assert text.count("floor\\[bench\\]") == 2  # attention table + its scope's own table
    assert "Verdicts only scope bench holds" in text and "These count the 11 verdicts" in text
    page = html.read_text()
    assert page.count("floor[bench]") >= 2 and "Verdicts only this scope holds" in page
