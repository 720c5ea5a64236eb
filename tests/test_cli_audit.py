"""`leaderboard-audit audit`: the audit without pytest, same report as the library."""

from __future__ import annotations

import subprocess
import sys

import pytest

from leaderboard_audit.cli.main import main
from leaderboard_audit.records import load_records
from leaderboard_audit.engine import audit, dumps_report
from helpers.paths import REPO

TINY = REPO / "fixtures" / "tiny"
DEMO = REPO / "fixtures" / "demo"


@pytest.mark.slow
def test_audit_command_writes_the_library_report(tmp_path, capsys):
    out = tmp_path / "r.json"
    rc = main(["audit", str(DEMO), "--json", str(out)])
    assert rc == 1  # demo fails band, champions and manufactured (planted; AUDITS v4 finds them)
    text = capsys.readouterr().out
    assert "audit: " in text and "simultaneous 95% rank interval" in " ".join(text.split())
    assert out.read_text() == dumps_report(audit(load_records(DEMO), path=str(DEMO)))
    # tiny's 8 items cannot show any harness effect beyond sampling: nothing fails (v4)
    assert main(["audit", str(TINY)]) == 0


def test_audit_command_exit_codes(tmp_path, capsys):
    assert main(["audit", str(tmp_path / "missing")]) == 4
    assert main(["audit", str(TINY), "--threshold", "bogus=1"]) == 2
    assert (
        main(
            [
                "audit",
                str(DEMO),
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


def test_audit_takes_an_importers_mapping_and_metric(tmp_path, capsys):
    """`audit` has the importers' options the pytest front end has (--audit-mapping/-metric);
    it refused `--mapping` (UX review 2026-12-04 #11)."""
    import json

    from helpers.lmeval import SMOL, SMOL_LL

    mapping = tmp_path / "map.json"
    mapping.write_text(json.dumps(SMOL_LL))
    rc = main(["audit", str(SMOL), "--format", "lm-eval", "--mapping", str(mapping), "--metric", "acc_norm"])
    out, err = capsys.readouterr()
    assert rc in (0, 1), err
    assert "1 model, 40 items, 2 configs" in " ".join(out.split())


def test_a_records_path_error_names_every_accepted_input_and_no_pytest_flag(tmp_path, capsys):
    """The fix line listed only directories and tables, and named pytest's --audit in the CLI
    (UX review 2026-12-04 #11, #27)."""
    assert main(["audit", str(tmp_path / "big.packed")]) == 4
    err = " ".join(capsys.readouterr().err.split())
    assert "no such file or directory" in err and "--audit" not in err
    assert "a packed file (`leaderboard-audit pack SRC -o OUT`)" in err and "lm-eval" in err


def test_the_closing_hint_names_only_the_outputs_not_asked_for(tmp_path, capsys):
    """It printed `everything: --json/--html/--markdown` when all three were given (UX review
    2026-12-04 #19)."""
    assert main(["audit", str(TINY), "--json", str(tmp_path / "a.json")]) == 0  # tiny: nothing fails (v4)
    out = capsys.readouterr().out
    assert "everything: --html/--markdown; a publishable board: --leaderboard PATH" in out
    outputs = ["--json", "a.json", "--html", "a.html", "--markdown", "a.md", "--leaderboard", "lb.md"]
    args = [str(tmp_path / x) if x.startswith(("a.", "lb.")) else x for x in outputs]
    assert main(["audit", str(TINY), *args]) == 0
    out = capsys.readouterr().out
    assert "everything:" not in out and "every report was asked for" in out


def test_audit_summary_full_prints_every_table(capsys):
    """pytest has --audit-summary full; the CLI had none (UX review 2026-12-04 #19)."""
    assert main(["audit", str(TINY)]) == 0  # tiny: nothing fails under AUDITS v4
    short = capsys.readouterr().out
    assert main(["audit", str(TINY), "--summary", "full"]) == 0
    full = capsys.readouterr().out
    assert len(full.splitlines()) > 2 * len(short.splitlines())
    assert "verdicts needing attention" in full


@pytest.mark.slow
def test_audit_submission_is_the_gate(tmp_path, capsys):
    """pytest has --audit-submission; the CLI had no gate (UX review 2026-12-04 #19)."""
    demo = REPO / "fixtures" / "demo"
    gate_md = tmp_path / "gate.md"
    rc = main(["audit", str(demo), "--boot", "200", "--submission", "borealis-8b", "--markdown", str(gate_md)])
    out = capsys.readouterr().out
    assert rc == 1 and "submission borealis-8b: FAIL" in out and out.rstrip().endswith("bytes)")
    assert gate_md.read_text().startswith("## Submission gate")
    assert main(["audit", str(demo), "--submission", "nobody"]) == 2
    err = capsys.readouterr().err
    assert "--submission 'nobody': not in the records" in err and "--audit-" not in err
