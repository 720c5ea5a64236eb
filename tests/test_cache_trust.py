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
from leaderboard_audit.records.cache import clear_cache, default_max_bytes, load_cached, load_cached_entry, prune
from leaderboard_audit.records.fingerprint import sha256_of, source_files

pytest.importorskip("pyarrow")

REPO = Path(__file__).resolve().parent.parent
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
