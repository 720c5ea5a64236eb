"""A missing cell is 0 in 'correct', in every form and in memory (reliability review D04).

A packed file (or a load-cache entry) with a valid checksum could mark a cell missing and
right at once: the audit then read the bit at the missing cell and 5,756 report values
changed. ``Records`` refuses such a set on construction, so every reader refuses it.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from helpers.records import load_quiet, make_records

from leaderboard_audit.records import Records, RecordsError
from leaderboard_audit.records import missing as missing_mod
from leaderboard_audit.records.cache_entry import entry_bytes, read_entry
from leaderboard_audit.records.missing import FAILED, NOT_COLLECTED, correct_at_missing
from leaderboard_audit.records.packed import write_packed


def incomplete(seed: int = 0) -> Records:
    """An honest incomplete set: a third of the cells missing, 'correct' 0 there."""
    rec = make_records(seed=seed)
    rng = np.random.default_rng(seed)
    miss = np.where(rng.random(rec.shape) < 0.33, NOT_COLLECTED, 0).astype(np.int8)
    miss[:, :, rec.grid.reference_index] = 0
    return replace(rec, correct=rec.correct & (miss == 0), missing=miss)


def liar(rec: Records, cells: int) -> Records:
    """``rec`` with 'correct' set to 1 at its first ``cells`` missing cells, built past the
    constructor's check (the arrays are changed after it ran), as a hand-made file would be."""
    bad = replace(rec, correct=rec.correct.copy())
    m, i, k = np.nonzero(rec.missing)
    bad.correct[m[:cells], i[:cells], k[:cells]] = True
    return bad


def test_records_construction_refuses_correct_at_a_missing_cell():
    rec = incomplete()
    correct = rec.correct.copy()
    m, i, k = np.nonzero(rec.missing)
    correct[m[:3], i[:3], k[:3]] = True
    with pytest.raises(RecordsError) as ei:
        replace(rec, correct=correct, source="made.arrow")
    msg = str(ei.value)
    assert "made.arrow: 'correct' is 1 at 3 missing cell(s) (a missing cell is 0 in 'correct')" in msg
    assert "fix: a missing cell holds 0 (false) in 'correct'" in msg
    assert replace(rec, correct=rec.correct.copy()).equals(rec)  # the honest set constructs as ever


def test_complete_records_do_not_pay_for_the_check(monkeypatch):
    def never(*_):
        raise AssertionError("a complete set ran the missing-cell check")

    monkeypatch.setattr(missing_mod, "correct_at_missing", never)
    rec = make_records()
    assert rec.missing is None
    assert replace(rec, correct=rec.correct.copy()).select_models(rec.models[:1]).shape[0] == 1


def test_packed_file_with_correct_at_missing_cells_is_refused(tmp_path):
    rec = incomplete()
    write_packed(rec, tmp_path / "honest.arrow")
    assert load_quiet(tmp_path / "honest.arrow").equals(rec)
    write_packed(liar(rec, 5), tmp_path / "liar.arrow")  # the package's own writer: a valid checksum
    with pytest.raises(RecordsError) as ei:
        load_quiet(tmp_path / "liar.arrow")
    assert f"{tmp_path / 'liar.arrow'}: 'correct' is 1 at 5 missing cell(s)" in str(ei.value)
    assert "checksum" not in str(ei.value)


def test_cache_entry_with_correct_at_missing_cells_is_refused(tmp_path):
    rec = incomplete(seed=1)
    (tmp_path / "ok.entry").write_bytes(entry_bytes(rec))
    assert read_entry(tmp_path / "ok.entry")[0].equals(rec)
    (tmp_path / "bad.entry").write_bytes(entry_bytes(liar(rec, 2)))
    with pytest.raises(RecordsError, match="'correct' is 1 at 2 missing cell"):
        read_entry(tmp_path / "bad.entry")


@pytest.mark.parametrize("block", [1, 7, 1 << 20])
def test_correct_at_missing_counts_every_cell_in_blocks_and_views(monkeypatch, block):
    monkeypatch.setattr(missing_mod, "CHECK_BLOCK", block)
    rng = np.random.default_rng(4)
    correct = rng.random((5, 9, 4)) < 0.5
    miss = rng.choice(np.array([0, NOT_COLLECTED, FAILED], dtype=np.int8), size=(5, 9, 4))
    for c, m in ((correct, miss), (correct[:, 2:7], miss[:, 2:7]), (correct[1:4, ::2], miss[1:4, ::2])):
        assert correct_at_missing(c, m) == int(np.count_nonzero(c & (m != 0)))
    assert correct_at_missing(correct & (miss == 0), miss) == 0
    assert correct_at_missing(correct[:0], miss[:0]) == 0
