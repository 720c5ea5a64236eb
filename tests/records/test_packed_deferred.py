"""``read_packed_deferred``: the packed form's metadata with every check ``read_packed`` makes
(content checksum included) and the bits read only when something uses them."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from helpers.records import full_records, write_rechunked
from leaderboard_audit.records import RecordsError
from leaderboard_audit.records.model import DeferredRecords
from leaderboard_audit.records.packed import packed_bytes, read_packed, read_packed_deferred, write_packed

pa = pytest.importorskip("pyarrow")


def test_metadata_without_the_bits_then_the_bits_as_read_packed_reads_them(tmp_path):
    rec = full_records(M=4, per_bench=(7, 9), pred=True, margin=True)
    path = write_packed(rec, tmp_path / "r.arrow")
    d = read_packed_deferred(path)
    assert isinstance(d, DeferredRecords) and not d.loaded
    assert d.shape == rec.shape and d.models == rec.models and d.benchmarks == rec.benchmarks
    assert d.grid == rec.grid and d.source == str(path)
    assert d.read_only() is d and not d.loaded  # a scope over it stays deferred
    assert not d.pred.flags.writeable and not d.margin.flags.writeable
    full = read_packed(path)
    assert np.array_equal(d.correct, full.correct) and d.loaded
    assert not d.correct.flags.writeable
    assert d.equals(full)
    view = d.scope(d.benchmarks[0])  # a view of a loaded set is an ordinary one
    assert np.array_equal(view.correct, full.scope(full.benchmarks[0]).correct)


def test_every_flipped_bit_is_an_error_or_changes_nothing_without_loading(tmp_path):
    rec = full_records(M=2, per_bench=(7,), pred=False, margin=False)
    data = packed_bytes(rec)
    rng = np.random.default_rng(1)
    path = tmp_path / "f.arrow"
    errors = 0
    for pos in rng.choice(len(data) * 8, size=200, replace=False).tolist():
        flipped = bytearray(data)
        flipped[pos // 8] ^= 1 << (pos % 8)
        path.write_bytes(bytes(flipped))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                full = read_packed(path)
            except RecordsError:
                with pytest.raises(RecordsError):
                    read_packed_deferred(path)
                errors += 1
                continue
            d = read_packed_deferred(path)
        assert not d.loaded and np.array_equal(d.correct, full.correct)
    assert errors > 0


def test_bits_not_on_byte_boundaries_are_read_in_full(tmp_path):
    rec = full_records(M=3, per_bench=(7, 6))
    src = tmp_path / "a.arrow"
    src.write_bytes(packed_bytes(rec))
    out = tmp_path / "b.arrow"
    write_rechunked(src, out, (3,))
    d = read_packed_deferred(out)
    assert not isinstance(d, DeferredRecords) and d.equals(rec)
