"""The load cache and the fingerprint it is keyed by (issue 12; issue 11 item 3)."""

from __future__ import annotations

import json
import multiprocessing
import os
import warnings
from pathlib import Path

import pytest

from leaderboard_audit.records import InferredLegendWarning, RecordsError, load_records, write_records
from leaderboard_audit.records import cache as cache_mod
from leaderboard_audit.records.cache import cache_info, clear_cache, load_cached, load_cached_entry, prune
from leaderboard_audit.records.fingerprint import sha256_of, source_files
from helpers.paths import REPO

pytest.importorskip("pyarrow")

TINY = REPO / "fixtures" / "tiny"


@pytest.fixture
def src(tmp_path) -> Path:
    root = tmp_path / "records"
    write_records(load_records(TINY), root)
    return root


def entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.entry"))


def test_second_load_comes_from_the_cache_and_equals_a_direct_load(src, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    first, sha = load_cached_entry(src, cache_dir=cache)
    assert sha == sha256_of(src) and len(entries(cache)) == 1
    calls = []
    monkeypatch.setattr(
        "leaderboard_audit.records.load_records", lambda *a, **k: calls.append(a) or pytest.fail("re-parsed")
    )
    second = load_cached(src, cache_dir=cache)
    assert not calls
    monkeypatch.undo()
    direct = load_records(src)
    for rec in (first, second):
        assert rec.equals(direct) and rec.notes == direct.notes and rec.source == direct.source
        assert rec.grid == direct.grid
        assert not rec.correct.flags.writeable  # read-only like a direct load (metrics.per_model.derived)


def test_a_changed_source_is_reloaded(src, tmp_path):
    cache = tmp_path / "cache"
    before = load_cached(src, cache_dir=cache)
    f = src / "tiny" / "alpha.jsonl"
    lines = f.read_text().splitlines(keepends=True)
    first = json.loads(lines[0])
    key = next(iter(first["correct"]))
    first["correct"][key] = 1 - first["correct"][key]  # one bit flipped
    f.write_text(json.dumps(first) + "\n" + "".join(lines[1:]))
    after = load_cached(src, cache_dir=cache)
    assert after.equals(load_records(src)) and not after.equals(before)
    assert len(entries(cache)) == 2


def test_an_entry_is_never_trusted_without_its_fingerprint(src, tmp_path, monkeypatch):
    """A planted entry under the right name but built from other records is ignored."""
    cache = tmp_path / "cache"
    load_cached(src, cache_dir=cache)
    (entry,) = entries(cache)
    other = tmp_path / "other"
    write_records(load_records(REPO / "fixtures" / "demo"), other)
    load_cached(other, cache_dir=tmp_path / "c2")
    (foreign,) = entries(tmp_path / "c2")
    entry.write_bytes(foreign.read_bytes())  # a swapped entry: valid file, wrong source
    assert load_cached(src, cache_dir=cache).equals(load_records(src))
    entry.write_bytes(entry.read_bytes()[:100])  # a corrupt entry
    assert load_cached(src, cache_dir=cache).equals(load_records(src))


def test_load_options_are_part_of_the_key(src, tmp_path):
    cache = tmp_path / "cache"
    load_cached(src, cache_dir=cache)
    load_cached(src, cache_dir=cache, intersect=True)
    assert len(entries(cache)) == 2


def test_errors_are_the_direct_loads_and_are_not_cached(tmp_path):
    bad = tmp_path / "bad"
    (bad / "b").mkdir(parents=True)
    (bad / "b" / "m.jsonl").write_text("{not json\n")
    with pytest.raises(RecordsError, match="unreadable JSON"):
        load_cached(bad, cache_dir=tmp_path / "cache")
    assert not entries(tmp_path / "cache")


def test_inferred_legend_warns_on_a_hit_too(src, tmp_path):
    (src / "grid.json").unlink()
    for _ in range(2):
        with pytest.warns(InferredLegendWarning):
            rec = load_cached(src, cache_dir=tmp_path / "cache")
        assert rec.grid.inferred


def test_disabled_or_unwritable_cache_falls_back_to_a_direct_load(src, tmp_path, monkeypatch):
    monkeypatch.setenv("LEADERBOARD_AUDIT_CACHE", "off")
    assert cache_mod.default_cache_dir() is None
    assert load_cached(src).equals(load_records(src))
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert load_cached(src, cache_dir=blocker / "sub").equals(load_records(src))


def test_default_folder_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("LEADERBOARD_AUDIT_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_mod.default_cache_dir() == tmp_path / "leaderboard-audit" / "records"
    monkeypatch.setenv("LEADERBOARD_AUDIT_CACHE", str(tmp_path / "mine"))
    assert cache_mod.default_cache_dir() == tmp_path / "mine"


def test_size_bound_evicts_least_recently_used(tmp_path):
    cache = tmp_path / "cache"
    roots = []
    for j in range(3):
        root = tmp_path / f"r{j}"
        write_records(load_records(TINY), root)
        (root / "tiny" / "alpha.jsonl").write_text((root / "tiny" / "alpha.jsonl").read_text() + "\n" * (j + 1))
        roots.append(root)
        load_cached(root, cache_dir=cache)
        os.utime(entries(cache)[0], (1000 + j, 1000 + j)) if j == 0 else None
    size = max(f.stat().st_size for f in entries(cache))
    assert len(entries(cache)) == 3
    removed = prune(cache, 2 * size)
    assert len(removed) == 1 and len(entries(cache)) == 2
    assert cache_info(cache)[1] == 2 and clear_cache(cache) == 2 and not entries(cache)


def _worker(args):
    root, cache = args
    return load_cached(root, cache_dir=cache).correct.tobytes()


def test_parallel_loads_build_one_entry(src, tmp_path):
    cache = tmp_path / "cache"
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        outs = pool.map(_worker, [(str(src), str(cache))] * 4)
    assert len(set(outs)) == 1 and len(entries(cache)) == 1
    assert not list(cache.glob(".*.tmp"))


def test_cache_command(src, tmp_path, capsys):
    from leaderboard_audit.cli.main import main

    load_cached(src, cache_dir=tmp_path / "c")
    assert main(["cache", "--dir", str(tmp_path / "c")]) == 0
    out = capsys.readouterr().out
    assert "1 entry," in out and "entr(ies)" not in out
    assert main(["cache", "--dir", str(tmp_path / "c"), "--clear"]) == 0
    assert "removed 1" in capsys.readouterr().out


# ------------------------------------------------------------------ fingerprint (issue 11 item 3)


def test_fingerprint_hashes_only_the_files_the_reader_accepts(src, tmp_path):
    before = sha256_of(src)
    outside = tmp_path / "outside"
    outside.mkdir()
    huge = outside / "huge.bin"
    with open(huge, "wb") as fh:  # a sparse 3 GB file: costs nothing on disk
        fh.truncate(3 * 1024**3)
    (src / "stray.bin").symlink_to(huge)
    (src / "tiny" / "notes.txt").write_text("not records")
    (src / "tiny" / "big.jsonl.bak").symlink_to(huge)
    (src / "tiny" / "linked.jsonl").symlink_to(huge)  # a records name leading out: refused by the reader
    (src / "_cache").mkdir()
    (src / "_cache" / "x.jsonl").write_text("{}\n")
    (src / ".git").mkdir()
    (src / ".git" / "x.jsonl").write_text("{}\n")
    (src / "elsewhere").symlink_to(outside, target_is_directory=True)
    if hasattr(os, "mkfifo"):
        os.mkfifo(src / "tiny" / "pipe.jsonl")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        after = sha256_of(src)
    assert after == before
    names = [f.relative_to(src).as_posix() for f in source_files(src)]
    assert names == ["grid.json", "tiny/alpha.jsonl", "tiny/beta.jsonl", "tiny/gamma.jsonl"]


def test_fingerprint_changes_with_any_accepted_file(src):
    before = sha256_of(src)
    g = src / "grid.json"
    g.write_text(g.read_text() + " ")
    assert sha256_of(src) != before


def test_table_fingerprint_covers_its_legend(tmp_path):
    from leaderboard_audit.records.table import write_table

    t = write_table(load_records(TINY), tmp_path / "t.csv")
    before = sha256_of(t)
    g = tmp_path / "grid.json"
    g.write_text(g.read_text() + " ")
    assert sha256_of(t) != before


def test_importer_sources_hash_their_inputs_only(tmp_path):
    run = tmp_path / "runs" / "cfg"
    run.mkdir(parents=True)
    (run / "samples_arc_2024-01-01T00-00-00.jsonl").write_text("{}\n")
    (run / "results_2024.json").write_text("{}")
    (run / "model.safetensors").write_bytes(b"\0" * 1000)
    names = [f.name for f in source_files(tmp_path / "runs", "lm-eval")]
    assert names == ["results_2024.json", "samples_arc_2024-01-01T00-00-00.jsonl"]
    assert [f.name for f in source_files(tmp_path / "runs")] == names


def test_a_given_fingerprint_is_not_recomputed_and_must_match_the_entry(src, tmp_path, monkeypatch):
    """The xdist path: the controller hashes once, workers pass the fingerprint along."""
    cache = tmp_path / "cache"
    rec, sha = load_cached_entry(src, cache_dir=cache)
    monkeypatch.setattr(cache_mod, "sha256_of", lambda *a, **k: pytest.fail("hashed again"))
    back, same = load_cached_entry(src, cache_dir=cache, fingerprint=sha)
    assert same == sha and back.equals(rec)
    monkeypatch.undo()
    other, _ = load_cached_entry(src, cache_dir=cache, fingerprint="0" * 64)  # no entry for that content
    assert other.equals(rec) and len(entries(cache)) == 1  # loaded, and not stored


def test_cache_dir_false_or_off_disables_it(src, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("LEADERBOARD_AUDIT_CACHE", raising=False)
    for off in (False, "off"):
        assert load_cached(src, cache_dir=off).equals(load_records(src))
    assert not (tmp_path / "xdg").exists()
    load_cached(src)
    assert len(entries(tmp_path / "xdg" / "leaderboard-audit" / "records")) == 1
