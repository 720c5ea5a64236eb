"""The guard looks where pytest looks: beside a file source and above the records (issue 25: B05, B37)."""

from __future__ import annotations

import shutil

import pytest

from leaderboard_audit.records import load_records
from leaderboard_audit.records.packed import write_packed
from helpers.paths import REPO

TINY = REPO / "fixtures" / "tiny"
Q = ("-p", "no:cacheprovider", "-q")
LOOSE = "[pytest]\naudit_band_pass = 1\naudit_band_warn = 1\n"


def usage_error(result, *needles: str) -> str:
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, text
    assert "INTERNALERROR" not in text and "Traceback" not in text, text
    for n in needles:
        assert n in text, (n, text)
    return text


@pytest.mark.parametrize("kind", ["packed", "csv"])
def test_an_ini_beside_a_file_source_is_refused(pytester, kind, monkeypatch):
    monkeypatch.setenv("LEADERBOARD_AUDIT_CACHE", "off")
    sub = pytester.path / "sub"
    sub.mkdir()
    if kind == "packed":
        src = write_packed(load_records(TINY), sub / "records.arrow")
    else:
        from leaderboard_audit.records.table import write_table

        src = write_table(load_records(TINY), sub / "records.csv")
    (sub / "pytest.ini").write_text(LOOSE)
    result = pytester.runpytest_subprocess("--audit", "sub/" + src.name, *Q)
    usage_error(result, "refusing a records path", "pytest.ini")


def test_code_beside_a_file_source_is_refused(pytester, monkeypatch):
    sub = pytester.path / "sub"
    sub.mkdir()
    write_packed(load_records(TINY), sub / "records.arrow")
    (sub / "evil_records_plugin.py").write_text("print('code beside the records')\n")
    result = pytester.runpytest_subprocess("--audit=sub/records.arrow", *Q)
    usage_error(result, "refusing a records path", "evil_records_plugin.py")


@pytest.mark.slow
def test_a_file_source_in_the_project_folder_is_audited(pytester, monkeypatch):
    monkeypatch.setenv("LEADERBOARD_AUDIT_CACHE", "off")
    write_packed(load_records(TINY), pytester.path / "records.arrow")
    (pytester.path / "pyproject.toml").write_text("[project]\nname = 'mine'\n")
    result = pytester.runpytest_subprocess("--audit", "records.arrow", *Q)
    # audited (tiny's 8 items show no harness effect beyond sampling: no fail under AUDITS v4)
    assert result.ret == pytest.ExitCode.OK and "leaderboard audit" in result.stdout.str(), result.stdout.str()


@pytest.mark.parametrize("spelling", ["space", "equals"])
def test_an_ini_one_folder_above_the_records_is_refused(pytester, spelling, monkeypatch):
    monkeypatch.setenv("LEADERBOARD_AUDIT_CACHE", "off")
    shutil.copytree(TINY, pytester.path / "sub1" / "records", ignore=shutil.ignore_patterns("README.md"))
    (pytester.path / "sub1" / "pytest.ini").write_text(LOOSE)
    gate = pytester.path / "gate"
    gate.mkdir()
    monkeypatch.chdir(gate)
    args = ["--audit", "../sub1/records"] if spelling == "space" else ["--audit=../sub1/records"]
    result = pytester.runpytest_subprocess(*args, *Q)
    if spelling == "space":  # pytest took sub1/pytest.ini as its config: refused
        usage_error(result, "refusing a records path", "found through the records path")
    else:  # pytest never saw the ini: the audit runs with the defaults
        assert result.ret == pytest.ExitCode.OK and "leaderboard audit" in result.stdout.str()


def test_escape_sequences_in_refused_file_names_are_escaped(pytester):
    d = pytester.path / "g07"
    shutil.copytree(TINY, d)
    (d / "x\x1b[2J\x1b[32mall good\x1b[0m.py").write_text("")
    result = pytester.runpytest_subprocess("--audit=g07", *Q)
    text = usage_error(result, "refusing a records path")
    assert "\x1b" not in text and "\\x1b[2J" in text
