"""A registered check that misbehaves fails only its own verdicts, and the report is still
written (issue 25: B16 NaN verdict, B24 shadowing id, B33 raising compute, B34 short judge)."""

from __future__ import annotations

import json

import pytest
from helpers.paths import REPO

TINY = REPO / "fixtures" / "tiny"

UC = """
import os
from leaderboard_audit.checks import Check
from leaderboard_audit.checks.verdicts import judge, make_verdict
MODE = os.environ.get("UC_MODE", "ok")

class Simple(Check):
    name, section, thresholds = "uc_simple", "uc_simple", {"uc_pass": 0.1}

    def compute(self, scope):
        if MODE == "raise":
            raise RuntimeError("user check blew up in compute")
        return {"v": float("nan") if MODE == "nan" else float(scope.C.all(axis=2).mean())}

    def cases(self, scope):
        return [("band[pooled-alpha]", scope.name)] if MODE == "dupid" else super().cases(scope)

    def judge(self, scope, section):
        if MODE == "short":
            return []
        v, vid = section["v"], self.cases(scope)[0][0]
        if MODE == "nan":
            return [make_verdict(self.name, vid, "pass", v, 0.1, v, "nan")]
        st, mg = judge(v, pass_at=scope.thresholds.uc_pass)
        return [make_verdict(self.name, vid, st, v, 0.1, mg, "ok")]

class Band(Simple):
    name = "band"
"""


@pytest.fixture
def run(pytester, monkeypatch, tmp_path):
    from helpers.site import third_party_package

    pkg = third_party_package(
        pytester.path / "site", "uc_demo", UC, "leaderboard_audit.checks", "uc_simple = uc_demo:Simple"
    )
    monkeypatch.setenv("PYTHONPATH", str(pkg))
    monkeypatch.setenv("LEADERBOARD_AUDIT_CACHE", "off")

    def go(mode: str):
        monkeypatch.setenv("UC_MODE", mode)
        rep = tmp_path / f"{mode}.json"
        res = pytester.runpytest_subprocess(f"--audit={TINY}", "-p", "no:cacheprovider", "--audit-report", str(rep))
        return res, json.loads(rep.read_text()) if rep.exists() else None

    return go


def _verdicts(rep):
    return [v for s in rep["scopes"].values() for v in s["verdicts"]]


def test_a_nan_verdict_is_a_fail_and_the_report_is_written(run):
    res, rep = run("nan")
    assert rep is not None, res.stdout.str()[-2000:]
    mine = [v for v in _verdicts(rep) if v["check"] == "uc_simple"]
    assert mine and all(v["status"] == "fail" and v["value"] is None for v in mine)
    assert "non-finite" in mine[0]["message"]
    res.stdout.fnmatch_lines(["*audit:*pass*fail*"])


def test_a_raising_check_fails_only_its_own_tests(run):
    res, rep = run("raise")
    _, ok_rep = run("ok")
    assert res.parseoutcomes().get("errors", 0) == 0
    mine = [v for v in _verdicts(rep) if v["check"] == "uc_simple"]
    assert mine and all("uc_simple" in v["message"] and "RuntimeError" in v["message"] for v in mine)
    others = sorted((v["id"], v["status"]) for v in _verdicts(rep) if v["check"] != "uc_simple")
    assert others == sorted((v["id"], v["status"]) for v in _verdicts(ok_rep) if v["check"] != "uc_simple")


def test_a_short_judge_is_a_fail_not_a_keyerror(run):
    res, rep = run("short")
    assert res.parseoutcomes().get("errors", 0) == 0
    mine = [v for v in _verdicts(rep) if v["check"] == "uc_simple"]
    assert mine and all(v["status"] == "fail" and "returned 0 verdicts for" in v["message"] for v in mine)


@pytest.mark.slow
def test_a_registered_check_cannot_shadow_a_bundled_verdict_id(run):
    _, ok_rep = run("ok")
    _, rep = run("dupid")
    ids = [v["id"] for v in _verdicts(rep)]
    bundled = [v for v in _verdicts(rep) if v["id"] == "band[pooled-alpha]"]
    assert len(bundled) == 1 and bundled[0]["check"] == "band"
    assert all(i.startswith("uc_simple[") for i, v in zip(ids, _verdicts(rep)) if v["check"] == "uc_simple")

    def bundled_of(r):
        return sorted((v["id"], v["status"]) for v in _verdicts(r) if v["check"] != "uc_simple")

    assert bundled_of(rep) == bundled_of(ok_rep)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("entry", "needle"),
    [("band = uc_demo:Band", "two checks are named 'band'"), ("uc_missing = no_such_module:X", "failed to load")],
)
def test_registry_errors_are_usage_errors(run, pytester, entry, needle):
    """B32: a broken registry was an INTERNALERROR under pytest and a '--threshold' error in the CLI."""
    import subprocess
    import sys

    (pytester.path / "site" / "uc_demo-0.1.dist-info" / "entry_points.txt").write_text(
        f"[leaderboard_audit.checks]\n{entry}\n"
    )
    res, rep = run("ok")
    text = res.stdout.str() + res.stderr.str()
    assert res.ret == pytest.ExitCode.USAGE_ERROR and "INTERNALERROR" not in text, text
    assert "registered checks: " in text and needle in text, text
    code = "import sys; from leaderboard_audit.cli.audit import main; sys.exit(main(sys.argv[1:]))"
    cli = subprocess.run([sys.executable, "-c", code, str(TINY)], capture_output=True, text=True, timeout=120)
    assert cli.returncode == 2 and "registered checks: " in cli.stderr and "--threshold" not in cli.stderr, cli.stderr
