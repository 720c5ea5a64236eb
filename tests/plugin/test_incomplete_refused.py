"""Audits refuse incomplete records (issue 44, item 2, until verdicts on incomplete grids exist):
one clear usage error naming the missing cells per reason, benchmark and model; a missing cell
is never counted as a wrong answer."""

from __future__ import annotations

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


def incomplete(tmp_path: Path) -> Path:
    rec = stable_records()
    miss = np.zeros(rec.shape, np.int8)
    miss[0, :5, 3] = NOT_COLLECTED
    miss[1, 7, :2] = NOT_POSSIBLE
    miss[2, 9, 4] = FAILED
    return write(replace(rec, correct=rec.correct & (miss == 0), missing=miss), tmp_path / "records")


NEEDLES = (
    "incomplete records: 8 of 4,680 cells are missing (5 not_collected, 2 not_possible, 1 failed)",
    "per benchmark: bench=8",
    "per model: alpha=5, beta=2, gamma=1",
    "never counted as wrong",
)


@pytest.mark.parametrize("extra", [(), ("-n", "2")])
def test_pytest_audit_of_incomplete_records_is_one_usage_error(pytester, tmp_path, extra):
    path = incomplete(tmp_path)
    for cache in ("off", str(tmp_path / "cache")):
        result = pytester.runpytest_subprocess("--audit", str(path), "--audit-cache", cache, *Q, *extra)
        text = result.stdout.str() + result.stderr.str()
        assert result.ret == pytest.ExitCode.USAGE_ERROR, text
        assert "INTERNALERROR" not in text and "Traceback" not in text, text
        for n in NEEDLES:
            assert n in text, (n, text)


def test_packed_incomplete_records_are_refused_by_the_deferred_controller(pytester, tmp_path):
    from leaderboard_audit.records.packed import write_packed

    packed = write_packed(load_records(incomplete(tmp_path)), tmp_path / "records.arrow")
    result = pytester.runpytest_subprocess("--audit", str(packed), *Q, "-n", "2")
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, text
    assert "Traceback" not in text and "passed" not in result.stdout.str(), text
    for n in NEEDLES:
        assert n in text, (n, text)


def test_cli_audit_and_library_refuse_incomplete_records(tmp_path, capsys):
    path = incomplete(tmp_path)
    assert main(["audit", str(path)]) == 4
    err = capsys.readouterr().err
    for n in NEEDLES:
        assert n in err, (n, err)
    rec = load_records(path)
    with pytest.raises(IncompleteRecordsError, match="8 of 4,680 cells are missing"):
        audit(rec, n_boot=10)
    # the same grid complete audits as ever
    full = replace(rec, correct=stable_records().correct, missing=None)
    assert audit(full, n_boot=10)["scopes"]
