"""`leaderboard-audit audit`: the audit without pytest, same report as the library."""

from __future__ import annotations

import subprocess
import sys

from leaderboard_audit.cli.main import main
from leaderboard_audit.records import load_records
from leaderboard_audit.engine import audit, dumps_report
from helpers.paths import REPO

TINY = REPO / "fixtures" / "tiny"


def test_audit_command_writes_the_library_report(tmp_path, capsys):
    out = tmp_path / "r.json"
    rc = main(["audit", str(TINY), "--json", str(out)])
    assert rc == 1  # tiny fails band, manufactured and axes checks
    text = capsys.readouterr().out
    assert "audit: " in text and "alpha" in text
    assert out.read_text() == dumps_report(audit(load_records(TINY), path=str(TINY)))


def test_audit_command_exit_codes(tmp_path, capsys):
    assert main(["audit", str(tmp_path / "missing")]) == 4
    assert main(["audit", str(TINY), "--threshold", "bogus=1"]) == 2
    assert (
        main(
            [
                "audit",
                str(TINY),
                "--threshold",
                "band_warn=1",
                "--threshold",
                "band_pass=1",
                "--threshold",
                "axes_pass=-1",
                "--threshold",
                "axes_warn=-1",
                "--threshold",
                "brittleness_pass=1",
                "--threshold",
                "champion_items=99",
            ]
        )
        == 1
    )


def test_console_script_help():
    out = subprocess.run([sys.executable, "-m", "leaderboard_audit.cli", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "collect" in out.stdout and "import" in out.stdout
