"""The load cache's entry file (records/cache_entry.py): the packed form's content, read without pyarrow."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from leaderboard_audit.records import RecordsError
from leaderboard_audit.records.cache_entry import MAGIC, entry_bytes, read_entry

from helpers.records import full_records
from helpers.paths import REPO


def with_answers(rec):
    rng = np.random.default_rng(5)
    M, N, K = rec.shape
    return replace(
        rec,
        answer_class=rng.integers(-1, 3, (M, N, K)).astype(np.int8),
        unparsed=rng.integers(-1, 4, (M, N)).astype(np.int16),
        layout_notes=("flat layout",),
    )


@pytest.mark.parametrize("pred,margin,answers", [(True, True, True), (False, False, False), (True, False, False)])
def test_round_trip_equals_the_records(tmp_path, pred, margin, answers):
    rec = full_records(pred=pred, margin=margin)
    rec = with_answers(rec) if answers else rec
    path = tmp_path / "e.entry"
    path.write_bytes(entry_bytes(rec, extra_meta={"cache": {"k": 1}}))
    back, meta = read_entry(path)
    assert meta["cache"] == {"k": 1}
    assert back.equals(rec) and back.notes == rec.notes and back.dropped == rec.dropped
    assert back.layout_notes == rec.layout_notes and back.grid == rec.grid
    for name in ("pred", "margin", "answer_class", "unparsed"):
        a, b = getattr(rec, name), getattr(back, name)
        assert (a is None) == (b is None)
        if a is not None:
            assert b.dtype == np.dtype(a.dtype).newbyteorder("=")
            root = b
            while isinstance(root.base, np.ndarray):
                root = root.base
            assert root.base is None  # its own memory, not a view of the file's bytes
            assert not b.flags.writeable  # read-only, as every load returns them
            np.testing.assert_array_equal(a, b)
    assert entry_bytes(rec, extra_meta={"cache": {"k": 1}}) == path.read_bytes()  # deterministic


def test_every_flipped_byte_is_an_error_or_harmless(tmp_path):
    """Flip each byte of an entry in turn: a flip either fails to load or loads the same
    records (a JSON whitespace-free header has no harmless bytes, so: always an error)."""
    rec = with_answers(full_records(M=2, per_bench=(3, 2)))
    data = entry_bytes(rec)
    rng = np.random.default_rng(0)
    positions = sorted(set(rng.integers(0, len(data), 300).tolist()) | {len(data) - 1, len(MAGIC) + 9})
    silent = 0
    for pos in positions:
        bad = bytearray(data)
        bad[pos] ^= 1 << int(rng.integers(0, 8))
        p = tmp_path / "bad.entry"
        p.write_bytes(bytes(bad))
        try:
            back, _ = read_entry(p)
        except RecordsError:
            continue
        if not (back.equals(rec) and back.notes == rec.notes):
            silent += 1
    assert silent == 0


@pytest.mark.parametrize(
    "cut",
    [
        lambda d: d[:10],
        lambda d: d[:-1],
        lambda d: d + b"\0",
        lambda d: b"ARROW1" + d[6:],
        lambda d: d[: len(MAGIC)] + (10**9).to_bytes(8, "little") + d[len(MAGIC) + 8 :],
    ],
)
def test_truncated_extended_or_foreign_files_are_errors(tmp_path, cut):
    data = entry_bytes(full_records())
    p = tmp_path / "x.entry"
    p.write_bytes(cut(data))
    with pytest.raises(RecordsError) as err:
        read_entry(p)
    assert str(p) in str(err.value)


def test_reading_an_entry_does_not_import_pyarrow(tmp_path):
    p = tmp_path / "e.entry"
    p.write_bytes(entry_bytes(full_records()))
    code = (
        "import sys; from leaderboard_audit.records.cache_entry import read_entry; "
        f"read_entry({str(p)!r}); print('pyarrow' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "False"
