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


def _parquet_table(tmp_path: Path, question_bytes: int) -> Path:
    """The tiny set as a long Parquet table, every row's question ``question_bytes`` long:
    dictionary-encoded, so the file stays small."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from leaderboard_audit.records.table import write_table

    t = tmp_path / "board"
    t.mkdir()
    shutil.copy(TINY / "grid.json", t)
    f = t / "board.parquet"
    write_table(load_records(TINY), f)
    tab = pq.read_table(f)
    i = tab.schema.get_field_index("question")
    tab = tab.set_column(i, "question", pa.array(["Q" * question_bytes] * tab.num_rows))
    pq.write_table(tab, f, use_dictionary=True, compression="zstd")
    return f


def test_a_parquet_table_whose_text_decodes_past_the_bound_is_refused_unread(tmp_path, monkeypatch):
    """The table reader read the whole file (pf.read) before any check; its text is now counted on
    the dictionaries first. The bound (2 GiB) is lowered so that a small file passes it."""
    from leaderboard_audit.records import table

    f = _parquet_table(tmp_path, 2**16)
    assert f.stat().st_size < 100_000
    assert load_records(f).shape == load_records(TINY).shape  # within the bound: read as before
    monkeypatch.setattr(table, "MAX_TABLE_TEXT_BYTES", 2**20)
    with pytest.raises(RecordsError, match=rf"{f.name}: its text decodes to over 1,048,576 bytes"):
        load_records(f)
    monkeypatch.setattr(table, "MAX_TABLE_ROWS", 10)
    with pytest.raises(RecordsError, match=r"rows \(limit 10\)"):
        load_records(f)


def test_a_csv_table_over_the_bound_is_refused_without_reading_it(tmp_path):
    from leaderboard_audit.records.table import MAX_TABLE_CSV_BYTES, write_table

    t = tmp_path / "board"
    t.mkdir()
    shutil.copy(TINY / "grid.json", t)
    f = t / "board.csv"
    write_table(load_records(TINY), f)
    _sparse(f, MAX_TABLE_CSV_BYTES + 1)
    t0 = time.perf_counter()
    with pytest.raises(RecordsError, match=r"board.csv: [\d,]+ bytes: larger than"):
        load_records(f)
    assert time.perf_counter() - t0 < 5


def test_packed_metadata_of_too_many_values_is_refused_before_it_is_decoded(tmp_path):
    """24 MB of ``[],`` in a packed file's metadata (under its 256 MiB byte bound) would decode to
    8 million lists; d0b4150 decoded them, then refused the format."""
    import pyarrow as pa
    import pyarrow.ipc

    from leaderboard_audit.records.packed import META_KEY, write_packed
    from leaderboard_audit.records.safe_io import MAX_JSON_VALUES

    ok = write_packed(load_records(TINY), tmp_path / "ok.arrow")
    t = pa.ipc.open_file(pa.memory_map(str(ok))).read_all()
    key = META_KEY if isinstance(META_KEY, bytes) else META_KEY.encode()
    t = t.replace_schema_metadata({key: b"[" + b"[]," * (MAX_JSON_VALUES // 2 + 1) + b"[]]"})
    bad = tmp_path / "bad.arrow"
    with pa.OSFile(str(bad), "wb") as sink, pa.ipc.new_file(sink, t.schema) as w:
        w.write_table(t)
    with pytest.raises(RecordsError, match=r"metadata holds up to [\d,]+ JSON values"):
        load_records(bad)


def test_a_legend_of_too_many_values_is_refused_before_it_is_decoded(tmp_path):
    from leaderboard_audit.records.legend import MAX_GRID_VALUES

    d = _tiny(tmp_path)
    (d / "grid.json").write_text('{"configs": [' + "{}," * MAX_GRID_VALUES + "{}]}")
    with pytest.raises(RecordsError, match=rf"grid.json: holds up to [\d,]+ JSON values \(limit {MAX_GRID_VALUES:,}\)"):
        load_records(d)


def test_one_long_string_among_the_bits_costs_no_more_than_its_own_bytes(tmp_path):
    """Found by the fuzz (issue 46): a 1 MB string as one correctness value made numpy build a
    string array of every row x config cell, each as wide as that string (4 MB a cell: 8 s and
    1.5 GB for one 15-line file of d0b4150's release fixture). It is one named problem now."""
    import tracemalloc

    d = _tiny(tmp_path)
    f = d / "tiny" / "beta.jsonl"
    rows = [json.loads(x) for x in f.read_text().splitlines()]
    key = next(iter(rows[2]["correct"]))
    rows[2]["correct"][key] = "x" * 1_000_000
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    tracemalloc.start()
    try:
        with pytest.raises(RecordsError, match=rf"beta.jsonl:3: .*correct\['{key}'\] = .* is not 0/1"):
            load_records(d)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40 * 2**20, peak  # d0b4150: rows x configs x 4 MB


def test_damaged_parquet_size_statistics_never_abort_the_process(tmp_path):
    """pyarrow aborts the process (an uncaught C++ exception) when column-chunk metadata with
    damaged size statistics is read; the bounded reader never reads it (seed 1, bit 16769 of
    tests/records/test_hostile.py's flip table aborted the first version of it)."""
    import subprocess
    import sys

    from helpers.records import make_records
    from leaderboard_audit.records.table import write_table

    write_table(make_records(benches=(("arc", 5), ("mmlu", 4))), tmp_path / "t.parquet")
    raw = bytearray((tmp_path / "t.parquet").read_bytes())
    raw[16769 // 8] ^= 1 << (16769 % 8)
    bad = tmp_path / "f.parquet"
    bad.write_bytes(bytes(raw))
    probe = "import sys, pyarrow.parquet as pq\nmd = pq.ParquetFile(sys.argv[1]).metadata\n"
    probe += "[md.row_group(g).column(j) for g in range(md.num_row_groups) for j in range(md.num_columns)]"
    if subprocess.run([sys.executable, "-c", probe, str(bad)], capture_output=True).returncode >= 0:
        pytest.skip("this pyarrow (or this table's bytes) does not abort on that metadata")
    code = "import sys\nfrom leaderboard_audit.records import RecordsError, load_records\n"
    code += "try:\n    load_records(sys.argv[1])\nexcept RecordsError:\n    pass\n"
    r = subprocess.run([sys.executable, "-c", code, str(bad)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-500:]


def test_a_parquet_footer_that_drops_rows_is_refused(tmp_path):
    """Found by the fuzz (issue 46): one flipped bit in the footer's row count (which the page
    checksums do not cover) dropped a model from a table silently. write_table now records
    its row count in the schema metadata; a footer that disagrees is refused."""
    import pyarrow.parquet as pq

    from leaderboard_audit.records.table import write_table

    t = tmp_path / "board"
    t.mkdir()
    shutil.copy(TINY / "grid.json", t)
    f = t / "board.parquet"
    write_table(load_records(TINY), f)
    full = pq.read_table(f)
    models = full.column("model").to_pylist()
    keep = [i for i, m in enumerate(models) if m != models[-1]]
    short = full.take(keep)  # the last model's rows gone, the written metadata kept
    pq.write_table(short.replace_schema_metadata(full.schema.metadata), f, write_page_checksum=True)
    with pytest.raises(RecordsError, match=r"board.parquet: damaged: written with [\d,]+ rows and columns"):
        load_records(f)


def test_a_parquet_footer_that_renames_a_column_is_refused(tmp_path):
    """Found by the fuzz: a flipped bit renamed the optional column ``gold`` to ``oold`` in the
    footer's schema, and the table loaded without its gold answers."""
    import pyarrow.parquet as pq

    from leaderboard_audit.records.table import write_table

    t = tmp_path / "board"
    t.mkdir()
    shutil.copy(TINY / "grid.json", t)
    f = t / "board.parquet"
    write_table(load_records(TINY), f)
    full = pq.read_table(f)
    renamed = full.rename_columns(["oold" if c == "gold" else c for c in full.column_names])
    pq.write_table(renamed.replace_schema_metadata(full.schema.metadata), f, write_page_checksum=True)
    with pytest.raises(RecordsError, match=r"damaged: written with .* columns \[.*'gold'.*its footer says .*'oold'"):
        load_records(f)
