"""HELM importer on the hand-made suite in tests/data/helm (HELM's file schemas)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from leaderboard_audit.importers import load
from leaderboard_audit.importers.cli import main as import_main
from leaderboard_audit.importers.helm import parse_run_name
from leaderboard_audit.records import PRED_UNPARSEABLE, RecordsError, load_records
from helpers.paths import DATA

SUITE = DATA / "helm" / "benchmark_output" / "runs" / "v1"
KEYS = ("original|t0", "typos|t0", "lowercase|t0", "original|t1", "typos|t1", "lowercase|t1")


def run_dirs() -> list[Path]:
    return sorted(d for d in SUITE.iterdir() if d.is_dir())


def stats_bits(d: Path) -> dict[tuple[str, str, int], int]:
    out = {}
    for e in json.loads((d / "per_instance_stats.json").read_text()):
        pert = (e.get("perturbation") or {}).get("name", "original")
        (em,) = [s["mean"] for s in e["stats"] if s["name"]["name"] == "exact_match"]
        out[(e["instance_id"], pert, e["train_trial_index"])] = int(em)
    return out


def test_suite_imports_with_perturbations_and_trials_as_configs():
    rec = load(SUITE, "helm")
    assert rec.models == ("eleutherai/pythia-1b-v0", "openai/gpt2")
    assert rec.benchmarks == ("mmlu",)
    assert rec.grid.keys == KEYS
    assert rec.grid.reference == "original|t0"
    assert rec.shape == (2, 4, 6)
    assert list(rec.items.item_id) == [
        "subject=anatomy/id12",
        "subject=anatomy/id27",
        "subject=anatomy/id31",
        "subject=anatomy/id44",
    ]
    for d in run_dirs():
        spec = json.loads((d / "run_spec.json").read_text())
        m = rec.models.index(spec["adapter_spec"]["model"])
        for (iid, pert, trial), bit in stats_bits(d).items():
            (i,) = np.flatnonzero(rec.items.item_id == f"subject=anatomy/{iid}")
            assert rec.correct[m, i, rec.grid.index(f"{pert}|t{trial}")] == bit


def test_gold_options_question_from_the_original_instance_and_predictions():
    rec = load(SUITE, "helm")
    assert rec.items.gold == [1, 3, 3, 2]
    assert rec.items.options[0] == ["Abdominal", "Cranial", "Pleural", "Spinal"]
    assert rec.items.question[0].startswith("Which of the following is the body cavity")
    m = rec.models.index("eleutherai/pythia-1b-v0")
    i = list(rec.items.item_id).index("subject=anatomy/id27")
    assert rec.pred[m, i, rec.grid.index("lowercase|t1")] == PRED_UNPARSEABLE  # answered " The"
    # wherever the prediction parses, correct == (pred == gold)
    ok = rec.pred >= 0
    gold = np.array(rec.items.gold)[None, :, None]
    assert np.array_equal(rec.correct[ok], (rec.pred == gold)[ok])


def test_legend_discloses_adapter_and_perturbation():
    rec = load(SUITE, "helm")
    c = rec.grid.configs[rec.grid.index("typos|t0")]
    assert c.scoring == "gen" and c.template == "multiple_choice_joint"
    assert c.extra["perturbation"]["name"] == "typos"
    assert c.extra["train_trial_index"] == 0
    assert c.extra["adapter_spec"]["max_train_instances"] == 2
    assert c.extra["metric"] == "exact_match"
    assert "perturbation" not in rec.grid.configs[0].extra


def _copy(tmp_path: Path) -> Path:
    dst = tmp_path / "v1"
    shutil.copytree(SUITE, dst)
    return dst


def test_missing_instance_is_an_error_naming_the_run_or_intersection(tmp_path):
    suite = _copy(tmp_path)
    d = sorted(suite.iterdir())[0]
    pis = json.loads((d / "per_instance_stats.json").read_text())
    pis = [e for e in pis if not (e["instance_id"] == "id31" and (e.get("perturbation") or {}).get("name") == "typos")]
    (d / "per_instance_stats.json").write_text(json.dumps(pis))
    with pytest.raises(RecordsError) as err:
        load(suite, "helm")
    assert d.name in str(err.value) and "lacks 1 instance(s)" in str(err.value)
    rec = load(suite, "helm", intersect=True)
    assert rec.shape == (2, 3, 6) and rec.dropped == {"mmlu": 1}


def test_non_binary_stat_and_unknown_stat_are_errors():
    with pytest.raises(RecordsError, match="num_prompt_tokens = 120.0 is not 0/1"):
        load(SUITE, "helm", metric="num_prompt_tokens")
    with pytest.raises(RecordsError, match="no 'quasi_exact_match' stat"):
        load(SUITE, "helm", metric="quasi_exact_match")


def test_mapping_renames_model_and_benchmark(tmp_path):
    mp = {
        "runs": {
            "*model=openai_gpt2*": {"model": "gpt2", "benchmark": "mmlu_anatomy"},
            "*pythia*": {"model": "pythia-1b", "benchmark": "mmlu_anatomy"},
        }
    }
    rec = load(SUITE, "helm", mapping=mp)
    assert rec.models == ("gpt2", "pythia-1b") and rec.benchmarks == ("mmlu_anatomy",)


def test_cli_helm(tmp_path, capsys):
    out = tmp_path / "records"
    assert import_main(["helm", str(SUITE), "-o", str(out)]) == 0
    assert "2 models x 4 items x 6 configs" in capsys.readouterr().out
    rec = load_records(out)
    assert np.array_equal(rec.correct, load(SUITE, "helm").correct)
    assert rec.grid.reference == "original|t0"


def test_parse_run_name():
    assert parse_run_name("mmlu:subject=anatomy,method=multiple_choice_joint,model=openai_gpt2") == (
        "mmlu",
        {"subject": "anatomy", "method": "multiple_choice_joint", "model": "openai_gpt2"},
    )


def test_not_a_suite(tmp_path):
    with pytest.raises(RecordsError, match="run_spec.json"):
        load(tmp_path, "helm")
