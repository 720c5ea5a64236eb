"""Audits of incomplete records (issue 44, item 2; docs/audits.md, "Incomplete grids"): pytest,
the CLI and the library audit them, an undecided verdict is a warn that ``--audit-strict``
(``--strict``) fails, and only records missing reference cells are refused, with one clear
usage error; a missing cell is never counted as a wrong answer."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from helpers.builders import stable_records, write
from leaderboard_audit.engine import audit
from leaderboard_audit.cli import main
from leaderboard_audit.records import load_records
from leaderboard_audit.records.missing import FAILED, NOT_COLLECTED, NOT_POSSIBLE, IncompleteRecordsError

Q = ("-p", "no:cacheprovider", "-q")


def incomplete(tmp_path: Path, *, reference: bool = False) -> Path:
    """stable_records with 8 cells missing (none under the reference unless ``reference``)."""
    rec = stable_records()
    miss = np.zeros(rec.shape, np.int8)
    miss[0, :5, 3] = NOT_COLLECTED
    miss[1, 7, 1:3] = NOT_POSSIBLE
    miss[2, 9, 4] = FAILED
    if reference:
        miss[1, 7, rec.grid.reference_index] = NOT_COLLECTED
    return write(replace(rec, correct=rec.correct & (miss == 0), missing=miss), tmp_path / "records")


REFUSED = (
    "incomplete records: 9 of 4,680 cells are missing, 1 of them under the reference configuration",
    "per model: beta=1",
    "never counted as wrong",
)


@pytest.mark.slow
@pytest.mark.parametrize("extra", [(), ("-n", "2")])
def test_pytest_audits_incomplete_records_and_strict_fails_the_undecided(pytester, tmp_path, extra):
    path = incomplete(tmp_path)
    report = tmp_path / "report.json"
    result = pytester.runpytest_subprocess("--audit", str(path), "--audit-report", str(report), *Q, *extra)
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.OK, text
    assert "Traceback" not in text, text
    verdicts = [v for s in json.loads(report.read_text())["scopes"].values() for v in s["verdicts"]]
    undecided = [v for v in verdicts if v.get("decided") is False]
    assert undecided and all(v["status"] == "warn" for v in undecided)
    assert all("decided" in v for v in verdicts if v["status"] != "skip")
    strict = pytester.runpytest_subprocess("--audit", str(path), "--audit-strict", *Q, *extra)
    assert strict.ret == pytest.ExitCode.TESTS_FAILED, strict.stdout.str()
    assert "undecided on an incomplete grid" in strict.stdout.str()


@pytest.mark.slow
def test_pytest_refuses_records_missing_reference_cells(pytester, tmp_path):
    path = incomplete(tmp_path, reference=True)
    for cache in ("off", str(tmp_path / "cache")):
        result = pytester.runpytest_subprocess("--audit", str(path), "--audit-cache", cache, *Q)
        text = result.stdout.str() + result.stderr.str()
        assert result.ret == pytest.ExitCode.USAGE_ERROR, text
        assert "INTERNALERROR" not in text and "Traceback" not in text, text
        for n in REFUSED:
            assert n in text, (n, text)


def test_packed_records_missing_reference_cells_are_refused_by_the_deferred_controller(pytester, tmp_path):
    from leaderboard_audit.records.packed import write_packed

    packed = write_packed(load_records(incomplete(tmp_path, reference=True)), tmp_path / "records.arrow")
    result = pytester.runpytest_subprocess("--audit", str(packed), *Q, "-n", "2")
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, text
    assert "Traceback" not in text and "passed" not in result.stdout.str(), text
    for n in REFUSED:
        assert n in text, (n, text)


def test_cli_audit_and_library_on_incomplete_records(tmp_path, capsys):
    path = incomplete(tmp_path)
    assert main(["audit", str(path)]) == 0
    out = capsys.readouterr().out
    assert "incomplete grid: 8 of 4,680 cells missing;" in " ".join(out.split()), out
    assert main(["audit", str(path), "--strict"]) == 1
    capsys.readouterr()
    refused = incomplete(tmp_path / "ref", reference=True)
    assert main(["audit", str(refused)]) == 4
    err = capsys.readouterr().err
    for n in REFUSED:
        assert n in err, (n, err)
    with pytest.raises(IncompleteRecordsError, match="9 of 4,680 cells are missing"):
        audit(load_records(refused), n_boot=10)
    rep = audit(load_records(path), n_boot=10)
    assert rep["scopes"]["bench"]["incomplete"]["missing"] == 8
    # the same grid complete audits as ever
    full = replace(load_records(path), correct=stable_records().correct, missing=None)
    assert all("decided" not in v for s in audit(full, n_boot=10)["scopes"].values() for v in s["verdicts"])
    assert main(["audit", str(write(full, tmp_path / "full"))]) == 0
    assert "incomplete grid" not in capsys.readouterr().out


def test_undecided_count_reads_each_twin_verdict_once(tmp_path):
    """One benchmark: the pooled scope is the benchmark's twin, and its repeated verdicts are
    counted once in the incomplete-grid line, as the report's verdict counts are."""
    from leaderboard_audit.reports.next_steps import incomplete_line
    from leaderboard_audit.reports.twins import reported_verdicts

    report = audit(load_records(incomplete(tmp_path)))
    decided = [v for v in reported_verdicts(report) if "decided" in v]
    every = [v for s in report["scopes"].values() for v in s.get("verdicts", []) if "decided" in v]
    assert len(every) > len(decided) > 0  # the twin scope repeats them
    undecided = sum(1 for v in decided if not v["decided"])
    assert f"{undecided} of {len(decided)} verdicts undecided" in incomplete_line(report)
