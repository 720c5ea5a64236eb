"""The demo and the docs shipped beside the code (leaderboard_audit/cli/bundled.py), in a
source tree; tests/test_bundled_wheel.py runs the same from an installed wheel."""

from __future__ import annotations

import re

import pytest

from helpers.paths import DEMO, REPO
from leaderboard_audit.cli import bundled
from leaderboard_audit.cli import main as cli_main


def test_every_docs_path_the_package_names_can_be_printed():
    """Each ``docs/NAME.md`` in the package's sources (help, errors, what to do next) is
    one ``leaderboard-audit docs NAME`` can print, so it can be read from a wheel too."""
    named = set()
    for path in (REPO / "leaderboard_audit").rglob("*.py"):
        named |= set(re.findall(r"docs/([A-Za-z0-9_/-]+)\.md", path.read_text())) - {"NAME"}
    assert {"records", "audits", "collect", "importers", "spec/AUDITS"} <= named
    for name in sorted(named):
        assert bundled.doc_path(name).is_file(), name


def test_docs_command_lists_and_prints(capsys):
    assert cli_main(["docs"]) == 0
    listing = capsys.readouterr().out
    assert re.search(r"^records\s+Records", listing, re.M) and "spec/AUDITS" in listing
    assert cli_main(["docs", "docs/ci-gate.md"]) == 0
    assert capsys.readouterr().out == (REPO / "docs" / "ci-gate.md").read_text()
    assert cli_main(["docs", "spec/audits", "--path"]) == 0
    assert capsys.readouterr().out.strip() == str(REPO / "docs" / "spec" / "AUDITS.md")


def test_an_unknown_doc_names_the_known_ones(capsys):
    assert cli_main(["docs", "recrods"]) == 2
    err = capsys.readouterr().err
    assert "no doc named 'recrods'" in err and "records" in err


def test_demo_copy_writes_the_records_and_refuses_a_full_folder(tmp_path, capsys):
    dest = tmp_path / "demo"
    assert cli_main(["demo", "--copy", str(dest)]) == 0
    assert f"pytest --audit={dest}" in capsys.readouterr().out  # the = form: a folder cannot pass for a test path (B01)
    ours = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    assert ours == sorted(p.relative_to(DEMO).as_posix() for p in DEMO.rglob("*") if p.is_file())
    assert cli_main(["demo", "--copy", str(dest)]) == 2
    assert "not an empty folder" in capsys.readouterr().err
    assert not list(tmp_path.glob(".*tmp-demo"))


@pytest.mark.slow
def test_demo_is_the_audit_of_the_bundled_records(capsys):
    assert bundled.demo_dir() == DEMO
    assert cli_main(["demo", "--alpha", "0.05"]) == 1  # the demo fails on purpose
    out = capsys.readouterr().out
    assert out.startswith(f"records {DEMO}: 6 models") and "what to do next:" in out


def test_version(capsys):
    assert cli_main(["--version"]) == 0
    assert re.fullmatch(r"leaderboard-audit \d+\.\d+\.\d+\S*\n", capsys.readouterr().out)


def test_a_missing_bundle_says_how_to_fix_it(monkeypatch, tmp_path):
    monkeypatch.setattr(bundled, "PACKAGE", tmp_path / "leaderboard_audit")
    with pytest.raises(bundled.BundledError, match="the demo records: not found .* fix: reinstall"):
        bundled.demo_dir()
