"""CLI bad input: one clear line, the right exit status, no traceback (issue 11 items 8, 14, 20, 21)."""

from __future__ import annotations

import json
import shutil

import pytest

from leaderboard_audit.cli.main import main
from leaderboard_audit.records import load_records
from helpers.builders import disk_full_on
from helpers.paths import REPO

TINY = REPO / "fixtures" / "tiny"
HELM = REPO / "tests" / "data" / "helm" / "benchmark_output" / "runs" / "v1"


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    rc = main(argv)
    out = capsys.readouterr()
    assert "Traceback" not in out.err and "Traceback" not in out.out
    return rc, out.out, out.err


# ------------------------------------------------------------------ audit (items 14 and 8)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--boot", "0"], "--boot boot='0' must be between 100 and 1,000,000"),
        (["--boot", "-5"], "--boot boot='-5' must be between"),
        (["--boot", "10000000000"], "must be between"),
        (["--boot", "many"], "'many' is not a whole number"),
        (["--seed", "-1"], "--seed seed='-1' must be between 0 and"),
        (["--threshold", "band_pass"], "'band_pass': expected NAME=VALUE"),
        (["--threshold", "band_pass=abc"], "band_pass='abc' is not a number"),
        (["--threshold", "band_pass=nan"], "band_pass='nan' must be finite"),
        (["--threshold", "compression_k=2.7"], "compression_k='2.7' must be a positive whole number"),
        (["--threshold", "compression_k=-5"], "compression_k='-5' must be a positive whole number"),
        (["--alpha", "2"], "--alpha alpha='2' must be between 0 and 1"),
    ],
)
def test_audit_option_values_are_usage_errors(capsys, argv, message):
    rc, _, err = run(["audit", str(TINY), *argv], capsys)
    assert rc == 2
    assert message in err


def test_audit_report_to_an_unwritable_path_is_refused_before_the_audit(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    good = tmp_path / "r.md"
    rc, out, err = run(["audit", str(TINY), "--json", str(blocker / "r.json"), "--markdown", str(good)], capsys)
    assert rc == 2 and "audit: " not in out  # refused in a second, before the audit runs (issue 22)
    assert f"--json {blocker / 'r.json'}: the folder {blocker} does not exist" in err
    assert not good.exists()


def test_a_write_that_fails_after_the_audit_still_prints_results(tmp_path, capsys, monkeypatch):
    disk_full_on(monkeypatch, ".json")
    good = tmp_path / "r.md"
    rc, out, err = run(["audit", str(TINY), "--json", str(tmp_path / "r.json"), "--markdown", str(good)], capsys)
    assert rc == 4
    assert "audit: " in out and "alpha" in out  # the summary is printed
    assert f"--json {tmp_path / 'r.json'}: cannot write" in err
    assert good.is_file()  # the writable one is written


# ------------------------------------------------------------------ import (items 20 and 21)


def test_import_benchmark_escaping_the_output_is_refused(tmp_path, capsys):
    rc, _, err = run(["import", "helm", str(HELM), "-o", str(tmp_path / "out"), "--benchmark", "../../escape"], capsys)
    assert rc == 4
    assert "--benchmark '../../escape'" in err and "cannot be a directory name" in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists() and not (tmp_path.parent / "escape").exists()


def test_import_to_an_unwritable_output_is_one_line(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    rc, _, err = run(["import", "helm", str(HELM), "-o", str(blocker / "out")], capsys)
    assert rc == 4 and "cannot write" in err and len(err.strip().splitlines()) == 1
    rc, _, err = run(["import", "helm", str(HELM), "-o", str(blocker)], capsys)
    assert rc == 4 and "exists and is not a folder" in err


def test_reimport_replaces_the_earlier_import_as_a_whole(tmp_path, capsys):
    """A model present in the first import and absent from the second must not survive."""
    src = tmp_path / "suite"
    shutil.copytree(HELM, src)
    out = tmp_path / "records"
    assert run(["import", "helm", str(src), "-o", str(out)], capsys)[0] == 0
    assert load_records(out).models == ("eleutherai/pythia-1b-v0", "openai/gpt2")
    for d in src.iterdir():  # drop pythia's runs
        if "pythia" in d.name:
            shutil.rmtree(d)
    assert run(["import", "helm", str(src), "-o", str(out)], capsys)[0] == 0
    assert load_records(out).models == ("openai/gpt2",)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp folders left


def test_import_refuses_to_replace_a_foreign_folder(tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("do not delete")
    rc, _, err = run(["import", "helm", str(HELM), "-o", str(out)], capsys)
    assert rc == 4 and "refusing to replace it" in err
    assert (out / "thesis.tex").read_text() == "do not delete"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run(["import", "helm", str(HELM), "-o", str(empty)], capsys)[0] == 0
    grid = json.loads((empty / "grid.json").read_text())
    assert grid["imported_from"] == "helm"


def test_failed_import_leaves_the_earlier_one_intact(tmp_path, capsys):
    out = tmp_path / "records"
    assert run(["import", "helm", str(HELM), "-o", str(out)], capsys)[0] == 0
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    rc, _, err = run(["import", "helm", str(HELM), "-o", str(out), "--metric", "no_such_stat"], capsys)
    assert rc == 4 and "no_such_stat" in err
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
