"""The packed records form: exact round trips, auto-detection, corruption is a RecordsError."""

from __future__ import annotations

import json
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leaderboard_audit.cli.main import main as cli_main
from leaderboard_audit.records import (
    InferredLegendWarning,
    Records,
    RecordsError,
    load_records,
    write_records,
)
from leaderboard_audit.records.packed import (
    META_KEY,
    is_packed,
    packed_bytes,
    read_packed,
    read_packed_meta,
    write_packed,
)
from helpers.records import full_records, write_rechunked
from helpers.paths import REPO

pa = pytest.importorskip("pyarrow")

TINY = REPO / "fixtures" / "tiny"
DEMO = REPO / "fixtures" / "demo"


def assert_same(a: Records, b: Records) -> None:
    assert a.equals(b)
    assert a.grid == b.grid and a.notes == b.notes and a.dropped == b.dropped
    assert a.correct.dtype == b.correct.dtype and a.correct.flags.c_contiguous
    for x, y in ((a.pred, b.pred), (a.margin, b.margin)):
        assert (x is None) == (y is None)
        if x is not None:
            assert x.dtype == y.dtype


def test_round_trip_every_field(tmp_path):
    rec = full_records()
    out = write_packed(rec, tmp_path / "r.arrow")
    back = read_packed(out)
    assert_same(back, rec)
    assert back.items.gold == rec.items.gold and back.items.options == rec.items.options
    assert back.source == str(out)


def test_bytes_are_deterministic():
    assert packed_bytes(full_records(seed=3)) == packed_bytes(full_records(seed=3))


@pytest.mark.parametrize("src", [TINY, DEMO], ids=["tiny", "demo"])
def test_fixtures_round_trip_and_load_records_detects_it(tmp_path, src):
    rec = load_records(src)
    out = tmp_path / "any-suffix.bin"
    write_packed(rec, out)
    assert is_packed(out) and not is_packed(src) and not is_packed(tmp_path / "missing")
    assert_same(load_records(out), rec)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    M=st.integers(1, 4),
    per_bench=st.lists(st.integers(1, 9), min_size=1, max_size=3),
    seed=st.integers(0, 1000),
    pred=st.booleans(),
    margin=st.booleans(),
)
def test_round_trip_property(tmp_path, M, per_bench, seed, pred, margin):
    rec = full_records(M, tuple(per_bench), seed, pred, margin)
    path = tmp_path / "p.arrow"
    write_packed(rec, path)
    assert_same(read_packed(path), rec)


def test_inferred_legend_warns_again(tmp_path):
    src = tmp_path / "r"
    write_records(load_records(TINY), src)
    (src / "grid.json").unlink()
    with pytest.warns(InferredLegendWarning):
        rec = load_records(src)
    write_packed(rec, tmp_path / "p.arrow")
    with pytest.warns(InferredLegendWarning, match="legend inferred"):
        back = load_records(tmp_path / "p.arrow")
    assert back.grid.inferred and back.notes == rec.notes


def test_pack_command_from_a_table_and_a_directory(tmp_path, capsys):
    from leaderboard_audit.records.table import write_table

    rec = load_records(TINY)
    write_table(rec, tmp_path / "t" / "tiny.csv")
    assert cli_main(["pack", str(tmp_path / "t" / "tiny.csv"), "-o", str(tmp_path / "a.arrow")]) == 0
    assert cli_main(["pack", str(TINY), "-o", str(tmp_path / "b.arrow")]) == 0
    assert "3 models x 8 items x 4 configs" in capsys.readouterr().out
    assert load_records(tmp_path / "b.arrow").equals(rec)
    from_table = load_records(tmp_path / "a.arrow")
    assert np.array_equal(from_table.correct, rec.correct)  # the table keeps no options


def test_pack_command_errors_are_one_line(tmp_path, capsys):
    assert cli_main(["pack", str(tmp_path / "missing"), "-o", str(tmp_path / "x.arrow")]) == 4
    assert "no such file" in capsys.readouterr().err
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro" / "f").write_text("")
    assert cli_main(["pack", str(TINY), "-o", str(tmp_path / "ro" / "f" / "x.arrow")]) == 4
    err = capsys.readouterr().err
    assert "cannot write" in err and "Traceback" not in err


def rewrite_meta(path: Path, out: Path, edit) -> None:
    with pa.memory_map(str(path)) as src:
        table = pa.ipc.open_file(src).read_all()
    meta = json.loads(table.schema.metadata[META_KEY])
    edit(meta)
    table = table.replace_schema_metadata({META_KEY: json.dumps(meta).encode()})
    with pa.OSFile(str(out), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda m: m.update(format="other/v9"), "format is 'other/v9'"),
        (lambda m: m.update(shape=[3, 9, 4]), "configs"),
        (lambda m: m.update(shape=[2, 9, 3]), "models"),
        (lambda m: m["models"].reverse(), "sorted order"),
        (lambda m: m["items"]["gold"].__setitem__(0, 1.5), "items.gold"),
        (lambda m: m["items"]["benchmark"].reverse(), "grouped by benchmark"),
        (lambda m: m["items"]["item_id"].__setitem__(1, m["items"]["item_id"][0]), "duplicate"),
        (lambda m: m["grid"].update(reference="nope"), "reference"),
        (lambda m: m.update(content_sha256="0" * 64), "checksum"),
        (lambda m: m.__setitem__("dropped", {"b0": "x"}), "dropped"),
    ],
)
def test_bad_metadata_is_a_records_error(tmp_path, edit, message):
    write_packed(full_records(), tmp_path / "ok.arrow")
    rewrite_meta(tmp_path / "ok.arrow", tmp_path / "bad.arrow", edit)
    with pytest.raises(RecordsError, match=message):
        load_records(tmp_path / "bad.arrow")


def test_foreign_arrow_file_is_refused(tmp_path):
    path = tmp_path / "foreign.arrow"
    table = pa.table({"x": [1, 2, 3]})
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    with pytest.raises(RecordsError, match="without leaderboard-audit metadata"):
        load_records(path)


def test_flipped_bits_never_pass_silently(tmp_path):
    """Every single-bit flip in the data region is a RecordsError or leaves the records equal."""
    rec = full_records(M=2, per_bench=(7,), pred=False, margin=False)
    data = packed_bytes(rec)
    rng = np.random.default_rng(0)
    path = tmp_path / "f.arrow"
    outcomes = {"error": 0, "same": 0}
    for pos in rng.choice(len(data) * 8, size=300, replace=False).tolist():
        flipped = bytearray(data)
        flipped[pos // 8] ^= 1 << (pos % 8)
        path.write_bytes(bytes(flipped))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                back = load_records(path)
        except RecordsError:
            outcomes["error"] += 1
            continue
        assert back.equals(rec), f"bit {pos} changed the records without an error"
        outcomes["same"] += 1
    assert outcomes["error"] > 0


def test_truncated_file_is_a_records_error(tmp_path):
    reader = load_records
    data = packed_bytes(full_records())
    for cut in (8, len(data) // 2, len(data) - 3):
        (tmp_path / "t.arrow").write_bytes(data[:cut])
        with pytest.raises(RecordsError):
            reader(tmp_path / "t.arrow")


def test_meta_is_returned_for_the_cache(tmp_path):
    path = tmp_path / "m.arrow"
    path.write_bytes(packed_bytes(full_records(), extra_meta={"cache": {"k": 1}}))
    rec, meta = read_packed_meta(path)
    assert meta["cache"] == {"k": 1} and rec.equals(full_records())


def test_intersect_is_a_no_op_on_packed_records(tmp_path):
    rec = replace(full_records(), dropped={})
    write_packed(rec, tmp_path / "i.arrow")
    assert load_records(tmp_path / "i.arrow", intersect=True).equals(rec)


def test_rechunked_file_and_small_unpack_blocks_read_the_same(tmp_path, monkeypatch):
    """Another writer may split the column into chunks that do not start on a byte; blocks of any size."""
    from leaderboard_audit.records import packed

    rec = full_records(M=3, per_bench=(7, 6), pred=True, margin=True)
    src = tmp_path / "a.arrow"
    src.write_bytes(packed_bytes(rec))
    out = tmp_path / "b.arrow"
    write_rechunked(src, out, (3, 8))
    assert len(pa.ipc.open_file(pa.memory_map(str(out))).read_all().column("correct").chunks) == 3
    assert_same(load_records(out), rec)
    monkeypatch.setattr(packed, "UNPACK_BLOCK", 1)
    assert_same(load_records(src), rec)


def test_pack_command_from_an_importer_source(tmp_path, capsys):
    from leaderboard_audit.importers import load

    helm = REPO / "tests" / "data" / "helm" / "benchmark_output" / "runs" / "v1"
    out = tmp_path / "helm.arrow"
    assert cli_main(["pack", str(helm), "--format", "helm", "-o", str(out)]) == 0
    direct = load(helm, "helm")
    back = load_records(out)
    assert_same(back, direct)


def test_audit_of_the_packed_form_equals_the_audit_of_the_folder(tmp_path, capsys):
    packed_path = tmp_path / "tiny.arrow"
    write_packed(load_records(TINY), packed_path)
    rc = cli_main(["audit", str(TINY), "--json", str(tmp_path / "a.json")])
    assert rc in (0, 1) and cli_main(["audit", str(packed_path), "--json", str(tmp_path / "b.json")]) == rc
    a, b = (json.loads((tmp_path / n).read_text()) for n in ("a.json", "b.json"))
    assert a["scopes"] == b["scopes"]
    assert {k: v for k, v in a["records"].items() if k not in ("path", "sha256")} == {
        k: v for k, v in b["records"].items() if k not in ("path", "sha256")
    }


def test_packed_keeps_answer_class_unparsed_and_layout_notes(tmp_path):
    """The packed form (and so the load cache) keeps every optional Records field."""
    from dataclasses import replace as _replace

    import numpy as _np

    from leaderboard_audit.records import load_records as _load
    from leaderboard_audit.records.packed import write_packed as _write

    r = _load(REPO / "fixtures" / "release" / "records")
    M, N, K = r.shape
    rng = _np.random.default_rng(0)
    ac = rng.integers(-1, 5, (M, N, K)).astype(_np.int8)
    r = _replace(r, answer_class=ac)
    assert r.unparsed is not None and r.layout_notes
    out = tmp_path / "r.packed"
    _write(r, out)
    back = _load(out)
    assert _np.array_equal(back.answer_class, ac)
    assert _np.array_equal(back.unparsed, r.unparsed)
    assert back.layout_notes == r.layout_notes
    assert _np.array_equal(back.correct, r.correct)
    assert _np.array_equal(_np.nan_to_num(back.margin, nan=-9), _np.nan_to_num(r.margin, nan=-9))


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(0, 300),
    start=st.integers(0, 40),
    offset=st.integers(0, 9),
    block=st.sampled_from([1, 3, 1 << 16]),
    seed=st.integers(0, 2**32 - 1),
)
def test_unpack_into_matches_numpy_unpackbits(n, start, offset, block, seed):
    """The table-driven unpacking writes exactly bits start .. start + n (little bit order),
    whatever the destination's byte offset, the block size and a partial last byte; nothing
    around the destination is touched."""
    from leaderboard_audit.records import packed

    raw = np.random.default_rng(seed).integers(0, 256, (start + n) // 8 + 2, dtype=np.uint8)
    buf = np.zeros(offset + n + 5, dtype=bool)
    old = packed.UNPACK_BLOCK
    packed.UNPACK_BLOCK = block
    try:
        packed._unpack_into(buf[offset : offset + n], raw, start)
    finally:
        packed.UNPACK_BLOCK = old
    want = np.unpackbits(raw, bitorder="little")[start : start + n].view(bool)
    assert np.array_equal(buf[offset : offset + n], want)
    assert not buf[:offset].any() and not buf[offset + n :].any()


def test_unpack_into_a_shaped_or_strided_destination():
    """A destination that is not one contiguous run of bools (a 3-D tensor, every other
    element) gets the same bits in its own element order."""
    from leaderboard_audit.records import packed

    raw = np.random.default_rng(7).integers(0, 256, 100, dtype=np.uint8)
    bits = np.unpackbits(raw, bitorder="little").view(bool)
    cube = np.zeros((3, 5, 7), dtype=bool)
    packed._unpack_into(cube, raw, 0)
    assert np.array_equal(cube.ravel(), bits[:105])
    buf = np.zeros(300, dtype=bool)
    packed._unpack_into(buf[::2], raw, 8)
    assert np.array_equal(buf[::2], bits[8:158]) and not buf[1::2].any()
