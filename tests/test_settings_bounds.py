"""Thresholds that size arrays are bounded; a malformed pyproject is a usage error (issue 25: B11, B35)."""

from __future__ import annotations


import pytest

from leaderboard_audit.settings import SettingsError, pyproject_table
from leaderboard_audit.checks import Thresholds
from leaderboard_audit.checks.verdicts import COUNT_MAXIMA
from helpers.paths import REPO


@pytest.mark.parametrize("value", [1_000_000_000, "1e300", 100_001])
def test_flip_boot_has_an_upper_bound(value):
    with pytest.raises(ValueError, match="between 1 and 100,000"):
        Thresholds({"flip_boot": value})


def test_flip_boot_at_the_bound_is_accepted():
    assert Thresholds({"flip_boot": COUNT_MAXIMA["flip_boot"]}).flip_boot == 100_000


def test_flip_boot_from_the_command_line_is_a_usage_error(pytester_or_subprocess):
    out = pytester_or_subprocess(f"--audit={REPO / 'fixtures' / 'tiny'}", "--audit-threshold", "flip_boot=1000000000")
    assert out.returncode == 4 and "flip_boot" in out.stderr + out.stdout


def test_tool_that_is_not_a_table_is_a_settings_error(tmp_path):
    p = tmp_path / "pyproject.toml"
    p.write_text("tool = 5\n")
    with pytest.raises(SettingsError, match="'tool' must be a table"):
        pyproject_table(p)


@pytest.fixture
def pytester_or_subprocess(tmp_path, monkeypatch):
    import subprocess
    import sys

    monkeypatch.setenv("LEADERBOARD_AUDIT_CACHE", "off")

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=120,
        )

    return run
