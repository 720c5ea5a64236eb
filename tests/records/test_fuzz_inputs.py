"""Fuzz (issue 11): release-layout records, legends, CSV headers and Parquet bytes either load
correctly or raise RecordsError; never another exception, never a hang. Bounded: derandomized,
at most 120 examples per test."""

from __future__ import annotations

import json
import shutil
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from helpers.fuzz import HOSTILE, check_loads_or_records_error, corruption
from helpers.records import make_records

from leaderboard_audit.records import RecordsError, load_records, write_records
from leaderboard_audit.records.table import write_table

FUZZ = settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def check(path: Path, intersect: bool = False) -> None:
    check_loads_or_records_error(path, intersect)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            rec = load_records(path, intersect=intersect)
        except RecordsError:
            return
    if rec.unparsed is not None:
        assert rec.unparsed.shape == rec.shape[:2] and rec.unparsed.min() >= -1
        assert rec.unparsed.max() <= rec.shape[2]
    if rec.answer_class is not None:
        assert rec.answer_class.shape == rec.shape


@pytest.fixture(scope="module")
def release_dir(tmp_path_factory) -> Path:
    """A flat release-style set: <benchmark>_<model>.jsonl with bits, a per-item margin,
    n_unparsed and answer_class, plus legend.json as key -> permutation."""
    src = tmp_path_factory.mktemp("fuzz-src") / "r"
    rec = make_records(benches=(("arc", 3), ("mmlu", 2)))
    write_records(rec, src)
    root = tmp_path_factory.mktemp("fuzz-release") / "records"
    root.mkdir()
    legend = {c.key: None if c.permutation is None else list(c.permutation) for c in rec.grid.configs}
    (root / "legend.json").write_text(json.dumps(legend))
    for f in sorted(src.glob("*/*.jsonl")):
        lines = []
        for i, raw in enumerate(f.read_text().splitlines()):
            obj = json.loads(raw)
            obj.pop("model")
            obj["bits"] = obj.pop("correct")
            obj.pop("margin", None)
            obj["margin"] = 0.1 * i
            obj["n_unparsed"] = i % 3
            obj["answer_class"] = {"gen|letter_plain|p0": ["letter", "refusal", "enumeration"][i % 3]}
            lines.append(json.dumps(obj))
        (root / f"{f.parent.name}_{f.stem}.jsonl").write_text("\n".join(lines) + "\n")
    return root


def test_release_fixture_loads(release_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rec = load_records(release_dir)
    assert rec.shape == (3, 5, 4) and rec.unparsed is not None and rec.answer_class is not None


@pytest.mark.slow
@FUZZ
@given(data=st.data(), intersect=st.booleans())
def test_corrupted_release_loads_or_raises_records_error(release_dir, data, intersect):
    files = sorted(p.name for p in release_dir.iterdir())
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "records"
        shutil.copytree(release_dir, root)
        for _ in range(data.draw(st.integers(1, 3), label="n_corruptions")):
            target = root / data.draw(st.sampled_from(files), label="file")
            target.write_bytes(data.draw(corruption(target.read_bytes()), label="corruption"))
        check(root, intersect)


RELEASE_FIELDS = [
    "bits.",
    "bits",
    "margin",
    "cloze_margin",
    "n_unparsed",
    "unparsed",
    "answer_class",
    "answer_class.",
    "benchmark",
    "model",
    "correct",
    "item_id",
]


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_hostile_release_field_values(release_dir, data):
    files = sorted(p.name for p in release_dir.glob("*.jsonl"))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "records"
        shutil.copytree(release_dir, root)
        target = root / data.draw(st.sampled_from(files), label="file")
        lines = target.read_text().splitlines()
        i = data.draw(st.integers(0, len(lines) - 1), label="line")
        obj = json.loads(lines[i])
        field = data.draw(st.sampled_from(RELEASE_FIELDS), label="field")
        value = data.draw(
            st.one_of(HOSTILE, st.sampled_from(["letter", "other", "pooled", "arc", "mmlu"])), label="value"
        )
        if field.endswith("."):
            sub = obj.setdefault(field[:-1], {})
            if not isinstance(sub, dict) or not sub:
                sub = obj["bits"]
            sub[data.draw(st.sampled_from(sorted(sub)), label="key")] = value
        else:
            obj[field] = value
        lines[i] = json.dumps(obj, allow_nan=True)
        target.write_text("\n".join(lines) + "\n")
        check(root)


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_hostile_legends(release_dir, data):
    """The legend file: renamed, reshaped (list, wrapped, grid.json) or given hostile values."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "records"
        shutil.copytree(release_dir, root)
        legend = json.loads((root / "legend.json").read_text())
        shape = data.draw(st.sampled_from(["map", "list", "wrapped", "grid"]), label="shape")
        keys = list(legend)
        key = data.draw(st.sampled_from(keys), label="key")
        value = data.draw(HOSTILE, label="value")
        if shape == "map":
            legend[key] = value
            obj = legend
        elif shape == "list":
            obj = [{"key": k, data.draw(st.sampled_from(["permutation", "perm", "key"])): v} for k, v in legend.items()]
            obj[keys.index(key)] = value if data.draw(st.booleans()) else {"key": value}
        elif shape == "wrapped":
            obj = {
                data.draw(st.sampled_from(["configs", "configurations", "legend"])): legend,
                "reference": data.draw(st.one_of(st.sampled_from(keys), HOSTILE), label="reference"),
            }
        else:
            obj = {
                "format": data.draw(st.sampled_from(["leaderboard-audit/records-v1", "x", None])),
                "reference": data.draw(st.sampled_from(keys + ["nope"])),
                "configs": [{"key": k, "permutation": v} for k, v in legend.items()],
            }
            obj["configs"][keys.index(key)][
                data.draw(st.sampled_from(["permutation", "scoring", "key", "template", "ordering"]))
            ] = value
        name = data.draw(st.sampled_from(["legend.json", "grid.json", "configs.json"]), label="name")
        (root / "legend.json").unlink()
        (root / name).write_text(json.dumps(obj, allow_nan=True))
        if data.draw(st.booleans(), label="second legend"):
            (root / "configurations.json").write_text(json.dumps(obj, allow_nan=True))
        check(root)


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_duplicate_keys_anywhere_in_a_line(release_dir, data):
    """A key written twice in any object of a line: always a RecordsError naming the key."""
    files = sorted(p.name for p in release_dir.glob("*.jsonl"))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "records"
        shutil.copytree(release_dir, root)
        target = root / data.draw(st.sampled_from(files), label="file")
        lines = target.read_text().splitlines()
        i = data.draw(st.integers(0, len(lines) - 1), label="line")
        obj = json.loads(lines[i])
        where = data.draw(st.sampled_from(["top", "bits", "answer_class"]), label="where")
        holder = obj if where == "top" else obj[where]
        key = data.draw(st.sampled_from(sorted(holder)), label="key")
        extra = json.dumps({key: data.draw(HOSTILE, label="value")}, allow_nan=True)[1:-1]
        if where == "top":
            text = json.dumps(obj, allow_nan=True)[:-1] + ", " + extra + "}"
        else:
            inner = json.dumps(holder, allow_nan=True)
            obj[where] = "@@"
            text = json.dumps(obj, allow_nan=True).replace('"@@"', inner[:-1] + ", " + extra + "}")
        lines[i] = text
        target.write_text("\n".join(lines) + "\n")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RecordsError, match="duplicate key"):
                load_records(root)


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("fuzz-tables")
    rec = make_records(benches=(("arc", 3), ("mmlu", 2)))
    write_table(rec, root / "t.csv")
    write_table(rec, root / "t.parquet")
    return root


@pytest.mark.slow
@FUZZ
@given(data=st.data(), intersect=st.booleans())
def test_parquet_bit_flips_and_overwrites(tables, data, intersect):
    raw = bytearray((tables / "t.parquet").read_bytes())
    for _ in range(data.draw(st.integers(1, 3), label="n")):
        kind = data.draw(st.sampled_from(["bit", "byte", "run", "truncate"]), label="kind")
        pos = data.draw(st.integers(0, len(raw) - 1), label="pos")
        if kind == "bit":
            raw[pos] ^= 1 << data.draw(st.integers(0, 7), label="bit")
        elif kind == "byte":
            raw[pos] = data.draw(st.integers(0, 255), label="value")
        elif kind == "run":
            run = data.draw(st.binary(min_size=1, max_size=16), label="run")
            raw[pos : pos + len(run)] = run
        else:
            del raw[pos:]
            if not raw:
                raw = bytearray(b"PAR1")
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(tables / "grid.json", Path(tmp) / "grid.json")
        (Path(tmp) / "t.parquet").write_bytes(bytes(raw))
        check(Path(tmp) / "t.parquet", intersect)


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_csv_header_mutations(tables, data):
    lines = (tables / "t.csv").read_text().split("\n")
    header = lines[0].split(",")
    kind = data.draw(st.sampled_from(["duplicate", "rename", "drop", "quote", "empty", "swap"]), label="kind")
    j = data.draw(st.integers(0, len(header) - 1), label="column")
    rows = lines[1:]
    if kind == "duplicate":
        header.append(header[j])
        rows = [r + "," + (r.split(",")[j] if r and j < len(r.split(",")) else "") if r else r for r in rows]
    elif kind == "rename":
        header[j] = data.draw(st.sampled_from(["model", "correct", "Correct", "correct.1", "", "x", '"a,b"']))
    elif kind == "drop":
        header.pop(j)
    elif kind == "quote":
        header[j] = '"' + header[j]
    elif kind == "empty":
        header = [""] * len(header)
    else:
        k = data.draw(st.integers(0, len(header) - 1), label="other")
        header[j], header[k] = header[k], header[j]
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(tables / "grid.json", Path(tmp) / "grid.json")
        (Path(tmp) / "t.csv").write_text(",".join(header) + "\n" + "\n".join(rows))
        check(Path(tmp) / "t.csv")


def test_csv_with_a_duplicated_column_is_always_refused(tables, tmp_path):
    lines = (tables / "t.csv").read_text().split("\n")
    header = lines[0].split(",")
    for name in ("model", "benchmark", "item_id", "config", "correct", "pred", "margin", "gold"):
        if name not in header:
            continue
        (tmp_path / "t.csv").write_text(
            lines[0] + "," + name + "\n" + "\n".join(r + ",0" if r else r for r in lines[1:])
        )
        shutil.copy(tables / "grid.json", tmp_path / "grid.json")
        with pytest.raises(RecordsError, match=f"column\\(s\\) \\['{name}'\\] appear more than once"):
            load_records(tmp_path / "t.csv")


def test_fuzz_inputs_are_small():
    """Keeps the fuzz bounded: the base inputs stay a few kB."""
    rec = make_records(benches=(("arc", 3), ("mmlu", 2)))
    assert rec.shape == (3, 5, 4) and np.prod(rec.shape) == 60
