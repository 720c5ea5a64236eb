"""lighteval importer on the vendored details files of a real lighteval run (tests/data/lighteval, README there)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from leaderboard_audit.importers import load
from leaderboard_audit.importers.cli import main as import_main
from leaderboard_audit.importers.lighteval import FORMAT_INFO, benchmark_of, fewshot_of
from leaderboard_audit.records import RecordsError, load_records
from leaderboard_audit.records.fingerprint import source_files
from helpers import paths

DATA = paths.DATA / "lighteval"
RUNS = DATA / "runs"
MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"
VARIANTS = ("question", "bare")


def details_file(run: Path) -> Path:
    (f,) = sorted(run.glob("details/*/*/*/details_*.parquet"))
    return f


def rows(run: Path) -> list[dict]:
    """The details rows read independently of the importer (pyarrow only)."""
    return pq.read_table(details_file(run), columns=["doc", "metric", "model_response"]).to_pylist()


N = len(rows(RUNS / "question"))


def index_of(rec, item_id: str) -> int:
    (i,) = np.flatnonzero(rec.items.item_id == item_id)
    return int(i)


def test_bits_equal_lightevals_per_sample_acc_in_the_details_files():
    rec = load(RUNS, "lighteval", reference="question")
    assert rec.shape == (1, N, 2) and N == 20
    assert rec.models == (MODEL,)  # from the results file's config_general.model_name
    assert rec.benchmarks == ("arc_ci",)  # task "arc_ci|0" without the few-shot field
    assert set(rec.grid.keys) == set(VARIANTS)  # named by the run folders
    assert rec.grid.reference == "question"
    assert any("matched by specific:id" in n for n in rec.notes)
    for key in VARIANTS:
        k = rec.grid.index(key)
        got = rows(RUNS / key)
        assert len(got) == N
        for r in got:
            acc = r["metric"]["acc"]
            assert acc in (0, 1)
            i = index_of(rec, r["doc"]["specific"]["id"])  # the ARC question id
            assert bool(rec.correct[0, i, k]) == (acc == 1)
            lp = r["model_response"]["logprobs"][: len(r["doc"]["choices"])]
            assert rec.pred[0, i, k] == int(np.argmax(lp))
            assert rec.items.gold[i] == r["doc"]["gold_index"]
            assert rec.items.options[i] == [c.strip() for c in r["doc"]["choices"]]
        # lighteval's own aggregate equals the imported mean
        (res,) = (RUNS / key).glob("results/*/*/results_*.json")
        assert rec.correct[0, :, k].mean() == pytest.approx(json.loads(res.read_text())["results"]["arc_ci|0"]["acc"])
    assert rec.margin is not None and np.isfinite(rec.margin[0]).all()
    cfg = rec.grid.configs[rec.grid.index("question")]
    assert cfg.scoring == "ll" and cfg.extra["source"] == "lighteval" and cfg.extra["metric"] == "acc"
    assert cfg.extra["prompt_example"].startswith("Question: ") and cfg.extra["num_fewshot"] == 0
    assert cfg.extra["task"] == "arc_ci|0" and cfg.extra["run"] == "question"
    assert not rec.grid.configs[rec.grid.index("bare")].extra["prompt_example"].startswith("Question: ")


def test_mapping_model_benchmark_metric_alias_and_match_by_doc_id():
    mp = {
        "model": "smol",
        "benchmark": "arc",
        "reference": "ll|cloze_question",
        "runs": {
            "question": {"config": {"scoring": "ll", "template": "cloze_question"}},
            "bare": {"config": {"scoring": "ll", "template": "cloze_plain"}},
        },
    }
    rec = load(RUNS, "lighteval", mapping=mp, metric="loglikelihood_acc")
    assert rec.models == ("smol",) and rec.benchmarks == ("arc",)
    assert set(rec.grid.keys) == {"ll|cloze_question", "ll|cloze_plain"} and rec.grid.reference == "ll|cloze_question"
    direct = load(RUNS, "lighteval", reference="question")
    by_id = load(RUNS, "lighteval", reference="question", match_by="doc_id", model="m2", benchmark="b2")
    assert by_id.models == ("m2",) and by_id.benchmarks == ("b2",)
    # doc.id (lighteval's index in the split) and specific.id name the same documents; the
    # item ids are specific.id either way
    assert sorted(by_id.items.item_id) == sorted(direct.items.item_id)
    for i, iid in enumerate(by_id.items.item_id):
        assert (by_id.correct[0, i] == direct.correct[0, index_of(direct, iid)]).all()
    with pytest.raises(RecordsError, match="lacks 20 document"):  # the prompts differ by variant
        load(RUNS, "lighteval", match_by="query")
    # a run named in the mapping only: the other one is not imported, and a note says so
    one = load(RUNS, "lighteval", mapping={"runs": {"question": {}}})
    assert one.grid.keys == ("question",) and any("not in the mapping" in n and "bare" in n for n in one.notes)


def test_mapping_file_inside_src_is_used(tmp_path):
    src = tmp_path / "runs"
    shutil.copytree(RUNS, src)
    (src / "audit_mapping.json").write_text(json.dumps({"model": "from-file", "reference": "bare"}))
    rec = load(src, "lighteval")
    assert rec.models == ("from-file",) and rec.grid.reference == "bare"
    assert src / "audit_mapping.json" in source_files(src, "lighteval")
    assert details_file(src / "bare") in source_files(src, "lighteval")


def _write_rows(path: Path, new_rows: list[dict], like: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    schema = pq.read_schema(like)
    pq.write_table(pa.Table.from_pylist(new_rows, schema=schema), path)


def _copy_runs(tmp_path: Path) -> Path:
    src = tmp_path / "runs"
    shutil.copytree(RUNS, src)
    return src


def test_runs_covering_different_documents_error_or_intersection(tmp_path):
    src = _copy_runs(tmp_path)
    f = details_file(src / "bare")
    _write_rows(f, rows(src / "bare")[:15], f)
    with pytest.raises(RecordsError) as err:
        load(src, "lighteval", reference="question")
    msg = str(err.value)
    assert "lacks 5 document(s)" in msg and "intersect" in msg and "details_arc_ci|0_" in msg
    rec = load(src, "lighteval", reference="question", intersect=True)
    assert rec.shape == (1, 15, 2) and rec.dropped == {"arc_ci": 5}


def test_metric_missing_or_not_zero_one(tmp_path):
    with pytest.raises(RecordsError, match=r"no per-sample metric 'f1' \(metrics: \['acc'\]\)"):
        load(RUNS, "lighteval", metric="f1")
    src = _copy_runs(tmp_path)
    f = details_file(src / "question")
    bad = rows(src / "question")
    bad[3]["metric"] = {"acc": 2}
    _write_rows(f, bad, f)
    with pytest.raises(RecordsError) as err:
        load(src, "lighteval")
    assert "row 3" in str(err.value) and "'acc' is 2, not 0/1" in str(err.value) and str(f) in str(err.value)


def test_duplicate_documents_are_an_error(tmp_path):
    src = _copy_runs(tmp_path)
    f = details_file(src / "question")
    rs = rows(src / "question")
    _write_rows(f, rs + rs[:2], f)
    with pytest.raises(RecordsError, match=r"2 document\(s\) appear more than once by specific:id"):
        load(src, "lighteval")


def test_unreadable_or_foreign_parquet_and_not_a_file(tmp_path):
    src = _copy_runs(tmp_path)
    f = details_file(src / "question")
    f.write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(RecordsError, match="unreadable parquet"):
        load(src, "lighteval")
    pq.write_table(pa.table({"example": ["q"], "metrics": [{"acc": 1}]}), f)
    with pytest.raises(RecordsError, match=r"(?s)not a lighteval details file.*lighteval < 0.11"):
        load(src, "lighteval")
    f.unlink()
    f.mkdir()
    with pytest.raises(RecordsError, match="is a directory, not a file"):
        load(src, "lighteval")
    with pytest.raises(RecordsError, match="no details_\\*.parquet"):
        load(tmp_path / "runs" / "question" / "results", "lighteval")


def test_details_link_out_of_src_is_refused(tmp_path):
    src = _copy_runs(tmp_path)
    f = details_file(src / "question")
    outside = tmp_path / "elsewhere.parquet"
    shutil.move(f, outside)
    os.symlink(outside, f)
    with pytest.raises(RecordsError, match="outside the folder being imported"):
        load(src, "lighteval")
    shutil.move(outside, f.with_suffix(".tmp"))
    f.unlink()
    f.with_suffix(".tmp").rename(f)
    (res,) = (src / "question").glob("results/*/*/results_*.json")
    shutil.move(res, tmp_path / "results.json")
    os.symlink(tmp_path / "results.json", res)
    with pytest.raises(RecordsError, match="results_.*is a link to .*outside the folder being imported"):
        load(src, "lighteval")


def test_one_output_dir_with_two_tasks_and_several_timestamps(tmp_path):
    """SRC itself is one lighteval --output-dir: each task is a slice; the latest timestamp wins."""
    out = tmp_path / "out"
    q, b = details_file(RUNS / "question"), details_file(RUNS / "bare")
    ts = q.parent.name
    d = out / "details" / MODEL / ts
    d.mkdir(parents=True)
    shutil.copy(q, d / f"details_arc_q|0_{ts}.parquet")
    shutil.copy(b, d / f"details_arc_b|0_{ts}.parquet")
    old = out / "details" / MODEL / "2020-01-01T00-00-00.000000"
    old.mkdir()
    _write_rows(old / "details_arc_q|0_2020-01-01T00-00-00.000000.parquet", rows(RUNS / "question")[:3], q)
    with pytest.raises(RecordsError, match="configuration"):  # two benchmarks with different config keys
        load(out, "lighteval")
    rec = load(out, "lighteval", benchmark="arc", reference="arc_q:0")
    assert rec.models == (MODEL,)  # no results file: the folders under details/
    assert set(rec.grid.keys) == {"arc_q:0", "arc_b:0"} and rec.shape == (1, N, 2)
    assert any("2 details files for task 'arc_q|0'" in n and "2020-01-01" in n for n in rec.notes)
    mp = {"benchmark": "arc", "tasks": {"arc_q|0": {"config": "q"}, "arc_b|0": {"config": "b"}}}
    assert set(load(out, "lighteval", mapping=mp).grid.keys) == {"q", "b"}


def test_task_names_lose_their_decorations():
    assert benchmark_of("arc_ci|0") == "arc_ci"
    assert benchmark_of("community|arc_ci|0") == "arc_ci"
    assert benchmark_of("lighteval|arc:challenge|25|0") == "arc:challenge"
    assert benchmark_of("leaderboard|mmlu:anatomy|5") == "mmlu:anatomy"
    assert benchmark_of("gsm8k") == "gsm8k"
    assert fewshot_of("lighteval|arc:challenge|25|0") == 25 and fewshot_of("arc_ci|0") == 0
    assert FORMAT_INFO["name"] == "lighteval" and "details_*.parquet" in FORMAT_INFO["patterns"]


def test_cli_round_trip(tmp_path, capsys):
    out = tmp_path / "records"
    rc = import_main(["lighteval", str(RUNS), "-o", str(out), "--metric", "acc", "--reference", "question"])
    assert rc == 0
    assert f"1 model x {N} items x 2 configs [arc_ci]" in capsys.readouterr().out
    rec = load_records(out)
    direct = load(RUNS, "lighteval", reference="question")
    assert np.array_equal(rec.correct, direct.correct) and rec.grid.keys == direct.grid.keys
    assert (out / "arc_ci" / "HuggingFaceTB__SmolLM2-135M-Instruct.jsonl").is_file()
    assert json.loads((out / "grid.json").read_text())["imported_from"] == "lighteval"
    rc = import_main(["lighteval", str(RUNS), "-o", str(tmp_path / "bad"), "--metric", "f1"])
    assert rc == 4 and "no per-sample metric 'f1'" in capsys.readouterr().err


def test_pytest_audit_format_lighteval(pytester, tmp_path):
    """pytest --audit SRC --audit-format lighteval on the vendored real details files."""
    src = _copy_runs(tmp_path)
    (src / "audit_mapping.json").write_text(json.dumps({"reference": "question", "benchmark": "arc"}))
    out = tmp_path / "r.json"
    r = pytester.runpytest(
        f"--audit={src}",  # one argument: pytest does not search the repo's ini from it (guard.py)
        "--audit-format",
        "lighteval",
        "--audit-metric",
        "acc",
        "--audit-report",
        str(out),
        "-p",
        "no:cacheprovider",
        "-q",
    )
    assert r.ret in (0, 1)
    rep = json.loads(out.read_text())
    assert sorted(rep["records"]["configs"]) == ["bare", "question"]
    assert rep["records"]["items"] == N and rep["records"]["benchmarks"] == ["arc"]
    ids = {v["id"] for v in rep["scopes"]["arc"]["verdicts"]}
    assert f"band[arc-{MODEL}]" in ids


@pytest.mark.parametrize(
    "row, message",
    [
        ({"doc": "not a struct", "metric": {"acc": 1}}, "row 0: doc.id is None, not a string or integer"),
        ({"doc": {"id": 1.5}, "metric": {"acc": 1}}, "row 0: doc.id is 1.5"),
        ({"doc": {"id": "7"}, "metric": {"acc": "yes"}}, "row 0 (doc '7'): metric 'acc' is 'yes', not 0/1"),
        ({"doc": {"id": "7"}, "metric": {"f1": 0.5}}, "none of the default 0/1 metrics"),
    ],
)
def test_rows_of_the_wrong_shape_are_named(tmp_path, row, message):
    f = tmp_path / "run" / "details" / "m" / "2026-01-01T00-00-00.0" / "details_t|0_2026-01-01T00-00-00.0.parquet"
    f.parent.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist([row]), f)
    with pytest.raises(RecordsError) as err:
        load(tmp_path, "lighteval")
    assert message in str(err.value) and str(f) in str(err.value)


def test_hostile_logprobs_and_choices_give_no_prediction_not_a_crash(tmp_path):
    r = rows(RUNS / "question")[0]
    r["model_response"]["logprobs"] = [float("nan"), 1.0, 2.0, 3.0]
    d = tmp_path / "run" / "details" / "m" / "2026-01-01T00-00-00.0"
    _write_rows(d / "details_t|0_2026-01-01T00-00-00.0.parquet", [r], details_file(RUNS / "question"))
    rec = load(tmp_path, "lighteval")
    assert rec.shape == (1, 1, 1) and rec.models == ("m",)
