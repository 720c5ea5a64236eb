"""Records from strangers (issue 11, items 4, 5, 15, 16, 17): each test builds the bad input."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers.records import make_records

from leaderboard_audit.records import RecordsError, load_records, write_records
from leaderboard_audit.records.table import table_frame, write_table

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")


@contextlib.contextmanager
def no_hang(seconds: int = 20):
    """Fail (instead of hanging the suite) if the block blocks, e.g. opening a FIFO."""

    def alarm(signum, frame):
        raise TimeoutError(f"blocked for {seconds} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def error(path: Path) -> str:
    with warnings.catch_warnings(), no_hang():
        warnings.simplefilter("ignore")
        with pytest.raises(RecordsError) as ei:
            load_records(path)
    return str(ei.value)


@pytest.fixture
def recs(tmp_path) -> Path:
    root = tmp_path / "records"
    write_records(make_records(), root)
    return root


def flat(root: Path, dst: Path) -> Path:
    """The same set as flat release-style files with a legend.json."""
    dst.mkdir()
    (dst / "legend.json").write_bytes((root / "grid.json").read_bytes())
    for f in root.glob("*/*.jsonl"):
        (dst / f"{f.parent.name}_{f.name}").write_bytes(f.read_bytes())
    return dst


# -- 4: only regular files are opened --------------------------------------------------------------


@needs_fifo
def test_fifo_grid_json_is_an_error_not_a_hang(recs):
    (recs / "grid.json").unlink()
    os.mkfifo(recs / "grid.json")
    assert f"{recs / 'grid.json'}: cannot read grid.json: it is a FIFO (named pipe), not a regular file" in error(recs)


@needs_fifo
def test_fifo_records_file_is_an_error_not_a_hang(recs):
    p = recs / "arc" / "m-a.jsonl"
    p.unlink()
    os.mkfifo(p)
    assert f"{p}: not a regular file" in error(recs)


@needs_fifo
def test_fifo_in_a_flat_release(recs, tmp_path):
    root = flat(recs, tmp_path / "flat")
    (root / "legend.json").unlink()
    os.mkfifo(root / "legend.json")
    assert "legend.json: cannot read legend.json: it is a FIFO (named pipe)" in error(root)
    (root / "legend.json").unlink()
    (root / "mmlu_m-c.jsonl").unlink()
    os.mkfifo(root / "mmlu_m-c.jsonl")
    assert f"{root / 'mmlu_m-c.jsonl'}: not a regular file" in error(root)


@needs_fifo
@pytest.mark.parametrize("name", ["t.csv", "t.parquet", "grid.json"])
def test_fifo_table_or_its_legend_is_an_error_not_a_hang(tmp_path, name):
    write_table(make_records(), tmp_path / "t.csv")
    write_table(make_records(), tmp_path / "t.parquet")
    (tmp_path / name).unlink()
    os.mkfifo(tmp_path / name)
    table = tmp_path / ("t.parquet" if name == "t.parquet" else "t.csv")
    assert "it is a FIFO (named pipe), not a regular file" in error(table)


def test_directory_named_like_a_table(tmp_path):
    from leaderboard_audit.records.table import read_table

    (tmp_path / "t.csv").mkdir()
    with no_hang(), pytest.raises(RecordsError, match="cannot read the table: it is a directory, not a regular"):
        read_table(tmp_path / "t.csv")


# -- 5: `pooled` is reserved ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["pooled", "Pooled"])
def test_benchmark_directory_named_pooled(recs, name):
    (recs / "mmlu").rename(recs / name)
    msg = error(recs)
    assert f"{recs / name / 'm-a.jsonl'}: benchmark name {name!r} is reserved" in msg
    assert "fix: rename the benchmark: 'pooled' is the audit's scope of all benchmarks together" in msg


def test_benchmark_field_pooled_in_a_flat_release(recs, tmp_path):
    root = flat(recs, tmp_path / "flat")
    p = root / "mmlu_m-a.jsonl"
    lines = [dict(json.loads(x), benchmark="pooled") for x in p.read_text().splitlines()]
    p.unlink()
    (root / "pooled_m-a.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert f"{root / 'pooled_m-a.jsonl'}:1: benchmark name 'pooled' is reserved" in error(root)


def test_benchmark_pooled_in_a_table(tmp_path):
    df = table_frame(make_records(text=False))
    df.loc[df.benchmark == "mmlu", "benchmark"] = "pooled"
    df.to_csv(tmp_path / "t.csv", index=False)
    first = int(np.flatnonzero(df.benchmark == "pooled")[0]) + 2
    assert f"{tmp_path / 't.csv'}:{first}: benchmark name 'pooled' is reserved" in error(tmp_path / "t.csv")


def test_writer_refuses_pooled(tmp_path):
    rec = make_records(benches=(("pooled", 2), ("arc", 2)))
    with pytest.raises(RecordsError, match="benchmark name 'pooled' is reserved"):
        write_records(rec, tmp_path / "w")
    assert not (tmp_path / "w" / "grid.json").exists()


# -- 15: corrupt Parquet --------------------------------------------------------------------------


def _correct_column_unverified(raw: bytes) -> list | None:
    """The 'correct' column as pyarrow reads it without checking page CRCs; None if unreadable."""
    try:
        return pq.read_table(io.BytesIO(raw), page_checksum_verification=False).column("correct").to_pylist()
    except (pa.ArrowException, OSError, ValueError):
        return None


def test_parquet_is_written_with_page_checksums_and_they_are_verified(tmp_path):
    rec = make_records()
    write_table(rec, tmp_path / "t.parquet")
    data = (tmp_path / "t.parquet").read_bytes()
    original = _correct_column_unverified(data)
    meta = pq.ParquetFile(io.BytesIO(data)).metadata
    col = next(
        meta.row_group(0).column(j)
        for j in range(meta.num_columns)
        if meta.row_group(0).column(j).path_in_schema == "correct"
    )
    assert col.data_page_offset > 0
    # a flip inside the 'correct' page that still decodes, to different bits: only the CRC can tell
    for pos in range(col.data_page_offset + col.total_compressed_size - 1, col.data_page_offset, -1):
        trial = bytearray(data)
        trial[pos] ^= 0x01
        changed = _correct_column_unverified(bytes(trial))
        if changed is not None and changed != original:
            break
    else:
        pytest.fail("no silently decodable flip found in the page")
    (tmp_path / "f.parquet").write_bytes(bytes(trial))
    msg = error(tmp_path / "f.parquet")
    assert "unreadable Parquet, corrupt or not Parquet" in msg and "CRC" in msg


@pytest.mark.slow
def test_single_bit_flips_in_parquet_never_change_data_silently(tmp_path):
    """300 random single-bit flips: each one a RecordsError or the same records, never another
    exception, never different data (docs/records.md, "Security model", has the counts)."""
    rec = make_records(benches=(("arc", 5), ("mmlu", 4)))
    write_table(rec, tmp_path / "t.parquet")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = load_records(tmp_path / "t.parquet")
    raw = (tmp_path / "t.parquet").read_bytes()
    rng = np.random.default_rng(0)
    counts = {"detected": 0, "same": 0}
    for _ in range(300):
        b = bytearray(raw)
        pos = int(rng.integers(len(b) * 8))
        b[pos // 8] ^= 1 << (pos % 8)
        (tmp_path / "f.parquet").write_bytes(bytes(b))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = load_records(tmp_path / "f.parquet")
        except RecordsError:
            counts["detected"] += 1
            continue
        assert got.equals(base), f"bit {pos} changed the data silently"
        counts["same"] += 1
    # 146/154 since issue 46 (161/139 before): the bounded reader (records/parquet_bounds.py) never
    # decodes the file's pandas metadata, so flips there no longer fail a load they cannot change,
    # and the table's recorded shape (table.TABLE_KEY) makes the file, and its footer, longer
    assert counts == {"detected": 146, "same": 154}


def test_parquet_column_of_a_type_it_cannot_hold(tmp_path):
    df = table_frame(make_records())
    t = pa.Table.from_pandas(df, preserve_index=False)
    i = t.schema.get_field_index("model")
    t = t.set_column(i, "model", pa.array([[1]] * len(df)))
    pq.write_table(t, tmp_path / "t.parquet")
    assert "column 'model' must hold strings, got Arrow type list<" in error(tmp_path / "t.parquet")


# -- 16: a null in a nullable integer `correct` ---------------------------------------------------


def test_nullable_int64_correct_with_one_null_names_the_null(tmp_path):
    df = table_frame(make_records())
    correct = pd.array(df["correct"].astype(int), dtype="Int64")
    correct[7] = pd.NA
    df["correct"] = correct
    df.to_parquet(tmp_path / "t.parquet", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RecordsError) as ei:
            load_records(tmp_path / "t.parquet")
    assert ei.value.total == 1
    row = df.iloc[7]
    assert (
        f"{tmp_path / 't.parquet'}, row 7: model {row.model!r}, item {row.item_id!r} of benchmark "
        f"{row.benchmark!r}, config {row.config!r}: correct is null (a missing value)"
    ) in str(ei.value)


# -- 17: duplicated columns and keys --------------------------------------------------------------


@pytest.mark.parametrize("suffix,sep", [(".csv", ","), (".tsv", "\t")])
def test_table_with_two_correct_columns(tmp_path, suffix, sep):
    df = table_frame(make_records(text=False))
    text = df.to_csv(index=False, sep=sep, lineterminator="\n")
    header, body = text.split("\n", 1)
    flipped = [str(1 - int(r.split(sep)[4])) for r in body.splitlines()]
    rows = [r + sep + f for r, f in zip(body.splitlines(), flipped)]
    (tmp_path / f"t{suffix}").write_text(header + sep + "correct\n" + "\n".join(rows) + "\n")
    assert f"{tmp_path / f't{suffix}'}:1: column(s) ['correct'] appear more than once in the header" in error(
        tmp_path / f"t{suffix}"
    )


def test_parquet_with_two_correct_columns(tmp_path):
    df = table_frame(make_records())
    t = pa.Table.from_pandas(df, preserve_index=False)
    t = t.append_column("correct", pa.array(1 - df["correct"].to_numpy()))
    pq.write_table(t, tmp_path / "t.parquet")
    assert "column(s) ['correct'] appear more than once in the header" in error(tmp_path / "t.parquet")


def duplicate_inside(line: str, field: str, key: str, value) -> str:
    """``line`` with ``key`` written a second time inside the object ``field``."""
    obj = json.loads(line)
    inner = json.dumps(obj[field])
    obj[field] = "@@"
    return json.dumps(obj).replace('"@@"', inner[:-1] + f", {json.dumps(key)}: {json.dumps(value)}}}")


def test_json_line_with_a_duplicate_key_inside_correct(recs):
    p = recs / "arc" / "m-c.jsonl"
    lines = p.read_text().splitlines()
    obj = json.loads(lines[1])
    key = "gen|letter_plain|p1"
    lines[1] = duplicate_inside(lines[1], "correct", key, 1 - obj["correct"][key])
    assert json.loads(lines[1])["correct"][key] != obj["correct"][key]  # plain json: last one wins
    p.write_text("\n".join(lines) + "\n")
    msg = error(recs)
    assert f"{p}:2: duplicate key {key!r} in one JSON object" in msg
    assert "fix: each key may appear once per object" in msg


def test_json_line_with_a_duplicate_top_level_key(recs):
    p = recs / "arc" / "m-c.jsonl"
    lines = p.read_text().splitlines()
    lines[0] = lines[0][:-1] + ', "item_id": "arc/other"}'
    p.write_text("\n".join(lines) + "\n")
    assert f"{p}:1: duplicate key 'item_id' in one JSON object" in error(recs)


def test_grid_json_with_a_duplicate_key(recs):
    text = (recs / "grid.json").read_text()
    (recs / "grid.json").write_text(text.replace('"reference":', '"reference": "ll|cloze_plain", "reference":', 1))
    assert "duplicate key 'reference' in one JSON object" in error(recs)


def test_assemble_refuses_pooled_for_every_reader_and_importer():
    """The importers (lm-eval, HELM) build ModelFiles and call assemble: it checks the name too."""
    from leaderboard_audit.records.grid import paper_grid
    from leaderboard_audit.records.reader import ModelFile, assemble

    grid = paper_grid()
    mf = ModelFile(
        path="runs/pooled/alpha",
        model="alpha",
        ids=["q1"],
        lines=[1],
        correct=np.ones((1, len(grid)), dtype=bool),
        gold=[None],
        question=[None],
        options=[None],
    )
    with pytest.raises(RecordsError, match="runs/pooled/alpha: benchmark name 'pooled' is reserved"):
        assemble({"pooled": {"alpha": mf}}, grid, "runs")
