"""Issue 21: `leaderboard-audit audit` and `pytest --audit` resolve settings with the same
code (command line > ini > pyproject ``[tool.leaderboard_audit]`` > defaults) and give the
same verdicts on the same records."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from leaderboard_audit.cli.main import main
from helpers.paths import REPO

REAL = REPO / "fixtures" / "real"

TABLE = """[tool.leaderboard_audit]
boot = 200
seed = 7
alpha = 0.1
band_pass = 0.5
band_warn = 0.6
"""


def _verdicts(path: Path) -> dict[str, tuple]:
    rep = json.loads(path.read_text())
    return {v["id"]: (v["status"], v["value"], v["margin"]) for s in rep["scopes"].values() for v in s["verdicts"]}


@pytest.mark.slow
def test_cli_and_plugin_give_identical_verdicts_under_a_pyproject_table(pytester, tmp_path, monkeypatch):
    recs = tmp_path / "real"  # outside any project: only the table below applies
    shutil.copytree(REAL, recs, ignore=shutil.ignore_patterns("_raw"))
    pytester.makefile(".toml", pyproject=TABLE)
    cli_json, plugin_json = tmp_path / "cli.json", tmp_path / "plugin.json"

    monkeypatch.chdir(pytester.path)
    rc_cli = main(["audit", str(recs), "--json", str(cli_json)])
    result = pytester.runpytest(
        "--audit", str(recs), "-p", "no:cacheprovider", "-q", "--audit-report", str(plugin_json)
    )

    cli, plugin = _verdicts(cli_json), _verdicts(plugin_json)
    assert cli == plugin
    band = [v for k, v in cli.items() if k.startswith("band[")]
    assert band and all(abs(v + m - 0.5) < 1e-9 for _, v, m in band)  # margins to band_pass = 0.5 (the table)
    for name in ("cli", "plugin"):
        rep = json.loads((tmp_path / f"{name}.json").read_text())
        assert rep["seed"] == 7 and rep["bootstrap"] == 200, name
        assert rep["thresholds"]["band_pass"] == 0.5, name
    assert rc_cli == (1 if result.ret == 1 else 0)


def test_session_settings_are_frozen_once_resolved(pytester):
    """The run's settings cannot change after they are resolved: what it learns later (the
    records' fingerprint) is its own fact, sent to xdist workers beside the settings."""
    import shutil

    records = shutil.copytree(REPO / "fixtures" / "tiny", pytester.path / "rec")
    pytester.makepyfile(
        test_frozen="""
        import dataclasses
        import pytest
        def test_frozen(request, audit_records):
            session = request.config.pluginmanager.get_plugin("leaderboard-audit-session")
            with pytest.raises(dataclasses.FrozenInstanceError):
                session.settings.seed = 1
            with pytest.raises(TypeError):
                session.settings.thresholds["band_pass"] = 1.0
            assert len(session.fingerprint()) == 64 and session.settings.sha256 is None
        """
    )
    r = pytester.runpytest("-p", "no:cacheprovider", "-rA", "--audit", str(records), "test_frozen.py")
    assert "PASSED test_frozen.py::test_frozen" in r.stdout.str(), r.stdout.str()[-3000:]
