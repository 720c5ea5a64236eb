"""A packed file is checked before it is decoded, and damaged buffers are a named error (issue 25: B09, B17)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from leaderboard_audit.records import RecordsError, load_records
from leaderboard_audit.records.packed import META_KEY, read_packed, write_packed
from helpers.paths import REPO

pa = pytest.importorskip("pyarrow")
pytest.importorskip("pyarrow.ipc")

TINY = REPO / "fixtures" / "tiny"

CHILD = """
import resource, sys
from leaderboard_audit.records import RecordsError, load_records
try:
    load_records(sys.argv[1])
    print("LOADED")
except RecordsError as exc:
    print("ERROR", " ".join(str(exc).split()))
print("RSS_MB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


def _bomb(path: Path, meta: dict, batches: int = 24, rows: int = 4_000_000, K: int = 26) -> None:
    """A small zstd-compressed Arrow file that decodes to batches x rows x (K bits + 8 bytes)."""
    col = pa.FixedSizeListArray.from_arrays(pa.array(np.zeros(rows * K, dtype=bool)), K)
    pad = pa.array(np.zeros(rows, dtype=np.int16))
    schema = pa.schema([("correct", col.type), ("unparsed", pa.int16())], metadata={META_KEY: json.dumps(meta)})
    opts = pa.ipc.IpcWriteOptions(compression="zstd")
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, schema, options=opts) as w:
        b = pa.record_batch([col, pad], schema=schema)
        for _ in range(batches):
            w.write_batch(b)


def _child(path: Path) -> tuple[str, int]:
    out = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    return lines[0], int(lines[-1].split()[1])


def _meta_of(path: Path) -> dict:
    with pa.memory_map(str(path), "r") as src:
        return json.loads(pa.ipc.open_file(src).schema.metadata[META_KEY])


@pytest.mark.slow
@pytest.mark.parametrize("honest_shape", [False, True])
def test_a_compressed_bomb_is_refused_before_it_is_decoded(tmp_path, honest_shape):
    meta = _meta_of(write_packed(load_records(TINY), tmp_path / "tiny.arrow"))
    if honest_shape:  # metadata that agrees with the rows: only the compression gives it away
        meta = dict(meta, shape=[1, 24 * 4_000_000, 26])
    else:
        meta = {"format": meta["format"], "shape": [1, 1, 26]}
    bomb = tmp_path / "bomb.arrow"
    _bomb(bomb, meta)
    assert bomb.stat().st_size < 2_000_000  # decodes to about 1.2 GB
    first, rss_mb = _child(bomb)
    assert first.startswith("ERROR")
    # against a child loading the honest file: the imports' own footprint varies with the
    # environment (seen 130 MB alone, 520 MB inside the full suite); a decoded bomb is 1.2 GB
    _, base_mb = _child(tmp_path / "tiny.arrow")
    assert rss_mb < base_mb + 250, (rss_mb, base_mb)
    if honest_shape:
        assert "compress" in first or "metadata" in first


def test_an_honest_file_written_compressed_is_refused_with_a_fix(tmp_path):
    src = write_packed(load_records(TINY), tmp_path / "tiny.arrow")
    with pa.memory_map(str(src), "r") as f:
        table = pa.ipc.open_file(f).read_all()
    z = tmp_path / "z.arrow"
    with (
        pa.OSFile(str(z), "wb") as sink,
        pa.ipc.new_file(sink, table.schema, options=pa.ipc.IpcWriteOptions(compression="zstd")) as w,
    ):
        w.write_table(table)
    with pytest.raises(RecordsError, match="compressed") as e:
        read_packed(z)
    assert "leaderboard-audit pack" in str(e.value)


@pytest.mark.slow
def test_zeroed_bytes_anywhere_give_a_records_error_never_another_exception(tmp_path):
    good = write_packed(load_records(TINY), tmp_path / "tiny.arrow").read_bytes()
    bad = tmp_path / "bad.arrow"
    direct = load_records(TINY)
    for off in [2552, *range(0, len(good) - 8, 8)]:
        b = bytearray(good)
        b[off : off + 8] = b"\0" * 8
        bad.write_bytes(bytes(b))
        try:
            rec = read_packed(bad)
        except RecordsError:
            continue
        assert rec.equals(direct), off  # loaded: then exactly the same records
