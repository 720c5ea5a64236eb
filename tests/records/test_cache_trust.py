"""The load cache serves only what its source says now, owns only its own files, and trusts
only entries it signed (issue 25: B04, B08, B14, B36)."""

from __future__ import annotations

import dataclasses
import json
import shutil
import tempfile
import warnings
from pathlib import Path

import pytest

from leaderboard_audit.records import load_records
from leaderboard_audit.records.cache import clear_cache, default_max_bytes, load_cached, prune
from leaderboard_audit.records.fingerprint import sha256_of, source_files
from helpers.paths import REPO

pytest.importorskip("pyarrow")

RELEASE = REPO / "fixtures" / "release" / "records"
TINY = REPO / "fixtures" / "tiny"


def _load(path: Path, cache: Path | str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_cached(path, cache_dir=cache)


def _rewrite(f: Path, edit) -> None:
    rows = [json.loads(line) for line in f.read_text().splitlines()]
    for o in rows:
        edit(o)
    f.write_text("".join(json.dumps(o) + "\n" for o in rows))


# ------------------------------------------------------------------ B04: one fingerprint of what is read


def test_flat_release_fingerprint_covers_its_files_and_legend(tmp_path):
    empty = tempfile.mkdtemp(dir=tmp_path)
    assert sha256_of(RELEASE) != sha256_of(empty)
    names = {f.name for f in source_files(RELEASE)}
    assert "legend.json" in names and "arc_dune-1b.jsonl" in names


def test_an_edited_flat_file_is_not_served_from_the_cache(tmp_path):
    rel = tmp_path / "rel"
    shutil.copytree(RELEASE, rel)
    cache = tmp_path / "cache"
    before = _load(rel, cache)
    for f in rel.glob("*_dune-1b.jsonl"):
        _rewrite(f, lambda o: o.update(bits={k: 1 for k in o["bits"]}))
    after = _load(rel, cache)
    direct = _load(rel, "off")
    assert after.equals(direct) and not after.equals(before)
    assert direct.correct[direct.models.index("dune-1b")].all()


def test_two_projects_with_the_same_relative_path_do_not_share_an_entry(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    for name in ("a", "b"):
        shutil.copytree(RELEASE, tmp_path / name / "records")
    for f in (tmp_path / "b" / "records").glob("*_dune-1b.jsonl"):
        f.unlink()
    monkeypatch.chdir(tmp_path / "a")
    assert "dune-1b" in _load(Path("records"), cache).models
    monkeypatch.chdir(tmp_path / "b")
    assert "dune-1b" not in _load(Path("records"), cache).models


@pytest.mark.parametrize("where", ["dir", "table"])
def test_a_changed_legend_not_named_grid_json_is_not_served_from_the_cache(tmp_path, where):
    from leaderboard_audit.records.table import write_table

    lg = tmp_path / "lg"
    shutil.copytree(TINY, lg)
    grid = json.loads((lg / "grid.json").read_text())
    (lg / "grid.json").unlink()
    legend = {"configs": {c["key"]: c["permutation"] for c in grid["configs"]}, "reference": "gen|letter_plain|p0"}
    if where == "table":
        t = write_table(load_records(TINY), tmp_path / "t" / "records.csv")
        (t.parent / "grid.json").unlink()
        (t.parent / "legend.json").write_text(json.dumps(legend))
        src = t
    else:
        (lg / "legend.json").write_text(json.dumps(legend))
        src = lg
    cache = tmp_path / "cache"
    assert _load(src, cache).grid.reference == "gen|letter_plain|p0"
    target = src.parent / "legend.json" if where == "table" else src / "legend.json"
    target.write_text(json.dumps(dict(legend, reference="ll|cloze_plain")))
    assert _load(src, cache).grid.reference == "ll|cloze_plain"


# ------------------------------------------------------------------ B08: the cache owns only its own files


def _pack(dest: Path) -> Path:
    from leaderboard_audit.records.packed import write_packed

    return write_packed(load_records(TINY), dest)


def test_clear_leaves_a_folder_that_is_not_a_cache_alone(tmp_path, capsys):
    from leaderboard_audit.cli.pack import cache_main

    data = tmp_path / "data"
    data.mkdir()
    mine = [_pack(data / "leaderboard-2025.arrow"), _pack(data / "leaderboard-2026.arrow")]
    (data / "notes.txt").write_text("notes")
    assert cache_main(["--clear", "--dir", str(data)]) == 0
    assert "not a leaderboard-audit cache" in capsys.readouterr().out
    assert clear_cache(data) == 0
    assert all(f.is_file() for f in mine) and (data / "notes.txt").is_file()


def test_prune_and_clear_delete_only_the_cache_s_own_entries(tmp_path):
    cache = tmp_path / "data2"
    cache.mkdir()
    old = _pack(cache / "old-release.arrow")
    other = cache / ("0" * 40 + ".entry.bak")
    other.write_text("mine")
    _load(TINY, cache)
    assert len(list(cache.glob("*.entry"))) == 1
    prune(cache, 0)
    assert old.is_file() and other.is_file() and not list(cache.glob("*.entry"))
    _load(TINY, cache)
    assert clear_cache(cache) == 1
    assert old.is_file() and other.is_file()


# ------------------------------------------------------------------ B14: a re-checksummed entry is not served


def test_a_tampered_entry_with_a_recomputed_checksum_is_not_served(tmp_path):
    from leaderboard_audit.records.cache_entry import entry_bytes, read_entry

    cache = tmp_path / "cache"
    honest = _load(TINY, cache)
    (e,) = cache.glob("*.entry")
    rec, meta = read_entry(e)
    c = rec.correct.copy()
    c[rec.models.index("gamma")] = True
    e.write_bytes(entry_bytes(dataclasses.replace(rec, correct=c), extra_meta={"cache": meta["cache"]}))
    e.write_bytes(  # even with the old signature copied over: it signs the old checksum
        entry_bytes(
            dataclasses.replace(rec, correct=c), extra_meta={"cache": meta["cache"]}, sign=lambda _: meta["mac"]
        )
    )
    again = _load(TINY, cache)
    assert again.equals(honest) and not again.correct[again.models.index("gamma")].all()


def test_a_cache_whose_marker_is_not_private_is_not_used(tmp_path, monkeypatch):
    from leaderboard_audit.records.cache_owner import MARKER

    cache = tmp_path / "cache"
    _load(TINY, cache)
    (cache / MARKER).chmod(0o644)
    calls = []
    real = load_records
    monkeypatch.setattr("leaderboard_audit.records.load_records", lambda *a, **k: calls.append(a) or real(*a, **k))
    _load(TINY, cache)
    assert calls  # loaded directly, not served


# ------------------------------------------------------------------ B36: MAX_MB=inf


@pytest.mark.parametrize(("value", "unbounded"), [("inf", True), ("1e400", True), ("nan", False), ("abc", False)])
def test_max_mb_inf_is_unbounded_and_nonsense_is_the_default(monkeypatch, value, unbounded):
    import sys

    monkeypatch.setenv("LEADERBOARD_AUDIT_CACHE_MAX_MB", value)
    assert (default_max_bytes() == sys.maxsize) is unbounded
    if not unbounded:
        assert default_max_bytes() == 2048 * 1024 * 1024
