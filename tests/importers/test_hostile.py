"""Importers on hostile input: a RecordsError naming the file, never a crash (issue 11 items 18, 19; fuzz).

Self-contained: a synthetic lm-eval run built here and the HELM suite in tests/data/helm.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leaderboard_audit.importers import load
from leaderboard_audit.records import RecordsError, write_records
from helpers.paths import DATA

HELM = DATA / "helm" / "benchmark_output" / "runs" / "v1"
DEEP = 100_000
SAMPLES = "samples_arc_2024-01-01T00-00-00.jsonl"


def sample(i: int, bit: int) -> dict:
    """One lm-eval multiple-choice sample as the harness logs it (values as strings)."""
    opts = ["alpha", "beta", "gamma", "delta"]
    lls = [["-2.5", "False"], ["-1.0", "True"], ["-3.0", "False"], ["-4.0", "False"]]
    if not bit:
        lls[0][0] = "-0.5"
    return {
        "doc_id": i,
        "doc": {"id": f"q{i}", "question": f"Question {i}?", "choices": {"text": opts}},
        "target": 1,
        "arguments": {f"gen_args_{j}": {"arg_0": f"Question {i}?", "arg_1": f" {o}"} for j, o in enumerate(opts)},
        "resps": [[x] for x in lls],
        "filtered_resps": lls,
        "filter": "none",
        "doc_hash": f"h{i}",
        "acc": float(bit),
        "metrics": ["acc"],
    }


def lmeval_runs(root: Path, lines: dict[str, list[str]] | None = None) -> Path:
    for cfg in ("cfg-a", "cfg-b"):
        d = root / "runs" / cfg
        d.mkdir(parents=True, exist_ok=True)
        body = (lines or {}).get(cfg) or [json.dumps(sample(i, (i + len(cfg)) % 2)) for i in range(4)]
        (d / SAMPLES).write_text("".join(x + "\n" for x in body))
    return root / "runs"


def test_synthetic_run_imports(tmp_path):
    rec = load(lmeval_runs(tmp_path), "lm-eval", model="m", benchmark="arc")
    assert rec.shape == (1, 4, 2) and rec.pred is not None


def test_deeply_nested_samples_line_is_a_records_error(tmp_path):
    bad = "[" * DEEP + "]" * DEEP
    good = [json.dumps(sample(i, 1)) for i in range(4)]
    runs = lmeval_runs(tmp_path, {"cfg-a": good[:2] + [bad] + good[2:]})
    with pytest.raises(RecordsError) as err:
        load(runs, "lm-eval", model="m")
    assert f"{SAMPLES}:3: unreadable JSON (nested too deeply)" in str(err.value)


@pytest.mark.parametrize("field", ["acc", "doc_id", "doc", "target", "filtered_resps", "arguments"])
def test_deep_but_parseable_values_are_records_errors_or_ignored(tmp_path, field):
    depth = sys.getrecursionlimit() - 60  # decodes, but repr()/json.dumps of it would recurse too deep
    deep = json.loads("[" * depth + "]" * depth)
    rows = [sample(i, 1) for i in range(4)]
    rows[1][field] = deep
    runs = lmeval_runs(tmp_path, {"cfg-a": [json.dumps(r) for r in rows]})
    try:
        rec = load(runs, "lm-eval", model="m", benchmark="arc")
    except RecordsError as exc:
        assert SAMPLES in str(exc)
    else:
        write_records(rec, tmp_path / "out")


def test_deeply_nested_helm_file_is_a_records_error(tmp_path):
    suite = shutil.copytree(HELM, tmp_path / "v1")
    run = min(suite.iterdir())
    (run / "scenario_state.json").write_text('{"request_states": ' + "[" * DEEP + "]" * DEEP + "}")
    with pytest.raises(RecordsError, match=r"scenario_state.json: unreadable JSON \(nested too deeply\)"):
        load(suite, "helm")


def test_helm_per_instance_stats_that_is_a_directory(tmp_path):
    suite = shutil.copytree(HELM, tmp_path / "v1")
    run = min(suite.iterdir())
    (run / "per_instance_stats.json").unlink()
    (run / "per_instance_stats.json").mkdir()
    with pytest.raises(RecordsError, match="per_instance_stats.json: is a directory, not a file"):
        load(suite, "helm")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_inputs_never_hang(tmp_path):
    runs = lmeval_runs(tmp_path)
    extra = runs / "cfg-c"
    extra.mkdir()
    os.mkfifo(extra / SAMPLES)
    with pytest.raises(RecordsError, match="is not a regular file"):
        load(runs, "lm-eval", model="m")
    suite = shutil.copytree(HELM, tmp_path / "v1")
    run = min(suite.iterdir())
    (run / "run_spec.json").unlink()
    os.mkfifo(run / "run_spec.json")
    with pytest.raises(RecordsError, match="is not a regular file"):
        load(suite, "helm")


# ------------------------------------------------------------------ fuzz

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.sampled_from(["1.0", "0", "True", "[1, 2]", "{'a': 1}", "A", "(b)", "-inf", "nan"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def mutate(data, value, draw) -> object:
    """``value`` with one subtree (chosen by ``draw``) replaced by a drawn JSON value."""
    if isinstance(value, dict) and value and draw(st.integers(0, 3)):  # descend 3 times in 4
        key = draw(st.sampled_from(sorted(value)))
        return {**value, key: mutate(data, value[key], draw)}
    if isinstance(value, list) and value and draw(st.integers(0, 3)):
        i = draw(st.integers(0, len(value) - 1))
        return value[:i] + [mutate(data, value[i], draw)] + value[i + 1 :]
    return draw(json_values)


def loads_or_refuses(src: Path, fmt: str, out: Path, **opts) -> None:
    try:
        rec = load(src, fmt, **opts)
    except RecordsError:
        return
    try:
        write_records(rec, out)
    except RecordsError:
        pass


FUZZ = settings(
    max_examples=int(os.environ.get("IMPORT_FUZZ_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@FUZZ
@given(data=st.data(), which=st.integers(0, 3), raw=st.booleans())
def test_fuzz_lmeval_sample_lines(tmp_path_factory, data, which, raw):
    root = tmp_path_factory.mktemp("lm")
    rows = [sample(i, i % 2) for i in range(4)]
    lines = [json.dumps(r) for r in rows]
    if raw:  # byte-level damage
        b = bytearray(lines[which].encode())
        for pos in data.draw(st.lists(st.integers(0, len(b) - 1), min_size=1, max_size=4)):
            b[pos] = data.draw(st.integers(0, 255))
        lines[which] = b.decode("latin-1")
    else:  # structural damage: one subtree replaced
        lines[which] = json.dumps(mutate(data, rows[which], data.draw), allow_nan=True)
    runs = lmeval_runs(root, {"cfg-a": lines})
    loads_or_refuses(runs, "lm-eval", root / "out", model="m", benchmark="arc")


@FUZZ
@given(data=st.data(), which=st.sampled_from(["run_spec.json", "scenario_state.json", "per_instance_stats.json"]))
def test_fuzz_helm_json(tmp_path_factory, data, which):
    root = tmp_path_factory.mktemp("helm")
    suite = shutil.copytree(HELM, root / "v1")
    run = sorted(suite.iterdir())[data.draw(st.integers(0, 1))]
    obj = json.loads((run / which).read_text())
    (run / which).write_text(json.dumps(mutate(data, obj, data.draw), allow_nan=True))
    loads_or_refuses(suite, "helm", root / "out")


INSPECT_JSON = DATA / "inspect" / "json"


@pytest.mark.slow
@FUZZ
@given(data=st.data(), which=st.integers(0, 1))
def test_fuzz_inspect_json_log(tmp_path_factory, data, which):
    root = tmp_path_factory.mktemp("inspect")
    src = root / "logs"
    src.mkdir()
    logs = sorted(INSPECT_JSON.glob("*.json"))
    for f in logs:
        (src / f.name).write_bytes(f.read_bytes())
    obj = json.loads(logs[which].read_text())
    (src / logs[which].name).write_text(json.dumps(mutate(data, obj, data.draw), allow_nan=True))
    loads_or_refuses(src, "inspect", root / "out")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_inspect_fifo_log_never_hangs(tmp_path):
    os.mkfifo(tmp_path / "run.eval")
    with pytest.raises(RecordsError, match="is not a regular file"):
        load(tmp_path, "inspect")


def test_values_too_deep_to_print_or_record_are_handled():
    from leaderboard_audit.importers._values import json_safe, show

    deep: list = []
    for _ in range(100_000):  # built in a loop: deeper than repr() or json.dumps can go
        deep = [deep]
    assert show(deep) == "<a value nested too deeply to show>"
    assert not json_safe(deep) and json_safe({"a": [1, 2]})
    assert show("x" * 500).endswith("...") and len(show("x" * 500)) == 83


def test_a_legend_too_deep_to_write_is_a_records_error():
    from leaderboard_audit.importers._build import Unit, build_records
    from leaderboard_audit.records import Config

    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    unit = Unit("runs/a/samples.jsonl", "arc", "m", Config("k", "gen", "t", None, None, {"doc_to_text": deep}))
    unit.bits = {"q1": 1}
    with pytest.raises(RecordsError, match="nested too deeply to record"):
        build_records([unit], source="runs")


def test_samples_line_longer_than_the_bound_is_reported_and_ends_the_file(tmp_path, monkeypatch):
    """An over-long samples line is one problem naming its line, and the file is not read past it
    (issue 46, C14: reading a sparse file's one line to its end took minutes)."""
    from leaderboard_audit.importers import lmeval
    from leaderboard_audit.records.errors import ProblemLog

    monkeypatch.setattr(lmeval, "MAX_LINE_BYTES", 100)
    p = tmp_path / "samples.jsonl"
    p.write_text('{"doc_id": 0}\n' + '{"x": "' + "a" * 300 + '"}\n\n{"doc_id": 2}\n')
    log = ProblemLog()
    rows = list(lmeval._sample_lines(p, log))
    assert rows == [(1, {"doc_id": 0})]
    assert log.total == 1
    with pytest.raises(RecordsError) as err:
        log.raise_if_any()
    assert f"{p}:2: line longer than 100 bytes" in str(err.value)
