"""`pytest --audit-collect SPEC.toml`: records are produced first (once, under a file
lock with xdist), then audited. The collector's test engine stands in for vLLM here;
.ci/collect_check.sh runs the same path with real vLLM."""

from __future__ import annotations

import json

import pytest

from helpers.collect import _spec


def test_audit_collect_produces_then_audits(pytester, tmp_path):
    spec = _spec(tmp_path)
    report = tmp_path / "r.json"
    r = pytester.runpytest("--audit-collect", str(spec), "--audit-report", str(report), "-p", "no:cacheprovider", "-q")
    assert r.ret in (0, 1), r.stdout.str()
    records = tmp_path / "records"
    assert (records / "grid.json").is_file()
    assert sorted(p.name for p in (records / "arc").glob("*.jsonl")) == ["m__one.jsonl", "two.jsonl"]
    rep = json.loads(report.read_text())
    assert rep["records"]["models"] == ["m/one", "two"] and rep["records"]["items"] == 24
    assert sorted(rep["scopes"]) == ["arc", "mmlu", "pooled"]


# Every engine the collector builds, in any process of the run, leaves a line "<pid> <model>".
ENGINE_LOG_CONFTEST = """
import os
from leaderboard_audit.collect.engines import fake

_init = fake.FakeEngine.__init__


def _logged_init(self, model_path, **kw):
    with open(os.environ["ENGINE_LOG"], "a") as fh:
        fh.write(f"{os.getpid()} {model_path}\\n")
    _init(self, model_path, **kw)


fake.FakeEngine.__init__ = _logged_init
"""


@pytest.mark.slow
def test_audit_collect_under_xdist_collects_once(pytester, tmp_path, monkeypatch):
    spec = _spec(tmp_path)
    log = tmp_path / "engines.log"
    monkeypatch.setenv("ENGINE_LOG", str(log))
    pytester.makeconftest(ENGINE_LOG_CONFTEST)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    r2 = pytester.runpytest_subprocess(
        "--audit-collect", str(spec), "--audit-report", str(a), "-p", "no:cacheprovider", "-q", "-n", "2"
    )
    assert r2.ret in (0, 1), r2.stdout.str()
    # once: one engine per model, all built by a single process (the others waited on the lock)
    built = [line.split() for line in log.read_text().splitlines()]
    assert sorted(m for _, m in built) == ["fake-m/one", "fake-two"], built
    assert len({pid for pid, _ in built}) == 1, built
    stamp = {p: p.stat().st_mtime_ns for p in (tmp_path / "records").rglob("*.jsonl")}
    r0 = pytester.runpytest_subprocess(
        "--audit-collect", str(spec), "--audit-report", str(b), "-p", "no:cacheprovider", "-q"
    )
    assert r0.ret == r2.ret
    assert a.read_bytes() == b.read_bytes()
    # the second run found complete files: no engine built, nothing rewritten
    assert len(log.read_text().splitlines()) == 2
    assert stamp == {p: p.stat().st_mtime_ns for p in (tmp_path / "records").rglob("*.jsonl")}
