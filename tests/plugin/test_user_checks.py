"""Checks users write themselves (audit_records + audit_verdict) and checks third-party
packages register through the ``leaderboard_audit.checks`` entry point."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from helpers.builders import stable_records, write

USER_CHECK = '''
def test_no_config_drops_us_below(audit_records, audit_verdict):
    """Our model never scores below 0.6 under any configuration, on any benchmark."""
    m = audit_records.models.index("alpha")
    for bench in audit_records.benchmarks:
        acc = audit_records.scope(bench).correct[m].mean(axis=0)
        audit_verdict("floor", float(acc.min()), pass_at=0.6, warn_at=0.5, scope=bench,
                      message=f"alpha's worst configuration on {bench}: {acc.min():.3f}")


def test_gamma_floor(audit_records, audit_verdict):
    m = audit_records.models.index("gamma")
    audit_verdict("gamma_floor", float(audit_records.correct[m].mean(axis=0).min()), pass_at=0.6)
'''


@pytest.fixture(scope="module")
def stable_dir(tmp_path_factory) -> Path:
    return write(stable_records(), tmp_path_factory.mktemp("stable"))


def test_user_check_lands_in_every_report(pytester, stable_dir, tmp_path):
    pytester.makepyfile(test_ours=USER_CHECK)
    out = {k: tmp_path / f"r.{k}" for k in ("json", "md", "html", "xml")}
    result = pytester.runpytest(
        "--audit",
        str(stable_dir),
        "test_ours.py",
        "-p",
        "no:cacheprovider",
        "--audit-report",
        str(out["json"]),
        "--audit-markdown",
        str(out["md"]),
        "--audit-html",
        str(out["html"]),
        f"--junitxml={out['xml']}",
    )
    # alpha: 50/60 right everywhere -> 0.833 >= 0.6 pass; gamma: 10/60 -> 0.167 < 0.6 fail
    result.assert_outcomes(passed=12, failed=1)  # 11 audit tests (20 verdicts: one benchmark) + floor
    result.stdout.fnmatch_lines(["*gamma_floor[[]pooled[]]: FAIL  value 0.167  threshold 0.600  margin -0.433*"])
    rep = json.loads(out["json"].read_text())
    v = {x["id"]: x for s in rep["scopes"].values() for x in s["verdicts"]}
    assert v["floor[bench]"]["status"] == "pass" and v["floor[bench]"]["user"] is True
    assert v["gamma_floor[pooled]"]["status"] == "fail"
    assert abs(v["gamma_floor[pooled]"]["margin"] - (10 / 60 - 0.6)) < 1e-12
    assert "gamma_floor\\[pooled\\]" in out["md"].read_text()
    assert "gamma_floor[pooled]" in out["html"].read_text()
    props = {
        (tc.get("name"), p.get("name")): p.get("value")
        for tc in ET.parse(out["xml"]).iter("testcase")
        for p in tc.iter("property")
    }
    assert props[("test_gamma_floor", "audit_status")] == "fail"


def test_user_check_without_records_skips(pytester):
    pytester.makepyfile(test_ours=USER_CHECK)
    result = pytester.runpytest("test_ours.py", "-p", "no:cacheprovider", "-rs")
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(["*no records: run with --audit PATH*"])


def test_fixtures_are_documented(pytester):
    result = pytester.runpytest("--fixtures", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*audit_records*", "*audit_collect*", "*audit_verdict*"])


def test_audit_marker_selects_the_checks(pytester, stable_dir):
    result = pytester.runpytest("--audit", str(stable_dir), "-m", "audit", "-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=11)
    result = pytester.runpytest("--audit", str(stable_dir), "-m", "not audit", "-q", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


THIRD_PARTY = '''
from leaderboard_audit.checks import Check
from leaderboard_audit.checks.verdicts import judge, make_verdict


class MinRobust(Check):
    """Every model keeps at least 10% of the items robust-correct."""
    name = "min_robust"
    title = "Minimum robust accuracy"
    section = "min_robust"
    thresholds = {"min_robust": 0.1}

    def compute(self, scope):
        rc = scope.C.all(axis=2).mean(axis=1)
        return {scope.names[m]: float(rc[m]) for m in range(len(scope.names))}

    def judge(self, scope, section):
        worst = min(section, key=lambda m: (section[m], m))
        status, margin = judge(section[worst], pass_at=scope.thresholds.min_robust)
        return [make_verdict(self.name, f"min_robust[{scope.name}]", status, section[worst],
                             scope.thresholds.min_robust, margin, f"{worst} robust accuracy {section[worst]:.3f}")]
'''


def test_third_party_check_through_an_entry_point(pytester, stable_dir, tmp_path, monkeypatch):
    pkg = pytester.path / "site"
    (pkg / "mycheck").mkdir(parents=True)
    (pkg / "mycheck" / "__init__.py").write_text(THIRD_PARTY)
    dist = pkg / "mycheck-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: mycheck\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[leaderboard_audit.checks]\nmin_robust = mycheck:MinRobust\n")
    monkeypatch.setenv("PYTHONPATH", str(pkg))
    rep = tmp_path / "r.json"
    result = pytester.runpytest_subprocess(
        "--audit",
        str(stable_dir),
        "-p",
        "no:cacheprovider",
        "-q",
        "--audit-report",
        str(rep),
        "--audit-threshold",
        "min_robust=0.2",
        "-k",
        "min_robust",
    )
    # gamma gets 10/60 = 0.167 robust-correct < 0.2: fail in pooled and bench, one test (one
    # benchmark: pooled reuses the section, so the benchmark's test judges both verdicts)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*min_robust[[]bench[]]: FAIL*", "*min_robust[[]pooled[]]: *FAIL*"])
    data = json.loads(rep.read_text())
    got = {v["id"]: v["status"] for s in data["scopes"].values() for v in s["verdicts"] if v["check"] == "min_robust"}
    assert got == {"min_robust[bench]": "fail", "min_robust[pooled]": "fail"}
    assert data["thresholds"]["min_robust"] == 0.2
    assert data["scopes"]["pooled"]["min_robust"]["gamma"] == pytest.approx(10 / 60)
