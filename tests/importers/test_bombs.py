"""Importer inputs built to exhaust memory: refused by a bound checked before the memory is spent
(issue 46: C01 Inspect .eval zip bombs, C02 lighteval parquet, C13 HELM/Inspect JSON amplification).

Every bomb here is small on disk; each test fails on d0b4150 (the bomb was read, or read whole
before it was refused for another reason)."""

from __future__ import annotations

import json
import shutil
import struct
import zipfile
import zlib
from pathlib import Path

import pytest

from leaderboard_audit.importers import load
from leaderboard_audit.importers import inspect_ai
from leaderboard_audit.records import RecordsError
from helpers import paths

EVAL = paths.DATA / "inspect" / "eval"
HELM = paths.DATA / "helm" / "benchmark_output" / "runs" / "v1"


def _real_eval() -> tuple[bytes, list[dict]]:
    """header.json and the samples of a real Inspect log (Zstandard members)."""
    src = sorted(EVAL.glob("*.eval"))[0]
    z = zipfile.ZipFile(src)
    header = inspect_ai._zstd_member(src, z.getinfo("header.json"))
    samples = [json.loads(inspect_ai._zstd_member(src, i)) for i in z.infolist() if i.filename.startswith("samples/")]
    return header, samples


def write_zip(path: Path, members: list[tuple[str, bytes]], aliases: int = 0) -> Path:
    """A zip of Zstandard members (method 93, as Inspect writes them); ``aliases`` lists the last
    member again in the central directory (same name, same local header)."""
    import zstandard

    c = zstandard.ZstdCompressor(level=3)
    out, central = bytearray(), []
    for name, raw in members:
        comp, nb, off = c.compress(raw), name.encode(), len(out)
        crc = zlib.crc32(raw)
        out += struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 63, 0, 93, 0, 0x21, crc, len(comp), len(raw), len(nb), 0)
        out += nb + comp
        central.append((nb, crc, len(comp), len(raw), off))
    central += [central[-1]] * aliases
    cd = len(out)
    for nb, crc, cs, us, off in central:
        out += struct.pack(
            "<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 63, 63, 0, 93, 0, 0x21, crc, cs, us, len(nb), 0, 0, 0, 0, 0, off
        )
        out += nb
    out += struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(central), len(central), len(out) - cd, cd, 0)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(out))
    return path


def _members(header: bytes, samples: list[dict]) -> list[tuple[str, bytes]]:
    return [("header.json", header)] + [(f"samples/{s['id']}_epoch_1.json", json.dumps(s).encode()) for s in samples]


def test_the_real_logs_rebuilt_by_this_writer_import(tmp_path):
    """The writer below makes logs the importer reads: the refusals that follow are the bombs'."""
    header, samples = _real_eval()
    write_zip(tmp_path / "ok" / "run.eval", _members(header, samples))
    assert load(tmp_path / "ok", "inspect").shape == (1, 20, 1)


def test_a_member_listed_again_under_its_name_is_refused_before_it_is_read(tmp_path):
    header, samples = _real_eval()
    log = write_zip(tmp_path / "alias" / "run.eval", _members(header, samples), aliases=100)
    with pytest.raises(RecordsError) as err:
        load(log.parent, "inspect")
    assert f"{log}: lists the member 'samples/" in str(err.value) and "twice" in str(err.value)


def test_two_names_for_one_local_header_are_refused(tmp_path):
    header, samples = _real_eval()
    log = write_zip(tmp_path / "x" / "run.eval", _members(header, samples))
    raw = bytearray(log.read_bytes())
    last = raw.rfind(b"PK\x01\x02")  # the last central entry: give it the offset of the one before it
    prev = raw.rfind(b"PK\x01\x02", 0, last)
    raw[last + 42 : last + 46] = raw[prev + 42 : prev + 46]
    log.write_bytes(bytes(raw))
    with pytest.raises(RecordsError, match="lists two members at one offset"):
        load(log.parent, "inspect")


def test_a_highly_compressed_member_is_refused_as_a_bomb(tmp_path):
    """One 2 MiB sample that compresses ~1000:1 (Inspect's own members compress ~5:1)."""
    header, samples = _real_eval()
    samples[3] = dict(samples[3], metadata={"pad": "A" * (2 * 2**20)})
    log = write_zip(tmp_path / "r" / "run.eval", _members(header, samples))
    with pytest.raises(RecordsError) as err:
        load(log.parent, "inspect")
    msg = str(err.value)
    assert f"{log}!samples/{samples[3]['id']}_epoch_1.json: compressed" in msg and "decompression bomb" in msg


def test_the_sum_of_the_members_is_bounded_before_any_is_read(tmp_path, monkeypatch):
    """MAX_LOG_BYTES (512 MiB) lowered so that a real log is over it: the sizes come from the zip's
    directory, so nothing is decompressed (a 13 KB file can declare 6 GB)."""
    monkeypatch.setattr(inspect_ai, "MAX_LOG_BYTES", 100_000)
    with pytest.raises(RecordsError, match=r"header and samples are [\d,]+ bytes uncompressed \(limit 100,000\)"):
        load(EVAL, "inspect")


def test_a_member_of_many_tiny_values_is_refused_before_it_is_decoded(tmp_path):
    """8 MB of ``{},`` stored uncompressed (ratio 1:1, under MAX_MEMBER_BYTES) would decode to
    2.7 million dicts; over MAX_MEMBER_VALUES it is refused from a count of its bytes."""
    header, samples = _real_eval()
    samples[0] = dict(samples[0], metadata=[{}] * (inspect_ai.MAX_MEMBER_VALUES // 2 + 1))
    log = tmp_path / "v" / "run.eval"
    log.parent.mkdir()
    with zipfile.ZipFile(log, "w", zipfile.ZIP_STORED) as z:
        for name, raw in _members(header, samples[:1]):
            z.writestr(name, raw)
    with pytest.raises(RecordsError, match=r"run.eval!samples/.*: holds up to [\d,]+ JSON values \(limit 4,000,000\)"):
        load(log.parent, "inspect", intersect=True)


def test_kept_samples_hold_only_what_the_import_reads():
    header, samples = _real_eval()
    s = dict(samples[0], metadata={"pad": "x" * 1000}, messages=[{"role": "user", "content": "hi"}] * 50)
    slim = inspect_ai.slim_sample(s)
    assert set(slim) <= set(inspect_ai.SAMPLE_FIELDS) and "metadata" not in slim and "messages" not in slim
    assert inspect_ai.question_of(slim["input"]) == inspect_ai.question_of(s["input"])
    assert slim["scores"]["choice"]["value"] == s["scores"]["choice"]["value"]


def test_pytest_audit_of_a_zip_bomb_is_a_usage_error_exit_4(pytester, tmp_path):
    header, samples = _real_eval()
    log = write_zip(tmp_path / "alias" / "run.eval", _members(header, samples), aliases=100)
    r = pytester.runpytest(f"--audit={log.parent}", "--audit-format", "inspect", "-p", "no:cacheprovider", "-q")
    assert r.ret == 4
    assert "twice" in r.stderr.str() + r.stdout.str() and "INTERNALERROR" not in r.stderr.str() + r.stdout.str()


def test_helm_json_of_empty_objects_is_refused_before_it_is_decoded(tmp_path):
    """C13: ``[{},{},...]`` decodes to ~24 bytes of objects per byte; over MAX_JSON_VALUES values the
    file is refused from a count of its bytes (32 million here, from 48 MB)."""
    from leaderboard_audit.importers._files import MAX_JSON_VALUES

    helm = tmp_path / "helm"
    shutil.copytree(HELM, helm)
    f = sorted(helm.rglob("per_instance_stats.json"))[0]
    n = MAX_JSON_VALUES + 10
    f.write_bytes(b"[" + b"{}," * n + b"{}]")
    with pytest.raises(RecordsError) as err:
        load(helm, "helm")
    assert f"{f}: holds up to {2 * n + 2:,} JSON values (limit {MAX_JSON_VALUES:,})" in str(err.value)


LIGHTEVAL = paths.DATA / "lighteval" / "runs" / "question"


def _lighteval_bomb(tmp_path: Path, rows: int, query_bytes: int) -> tuple[Path, Path]:
    """The real details file's first row repeated ``rows`` times with a long query: dictionary
    encoding and zstd keep it small on disk (C02)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    runs = tmp_path / "runs"
    shutil.copytree(LIGHTEVAL, runs)
    f = sorted(runs.rglob("details_*.parquet"))[0]
    t = pq.read_table(f)
    row = t.slice(0, 1).to_pylist()[0]
    row["doc"]["query"] = "Q" * query_bytes
    one = pa.Table.from_pylist([row], schema=t.schema)
    with pq.ParquetWriter(f, t.schema, compression="zstd", use_dictionary=True) as w:
        for _ in range(rows // 1000):
            w.write_table(one.take(pa.array([0] * 1000)))
    return runs, f


def test_lighteval_details_whose_text_decodes_past_the_bound_are_refused_unread(tmp_path):
    """9,000 rows of a 64 KiB query: ~600 MB of text from a file of tens of KB. d0b4150 read it
    whole (the review's 214 KB file took 4.2 GB) and refused it for duplicate ids afterwards."""
    from leaderboard_audit.importers import lighteval

    runs, f = _lighteval_bomb(tmp_path, 9000, 2**16)
    assert f.stat().st_size < 200_000
    with pytest.raises(RecordsError) as err:
        load(runs, "lighteval")
    assert f"{f}: its text decodes to over {lighteval.MAX_DETAILS_TEXT_BYTES:,} bytes" in str(err.value)


def test_lighteval_row_and_value_counts_are_checked_from_the_footer(tmp_path, monkeypatch):
    from leaderboard_audit.importers import lighteval

    runs, f = _lighteval_bomb(tmp_path, 2000, 10)
    monkeypatch.setattr(lighteval, "MAX_DETAILS_ROWS", 1999)
    with pytest.raises(RecordsError, match=r"2,000 rows \(limit 1,999\)"):
        load(runs, "lighteval")
    monkeypatch.setattr(lighteval, "MAX_DETAILS_ROWS", 10**6)
    monkeypatch.setattr(lighteval, "MAX_DETAILS_VALUES", 10_000)
    with pytest.raises(RecordsError, match=r"values in the columns read \(limit 10,000\)"):
        load(runs, "lighteval")


def test_lighteval_rows_hold_only_the_fields_the_import_reads():
    from leaderboard_audit.importers.lighteval import read_rows
    from leaderboard_audit.records.errors import ProblemLog

    f = sorted(LIGHTEVAL.rglob("details_*.parquet"))[0]
    rows = read_rows(f, ProblemLog())
    assert rows and set(rows[0]["doc"]) == {"id", "query", "choices", "gold_index", "specific", "sampling_methods"}
    assert "input_tokens" not in rows[0]["model_response"] and "logprobs" in rows[0]["model_response"]
