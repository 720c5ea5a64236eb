"""A records file is bounded before it is read (issue 46, C14): its size from fstat, and the
reading stops at its first over-long line. d0b4150 read a 10 GB sparse file to its end (87 s)
before it named the line."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from leaderboard_audit.records import RecordsError, load_records
from leaderboard_audit.records.lines import MAX_FILE_BYTES, MAX_LINE_BYTES
from helpers.paths import REPO

TINY = REPO / "fixtures" / "tiny"


def _tiny(tmp_path: Path) -> Path:
    d = tmp_path / "recs"
    shutil.copytree(TINY, d)
    (d / "README.md").unlink(missing_ok=True)
    return d


def _newbie(d: Path) -> Path:
    f = d / "tiny" / "newbie.jsonl"
    f.write_text((d / "tiny" / "beta.jsonl").read_text().replace('"model":"beta"', '"model":"newbie"'))
    return f


def _sparse(f: Path, size: int) -> None:
    try:
        os.truncate(f, size)
    except OSError as exc:  # a file system without sparse files
        pytest.skip(f"cannot make a sparse file here ({exc})")


@pytest.mark.parametrize("cache", ["off", "on"])
def test_a_sparse_file_over_the_bound_is_refused_without_reading_it(pytester, tmp_path, monkeypatch, cache):
    d = _tiny(tmp_path)
    f = _newbie(d)
    _sparse(f, MAX_FILE_BYTES + 2**20)
    if cache == "off":
        monkeypatch.setenv("LEADERBOARD_AUDIT_CACHE", "off")
    else:
        monkeypatch.setenv("LEADERBOARD_AUDIT_CACHE", str(tmp_path / "cache"))
    t0 = time.perf_counter()
    r = pytester.runpytest(f"--audit={d}", "-p", "no:cacheprovider", "-q")
    took = time.perf_counter() - t0
    assert r.ret == 4
    assert f"{f}: {MAX_FILE_BYTES + 2**20:,} bytes: larger than the {MAX_FILE_BYTES:,}" in r.stderr.str()
    assert took < 20, took  # d0b4150: ~40 s for these 4 GiB (the lines) plus the hash


def test_reading_stops_at_the_first_over_long_line(tmp_path):
    """One problem names the file; the lines after it are not read (d0b4150 read on and also
    reported line 4's bad JSON)."""
    d = _tiny(tmp_path)
    f = _newbie(d)
    lines = f.read_text().splitlines()
    lines[1] = json.dumps({"pad": "x" * (MAX_LINE_BYTES + 10)})
    lines[3] = "{not json"
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(RecordsError) as err:
        load_records(d)
    msg = str(err.value)
    assert f"{f}:2: line longer than {MAX_LINE_BYTES} bytes (the file is not read further)" in msg
    assert f"{f}:4" not in msg
