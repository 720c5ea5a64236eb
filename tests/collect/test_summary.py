"""leaderboard_audit.collect.summary: accuracy and unparseable rate per model x config of a
collected records directory, on a hand-written directory and against the records reader on the
committed fixtures/real records."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from leaderboard_audit.collect.summary import markdown, summarize, classes_markdown
from leaderboard_audit.records import PRED_UNPARSEABLE, load_records
from helpers.paths import REPO

REAL = REPO / "fixtures" / "real"


def line(model: str | None, correct: dict, pred: dict | None) -> str:
    d = {"benchmark": "b", "item_id": "i", "gold": 0, "correct": correct}
    if model is not None:
        d["model"] = model
    if pred is not None:
        d["pred"] = pred
    return json.dumps(d) + "\n"


@pytest.fixture
def records_dir(tmp_path: Path) -> Path:
    (tmp_path / "arc").mkdir()
    (tmp_path / "mmlu").mkdir()
    # m/one: 3 items over two benchmarks; the generation config has one unparseable answer (pred null)
    (tmp_path / "arc" / "m__one.jsonl").write_text(
        line("m/one", {"ll|a": 1, "gen|b|x": 0}, {"ll|a": 0, "gen|b|x": None})
        + line("m/one", {"ll|a": 0, "gen|b|x": 1}, {"ll|a": 2, "gen|b|x": 1})
    )
    (tmp_path / "mmlu" / "m__one.jsonl").write_text(line("m/one", {"ll|a": 1, "gen|b|x": 1}, {"ll|a": 0, "gen|b|x": 0}))
    # no "model" field: the file name, with "__" read as "/"; no "pred" at all: nothing unparsed
    (tmp_path / "arc" / "org__two.jsonl").write_text(line(None, {"ll|a": 1, "gen|b|x": 0}, None))
    # skipped: the collector's work folders and hidden folders, and files not one level down
    for skipped in ("_raw", "_work", ".cache"):
        (tmp_path / skipped).mkdir()
        (tmp_path / skipped / "m__one.jsonl").write_text(line("ghost", {"ll|a": 0}, None))
    (tmp_path / "top.jsonl").write_text(line("ghost", {"ll|a": 0}, None))
    return tmp_path


def test_summarize_counts_per_model_and_config(records_dir):
    assert summarize(records_dir) == {
        "m/one": {
            "ll|a": {"n": 3, "correct": 2, "unparsed": 0, "accuracy": 2 / 3, "unparsed_rate": 0.0},
            "gen|b|x": {"n": 3, "correct": 2, "unparsed": 1, "accuracy": 2 / 3, "unparsed_rate": 1 / 3},
        },
        "org/two": {
            "ll|a": {"n": 1, "correct": 1, "unparsed": 0, "accuracy": 1.0, "unparsed_rate": 0.0},
            "gen|b|x": {"n": 1, "correct": 0, "unparsed": 0, "accuracy": 0.0, "unparsed_rate": 0.0},
        },
    }


def test_a_null_pred_of_a_likelihood_config_is_not_counted_unparsed(tmp_path):
    (tmp_path / "arc").mkdir()
    (tmp_path / "arc" / "m.jsonl").write_text(line("m", {"ll|a": 0, "gen|g": 0}, {"ll|a": None, "gen|g": None}))
    assert summarize(tmp_path)["m"] == {
        "ll|a": {"n": 1, "correct": 0, "unparsed": 0, "accuracy": 0.0, "unparsed_rate": 0.0},
        "gen|g": {"n": 1, "correct": 0, "unparsed": 1, "accuracy": 0.0, "unparsed_rate": 1.0},
    }


def test_markdown_table(records_dir):
    assert markdown(records_dir) == (
        "| config | m/one acc / unparsed | org/two acc / unparsed |\n"
        "|---|---|---|\n"
        "| `ll\\|a` | 0.67 / - | 1.00 / - |\n"
        "| `gen\\|b\\|x` | 0.67 / 0.33 | 0.00 / 0.00 |\n"
        "| all gen configs (unparsed rate) | 0.333 | 0.000 |"
    )


def test_markdown_of_an_empty_directory_and_of_likelihood_only_records(tmp_path):
    assert markdown(tmp_path) == "| config |  |\n|---|\n| all gen configs (unparsed rate) |  |"
    (tmp_path / "arc").mkdir()
    (tmp_path / "arc" / "m.jsonl").write_text(line("m", {"ll|a": 1}, None))
    assert markdown(tmp_path).splitlines()[-1] == "| all gen configs (unparsed rate) | - |"


def test_module_prints_the_table(records_dir):
    out = subprocess.run(
        [sys.executable, "-m", "leaderboard_audit.collect.summary", str(records_dir)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out == markdown(records_dir) + "\n\n" + classes_markdown(records_dir) + "\n"


def test_summary_agrees_with_the_records_reader_on_real_records():
    rec = load_records(REAL)
    summ = summarize(REAL)
    assert list(summ) == list(rec.models)
    for m, model in enumerate(rec.models):
        assert set(summ[model]) == set(rec.grid.keys)
        for k, key in enumerate(rec.grid.keys):
            s = summ[model][key]
            assert s["n"] == len(rec.items)
            assert s["accuracy"] == pytest.approx(rec.correct[m, :, k].mean())
            unparsed = (rec.pred[m, :, k] == PRED_UNPARSEABLE).mean() if key.startswith("gen|") else 0.0
            assert s["unparsed_rate"] == pytest.approx(unparsed)
    # the real records do hold unparseable answers, so the last assertion compared something
    assert any(s["unparsed"] for per in summ.values() for s in per.values())
    assert np.isfinite([s["accuracy"] for per in summ.values() for s in per.values()]).all()
