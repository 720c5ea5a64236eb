"""Fuzz: corrupted records either load correctly or raise RecordsError, never anything else."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from helpers.records import make_records

from leaderboard_audit.records import load_records, write_records
from leaderboard_audit.records.table import write_table
from helpers.fuzz import HOSTILE, check_loads_or_records_error, corruption

FUZZ = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture(scope="module")
def base_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("fuzz-base") / "records"
    write_records(make_records(benches=(("arc", 3), ("mmlu", 2))), root)
    return root


@pytest.fixture(scope="module")
def base_tables(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("fuzz-table")
    rec = make_records(benches=(("arc", 3), ("mmlu", 2)))
    write_table(rec, root / "t.csv")
    write_table(rec, root / "t.parquet")
    return root


@pytest.mark.slow
@FUZZ
@given(data=st.data(), intersect=st.booleans())
def test_corrupted_directory_loads_or_raises_records_error(base_dir, data, intersect):
    files = sorted(p.relative_to(base_dir) for p in base_dir.rglob("*") if p.is_file())
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "records"
        shutil.copytree(base_dir, root)
        for _ in range(data.draw(st.integers(1, 3), label="n_corruptions")):
            target = root / data.draw(st.sampled_from(files), label="file")
            target.write_bytes(data.draw(corruption(target.read_bytes()), label="corruption"))
        check_loads_or_records_error(root, intersect)


@FUZZ
@given(data=st.data(), intersect=st.booleans())
def test_structural_damage_loads_or_raises_records_error(base_dir, data, intersect):
    """Files removed, renamed, emptied, replaced by directories or links."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "records"
        shutil.copytree(base_dir, root)
        files = sorted(p for p in root.rglob("*") if p.is_file())
        target = data.draw(st.sampled_from(files), label="file")
        kind = data.draw(
            st.sampled_from(["remove", "rename", "empty", "dir", "link_out", "link_in", "new_bench", "stray"]),
            label="kind",
        )
        if kind == "remove":
            target.unlink()
        elif kind == "rename":
            target.rename(
                target.with_name(
                    data.draw(
                        st.sampled_from(["x.jsonl", "m-a.JSONL", "m-a.jsonl", ".hidden.jsonl", "a__b.jsonl"]),
                        label="name",
                    )
                )
            )
        elif kind == "empty":
            target.write_bytes(b"")
        elif kind == "dir":
            target.unlink()
            target.mkdir()
        elif kind == "link_out":
            target.unlink()
            target.symlink_to(Path(tmp) / "elsewhere")
        elif kind == "link_in":
            other = data.draw(st.sampled_from(files), label="other")
            if other != target:
                target.unlink()
                target.symlink_to(other)
        elif kind == "new_bench":
            (root / "extra").mkdir()
            shutil.copy(target, root / "extra" / target.name)
        else:
            (target.parent / "zz.jsonl").write_bytes(target.read_bytes()[:40])
        check_loads_or_records_error(root, intersect)


@pytest.mark.slow
@FUZZ
@given(data=st.data(), suffix=st.sampled_from(["csv", "parquet"]), intersect=st.booleans())
def test_corrupted_table_loads_or_raises_records_error(base_tables, data, suffix, intersect):
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(base_tables / f"t.{suffix}", Path(tmp) / f"t.{suffix}")
        shutil.copy(base_tables / "grid.json", Path(tmp) / "grid.json")
        target = Path(tmp) / data.draw(st.sampled_from([f"t.{suffix}", f"t.{suffix}", "grid.json"]), label="file")
        raw = target.read_bytes()
        if target.suffix == ".csv":
            kind = data.draw(st.sampled_from(["bytes", "cell"]), label="kind")
            if kind == "cell":
                rows = raw.decode().split("\n")
                i = data.draw(st.integers(0, len(rows) - 1), label="row")
                cells = rows[i].split(",")
                j = data.draw(st.integers(0, len(cells) - 1), label="col")
                cells[j] = data.draw(
                    st.sampled_from(["", "2", "null", "-1", "nan", "1e400", "x", '"', "m-a", "arc", "arc/item-0", "0"]),
                    label="value",
                )
                rows[i] = ",".join(cells)
                target.write_bytes("\n".join(rows).encode())
            else:
                target.write_bytes(data.draw(corruption(raw), label="corruption"))
        else:
            target.write_bytes(data.draw(corruption(raw), label="corruption"))
        check_loads_or_records_error(Path(tmp) / f"t.{suffix}", intersect)


FIELDS = [
    "correct.",
    "pred.",
    "margin.",
    "correct",
    "pred",
    "margin",
    "item_id",
    "gold",
    "model",
    "benchmark",
    "question",
    "options",
]


@pytest.mark.slow
@FUZZ
@given(data=st.data(), intersect=st.booleans())
def test_hostile_field_values_load_or_raise_records_error(base_dir, data, intersect):
    """Directed: one interpreted field of one line gets a hostile (but valid JSON) value."""
    files = sorted(p.relative_to(base_dir) for p in base_dir.rglob("*.jsonl"))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "records"
        shutil.copytree(base_dir, root)
        for _ in range(data.draw(st.integers(1, 2), label="n_edits")):
            target = root / data.draw(st.sampled_from(files), label="file")
            lines = target.read_text(encoding="utf-8").splitlines()
            i = data.draw(st.integers(0, len(lines) - 1), label="line")
            obj = json.loads(lines[i])
            field = data.draw(st.sampled_from(FIELDS), label="field")
            value = data.draw(HOSTILE, label="value")
            if field.endswith("."):
                sub = obj.get(field[:-1])
                if not isinstance(sub, dict) or not sub:
                    sub = obj.setdefault("correct", {})
                sub[data.draw(st.sampled_from(sorted(sub)), label="key")] = value
            else:
                obj[field] = value
            lines[i] = json.dumps(obj, allow_nan=True)
            target.write_text("\n".join(lines) + "\n", encoding="utf-8")
        check_loads_or_records_error(root, intersect)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(payload=st.binary(max_size=300))
def test_arbitrary_bytes_as_a_model_file(base_dir, payload):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "records"
        shutil.copytree(base_dir, root)
        (root / "arc" / "m-a.jsonl").write_bytes(payload)
        check_loads_or_records_error(root, False)


def test_unchanged_copy_loads_equal(base_dir):
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(base_dir, Path(tmp) / "r")
        rec = load_records(Path(tmp) / "r")
    assert rec.equals(load_records(base_dir))
    assert np.array_equal(rec.correct, make_records(benches=(("arc", 3), ("mmlu", 2))).correct)
