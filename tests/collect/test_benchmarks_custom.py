"""Any benchmark: a local Parquet with a field mapping in the spec, collected with the test engine and audited."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from leaderboard_audit.collect.benchmarks import mapped_item_fn
from leaderboard_audit.collect.cli import main as collect_main
from leaderboard_audit.collect.run import collect
from leaderboard_audit.records import load_records


def _parquet(path: Path, n: int = 30) -> Path:
    rows = {
        "uid": [f"u{i}" for i in range(n)],
        "topic": ["geo" if i % 2 else "bio" for i in range(n)],
        "prompt": [f"Which is item {i}?" for i in range(n)],
        "opts": [[f"x{i}", f"y{i}", f"z{i}"] + ([] if i == 3 else [f"w{i}"]) for i in range(n)],
        "label": ["ABCD"[i % 4] for i in range(n)],
    }
    pq.write_table(pa.table(rows), path)
    return path


def _spec(tmp: Path, extra: str = "") -> Path:
    _parquet(tmp / "mine.parquet")
    p = tmp / "spec.toml"
    p.write_text(f"""output = "records"
engine = "fake"
n_items = 12
chunk_items = 5
benchmarks = ["mine"]
{extra}
[benchmark_sources.mine]
files = "mine.parquet"
question = "prompt"
choices = "opts"
answer = "label"
id = "uid"
subject = "topic"

[[models]]
name = "alpha"
path = "fake-alpha"

[[models]]
name = "beta"
path = "fake-beta"
""")
    return p


def test_custom_parquet_benchmark_is_collected_and_audited(tmp_path, pytester):
    root = collect(_spec(tmp_path), progress=False)
    rec = load_records(root)
    assert list(rec.models) == ["alpha", "beta"] and len(rec.items) == 12 and len(rec.grid) == 26
    ids = list(rec.items.item_id)
    assert all(i.startswith(("mine/geo/u", "mine/bio/u")) for i in ids)
    assert "mine/geo/u3" not in ids  # three options: skipped, as the paper skips them
    line = json.loads((root / "mine" / "alpha.jsonl").read_text().splitlines()[0])
    uid = int(line["item_id"].rsplit("u", 1)[1])
    assert line["gold"] == uid % 4 and line["options"][0] == f"x{uid}"
    src = json.loads((root / "grid.json").read_text())["collector"]["benchmarks"]["mine"]["source"]
    assert src["files"] == ["mine.parquet"] and len(src["sha256"]["mine.parquet"]) == 64
    r = pytester.runpytest("--audit", str(root), "-p", "no:cacheprovider", "-q")
    assert r.ret in (0, 1), r.stdout.str()
    assert "mine" in r.stdout.str()


def test_editing_the_data_file_recollects(tmp_path):
    spec = _spec(tmp_path)
    root = collect(spec, progress=False)
    before = (root / "mine" / "alpha.jsonl").read_bytes()
    t = pq.read_table(tmp_path / "mine.parquet").to_pylist()
    for row in t:
        row["prompt"] = row["prompt"].upper()
    pq.write_table(pa.Table.from_pylist(t), tmp_path / "mine.parquet")
    collect(spec, progress=False)
    after = (root / "mine" / "alpha.jsonl").read_bytes()
    assert after != before and b"WHICH IS ITEM" in after


@pytest.mark.parametrize("answer,gold", [(2, 2), ("C", 2), ("c", 2), ("z", 2), ("3", 3)])
def test_answer_forms(answer, gold):
    fn = mapped_item_fn("b", {"question": "q", "choices": ["o.a", "o.b", "o.c", "o.d"], "answer": "a"})
    it = fn(0, {"q": "Q?", "o": {"a": "w", "b": "x", "c": "z", "d": "y"}, "a": answer})
    assert it is not None and it.gold == gold and it.options == ("w", "x", "z", "y") and it.item_id == "b/0"


@pytest.mark.parametrize(
    "table,msg",
    [
        ('[benchmark_sources.pooled]\nfiles = "m.parquet"\nquestion = "q"\nchoices = "c"\nanswer = "a"\n', "reserved"),
        ('[benchmark_sources.mine2]\nfiles = "m.parquet"\nquestion = "q"\nchoices = "c"\n', "needs 'answer'"),
        (
            '[benchmark_sources.mine2]\nfiles = "m.parquet"\nquestion = "q"\nchoices = "c"\nanswer = "a"\nfoo = 1\n',
            "unknown key(s) 'foo'",
        ),
    ],
)
def test_bad_mapping_is_one_error(tmp_path, capsys, table, msg):
    p = _spec(tmp_path)
    p.write_text(p.read_text() + "\n" + table)
    assert collect_main([str(p)]) == 4
    err = capsys.readouterr().err
    assert msg in err and "Traceback" not in err and not (tmp_path / "records").exists()


def test_missing_field_in_the_rows(tmp_path, capsys):
    p = _spec(tmp_path)
    p.write_text(p.read_text().replace('question = "prompt"', 'question = "stem"'))
    assert collect_main([str(p)]) == 4
    err = capsys.readouterr().err
    assert "mine.parquet" in err and "field 'stem' is not in the row" in err
