"""lm-eval importer on the vendored sample logs in tests/data/lm-eval-samples (README there).

The SmolLM2 likelihood test also runs on the full logs in ../shared/lm-eval-samples when present."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from leaderboard_audit.importers import load
from leaderboard_audit.importers._values import deep_literal, literal, to_bit
from leaderboard_audit.importers.cli import main as import_main
from leaderboard_audit.records import PRED_UNPARSEABLE, RecordsError, load_records

from helpers.lmeval import SMOL, SMOL_LL, SMOL_NAME
from helpers import paths

DATA = paths.DATA / "lm-eval-samples"
SHARED = paths.SHARED / "lm-eval-samples"
# synthetic logs in metabench's layout (the real pythia-14m ones are CC BY-NC-SA: not vendored)
PYTHIA = DATA / "synthetic__metabench-format"
PYTHIA_MODEL = "synthetic/metabench-format"
# the full 200-document logs as extra coverage where this workspace has them
SMOL_ROOTS = [SMOL] + ([SHARED / "SmolLM2-135M-Instruct"] if (SHARED / "SmolLM2-135M-Instruct").is_dir() else [])


def samples(run_dir: Path) -> list[dict]:
    (f,) = sorted(run_dir.glob("samples_*.jsonl"))
    return [json.loads(line) for line in f.open()]


def n_docs(run_dir: Path) -> int:
    return len(samples(run_dir))


N_LL = n_docs(SMOL / "arc_challenge_local")  # 40 vendored (200 in the full logs)
N_GEN = n_docs(SMOL / "arc_challenge_local_gen")  # 20 vendored (100), a prefix of the LL documents


def bit_of(rec, item_id: str, key: str, model: int = 0) -> bool:
    (i,) = np.flatnonzero(rec.items.item_id == item_id)
    return bool(rec.correct[model, i, rec.grid.index(key)])


@pytest.mark.parametrize("root", SMOL_ROOTS, ids=lambda p: p.parents[1].name)
@pytest.mark.parametrize("metric", ["acc", "acc_norm"])
def test_smollm2_likelihood_bits_equal_harness_per_sample_metric(metric, root):
    n = n_docs(root / "arc_challenge_local")
    rec = load(root, "lm-eval", mapping=SMOL_LL, metric=metric)
    assert rec.shape == (1, n, 2)
    assert rec.models == (SMOL_NAME,)
    assert rec.grid.keys == ("ll|cloze_question", "ll|cloze_plain")
    assert rec.grid.reference == "ll|cloze_question"
    for run, key in (("arc_challenge_local", "ll|cloze_question"), ("arc_challenge_local_bare", "ll|cloze_plain")):
        rows = samples(root / run)
        assert len(rows) == n
        for s in rows:
            assert isinstance(s[metric], float)  # floats here, strings elsewhere
            assert bit_of(rec, s["doc"]["id"], key) == (s[metric] == 1.0)
        # the harness's aggregate equals the imported mean (the vendored slice keeps the results
        # file of the full run: compare only where the samples are the whole run)
        res = json.loads(next((root / run).glob("results_*.json")).read_text())
        task = next(iter(res["results"]))
        if res["results"][task]["sample_len"] == n:
            mean = rec.correct[0, :, rec.grid.index(key)].mean()
            assert mean == pytest.approx(res["results"][task][f"{metric},none"])
    # gold from target, predictions = argmax of the logged (string) log-likelihoods
    s = samples(root / "arc_challenge_local")[0]
    (i,) = np.flatnonzero(rec.items.item_id == s["doc"]["id"])
    assert rec.items.gold[i] == int(s["target"])
    lls = [float(x[0]) for x in s["filtered_resps"]]
    if metric == "acc":
        assert rec.pred[0, i, 0] == int(np.argmax(lls))
    assert rec.items.options[i] == s["doc"]["choices"]["text"]
    assert rec.margin is not None and np.isfinite(rec.margin[0, :, 0]).all()
    cfg = rec.grid.configs[0]
    assert cfg.extra["doc_to_text"] == "Question: {{question}}\nAnswer:"
    assert "task: arc_challenge_local" in cfg.extra["task_yaml"]
    assert cfg.extra["metric"] == metric


def test_smollm2_generation_exact_match_and_unparseable_predictions():
    mp = {
        "runs": {
            "arc_challenge_local_gen": {"config": "gen_plain"},
            "arc_challenge_local_gen_chat": {"config": "gen_chat"},
        },
        "benchmark": "arc",
        "model": SMOL_NAME,
    }
    rec = load(SMOL, "lm-eval", mapping=mp)  # no acc field -> exact_match
    assert rec.shape == (1, N_GEN, 2)
    assert rec.grid.configs[0].extra["metric"] == "exact_match"
    assert rec.grid.configs[1].extra["apply_chat_template"] is True
    assert rec.grid.configs[0].scoring == "gen"
    for run, key in (("arc_challenge_local_gen", "gen_plain"), ("arc_challenge_local_gen_chat", "gen_chat")):
        for s in samples(SMOL / run):
            (i,) = np.flatnonzero(rec.items.item_id == s["doc"]["id"])
            k = rec.grid.index(key)
            assert rec.correct[0, i, k] == (s["exact_match"] == 1.0)
            resp = s["filtered_resps"][0]
            if resp == "[invalid]":
                assert rec.pred[0, i, k] == PRED_UNPARSEABLE
            else:
                assert rec.pred[0, i, k] == "ABCDE".index(resp)
            assert rec.items.gold[i] == "ABCDE".index(s["target"])


def test_smollm2_runs_of_different_length_error_names_runs_or_intersect():
    with pytest.raises(RecordsError) as err:
        load(SMOL, "lm-eval", benchmark="arc", model=SMOL_NAME)
    msg = str(err.value)
    assert "arc_challenge_local_gen" in msg and f"lacks {N_LL - N_GEN} document(s)" in msg and "intersect" in msg
    rec = load(SMOL, "lm-eval", benchmark="arc", model=SMOL_NAME, intersect=True)
    assert rec.shape == (1, N_GEN, 4)
    assert rec.dropped == {"arc": N_LL - N_GEN}
    assert any(f"dropped per benchmark: arc={N_LL - N_GEN}" in n for n in rec.notes)
    # default config keys: the sanitized run names, in the legend with their prompts
    assert set(rec.grid.keys) == {
        "arc_challenge_local",
        "arc_challenge_local_bare",
        "arc_challenge_local_gen",
        "arc_challenge_local_gen_chat",
    }


def test_model_unknown_is_a_clear_error():
    with pytest.raises(RecordsError, match="cannot tell the model"):
        load(SMOL, "lm-eval", benchmark="arc")


METABENCH = {
    "tasks": {
        f"metabench_{b}_{v}": {"benchmark": b, "config": v}
        for b in ("arc", "mmlu")
        for v in ("secondary", "secondary_permute")
    }
}


def test_pythia_secondary_and_permuted_secondary_are_two_configs_of_the_same_items():
    rec = load(PYTHIA, "lm-eval", mapping=METABENCH)
    assert rec.models == (PYTHIA_MODEL,)  # from the <org>__<model> folder name
    assert rec.benchmarks == ("arc", "mmlu")
    n_arc, n_mmlu = (len(samples_task(f"metabench_{b}_secondary_2")) for b in ("arc", "mmlu"))
    assert rec.shape == (1, n_arc + n_mmlu, 2)
    assert rec.grid.keys == ("secondary", "secondary_permute")
    assert any("not in the mapping" in n and "metabench_arc_permute" in n for n in rec.notes)
    assert any("matched by doc['id']" in n for n in rec.notes)
    for b in ("arc", "mmlu"):
        sec = {s["doc_id"]: s for s in samples_task(f"metabench_{b}_secondary_2")}
        per = {s["doc_id"]: s for s in samples_task(f"metabench_{b}_secondary_permute")}
        scoped = rec.scope(b)
        assert len(scoped.items) == len(sec) == len(per)
        # every bit equals the file's own per-sample acc (matched by the doc's identity)
        for doc_id, s in sec.items():
            p = per[doc_id]
            ident = "id" if b == "arc" else "original_hash"
            assert s["doc"][ident] == p["doc"][ident]
            iid = s["doc"]["id"] if b == "arc" else str(doc_id)  # item id: doc['id'], else doc_id
            (i,) = np.flatnonzero((rec.items.item_id == iid) & (rec.items.benchmark == b))
            assert rec.correct[0, i, 0] == (float(s["acc"]) == 1.0)
            assert rec.correct[0, i, 1] == (float(p["acc"]) == 1.0)
            # gold in the reference (unpermuted) order; the permuted run's prediction mapped back
            opts = rec.items.options[i]
            assert rec.items.gold[i] == int(s["target"])
            p_opts = p["doc"]["choices"]["text"] if b == "arc" else p["doc"]["choices"]
            p_arg = int(np.argmax([float(x[0]) for x in p["filtered_resps"]]))
            assert opts[rec.pred[0, i, 1]] == p_opts[p_arg]


def samples_task(prefix: str) -> list[dict]:
    (f,) = sorted(PYTHIA.glob(f"samples_{prefix}*.jsonl"))
    return [json.loads(line) for line in f.open()]


def test_pythia_permute_covers_different_documents_clear_error_and_intersection():
    mp = {
        "tasks": {
            **METABENCH["tasks"],
            "metabench_arc_permute": {"benchmark": "arc", "config": "permute"},
            "metabench_mmlu_permute": {"benchmark": "mmlu", "config": "permute"},
        }
    }
    with pytest.raises(RecordsError) as err:
        load(PYTHIA, "lm-eval", mapping=mp)
    msg = str(err.value)
    assert "samples_metabench_arc_permute_" in msg and "samples_metabench_arc_secondary_" in msg
    assert "lacks" in msg and "intersect" in msg
    with pytest.raises(RecordsError, match="no document is common to all runs"):
        load(PYTHIA, "lm-eval", mapping=mp, intersect=True)


def test_pythia_without_mapping_says_to_name_benchmark_and_config():
    with pytest.raises(RecordsError, match="mapping"):
        load(PYTHIA, "lm-eval")


def _write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _stringify(s: dict) -> dict:
    """How older harness versions log: every response and metric value a string."""
    out = dict(s)
    out["acc"] = str(s["acc"])
    out["acc_norm"] = str(s["acc_norm"])
    out["filtered_resps"] = str(s["filtered_resps"])
    out["resps"] = str(s["resps"])
    return out


def test_string_values_appended_duplicates_keep_last_and_nested_lm_eval_layout(tmp_path):
    rows = samples(SMOL / "arc_challenge_local")[:20]
    res = json.loads(next((SMOL / "arc_challenge_local").glob("results_*.json")).read_text())
    res["model_name"] = "/models/SmolLM2-135M-Instruct"  # a local folder: its name
    res["model_name_sanitized"] = "__models__SmolLM2-135M-Instruct"
    for cfg in ("q", "q2"):
        d = tmp_path / "runs" / cfg / "__models__SmolLM2-135M-Instruct"
        rows_s = [_stringify(s) for s in rows]
        # the harness appends: a re-run of doc 3 and 4 with the opposite bit, logged later
        flipped = [
            dict(rows_s[3], acc=str(1.0 - float(rows_s[3]["acc"]))),
            dict(rows_s[4], acc=str(1.0 - float(rows_s[4]["acc"]))),
        ]
        _write(d / "samples_arc_challenge_local_2026-11-30T10-10-46.873148.jsonl", rows_s + flipped)
        (d / "results_2026-11-30T10-10-46.873148.json").write_text(json.dumps(res))
    rec = load(tmp_path / "runs", "lm-eval", benchmark="arc")
    assert rec.models == ("SmolLM2-135M-Instruct",)
    assert rec.grid.keys == ("q", "q2")  # named by the run folders
    assert rec.shape == (1, 20, 2)
    assert any("logged more than once" in n and "kept the last" in n for n in rec.notes)
    for r, s in enumerate(rows):
        want = float(s["acc"]) == 1.0
        if r in (3, 4):
            want = not want
        assert bit_of(rec, s["doc"]["id"], "q") == want
    lls = [float(x[0]) for x in rows[0]["filtered_resps"]]
    (i,) = np.flatnonzero(rec.items.item_id == rows[0]["doc"]["id"])
    assert rec.pred[0, i, 0] == int(np.argmax(lls))


def test_without_doc_hash_documents_match_by_doc_id(tmp_path):
    rows = samples(SMOL / "arc_challenge_local")[:10]
    for name in ("a", "b"):
        _write(
            tmp_path / name / "samples_t_2026-01-01T00-00-00.0.jsonl",
            [
                {k: v for k, v in s.items() if k not in ("doc_hash",)} | {"doc": {"question": s["doc"]["question"]}}
                for s in rows
            ],
        )
    rec = load(tmp_path, "lm-eval", model="m", benchmark="arc")
    assert rec.shape == (1, 10, 2)
    assert list(rec.items.item_id) == [str(s["doc_id"]) for s in rows]


def test_several_filters_must_be_chosen(tmp_path):
    rows = samples(SMOL / "arc_challenge_local_gen")[:5]
    both = [dict(s, filter="strict") for s in rows] + [dict(s, filter="flexible") for s in rows]
    _write(tmp_path / "r" / "samples_t_2026-01-01T00-00-00.0.jsonl", both)
    with pytest.raises(RecordsError, match="several filters"):
        load(tmp_path, "lm-eval", model="m")
    rec = load(tmp_path, "lm-eval", model="m", filter="strict")
    assert rec.shape == (1, 5, 1)


def test_metric_must_be_zero_one_and_present(tmp_path):
    rows = samples(SMOL / "arc_challenge_local")[:3]
    _write(tmp_path / "r" / "samples_t_2026-01-01T00-00-00.0.jsonl", [dict(s, acc=0.5) for s in rows])
    with pytest.raises(RecordsError, match="is not 0/1"):
        load(tmp_path, "lm-eval", model="m")
    with pytest.raises(RecordsError, match="no 'f1' field"):
        load(tmp_path, "lm-eval", model="m", metric="f1")


def test_values_are_decoded_without_eval():
    assert literal("1.0") == 1.0
    assert deep_literal("[['-29.625', 'False']]") == [[-29.625, False]]
    assert literal("__import__('os').system('true')") == "__import__('os').system('true')"
    assert literal("[invalid]") == "[invalid]"
    assert to_bit("True") == 1 and to_bit("0.0") == 0 and to_bit("0.5") is None


def test_cli_writes_records_v1(tmp_path, capsys):
    mp = tmp_path / "map.json"
    mp.write_text(json.dumps(SMOL_LL))
    out = tmp_path / "records"
    rc = import_main(["lm-eval", str(SMOL), "-o", str(out), "--metric", "acc", "--mapping", str(mp)])
    assert rc == 0
    assert f"1 model x {N_LL} items x 2 configs" in capsys.readouterr().out
    rec = load_records(out)
    direct = load(SMOL, "lm-eval", mapping=SMOL_LL, metric="acc")
    assert np.array_equal(rec.correct, direct.correct)
    assert (out / "arc" / "HuggingFaceTB__SmolLM2-135M-Instruct.jsonl").is_file()
    assert json.loads((out / "grid.json").read_text())["reference"] == "ll|cloze_question"
    rc = import_main(["lm-eval", str(PYTHIA), "-o", str(tmp_path / "bad")])
    assert rc == 4 and "mapping" in capsys.readouterr().err


def test_unknown_format():
    with pytest.raises(ValueError, match="unknown import format"):
        load(SMOL, "openai-evals")


def test_mapping_file_inside_src_is_used(tmp_path):
    src = tmp_path / "runs"
    for run in ("arc_challenge_local", "arc_challenge_local_bare"):
        shutil.copytree(SMOL / run, src / run)
    (src / "audit_mapping.json").write_text(json.dumps(SMOL_LL))
    rec = load(src, "lm-eval")
    assert rec.grid.keys == ("ll|cloze_question", "ll|cloze_plain") and rec.models == (SMOL_NAME,)


@pytest.mark.parametrize("root", SMOL_ROOTS, ids=lambda p: p.parents[1].name)
def test_bundled_smollm2_runs_import_in_two_tries(root, tmp_path, capsys):
    """Issue 22: the README-style first try on the bundled SmolLM2 runs used to stop on one decision
    at a time (metric, then model, then benchmark, then --intersect: four tries). Now it names all
    four at once, writes nothing, and the command it prints is the second and last try."""
    import shlex

    out = tmp_path / "records"
    rc = import_main(["lm-eval", str(root), "-o", str(out), "--metric", "acc"])
    err = capsys.readouterr().err
    assert rc == 4 and not out.exists()
    assert "needs 4 decisions" in err
    for what in ("1. metric:", "2. model:", "3. benchmark:", "4. documents:"):
        assert what in err, err
    assert "the import works (checked, nothing written): 1 model x" in err
    (cmd,) = [line.split("run: ", 1)[1] for line in err.splitlines() if line.lstrip().startswith("run: ")]
    words = shlex.split(cmd)
    assert words[:3] == ["leaderboard-audit", "import", "lm-eval"]
    assert "--metric" not in words and "--intersect" in words
    assert words[words.index("--model") + 1] == "SmolLM2-135M-Instruct"
    assert import_main(words[2:]) == 0
    rec = load_records(out)
    assert rec.shape[0] == 1 and rec.shape[2] == 4 and len(rec.benchmarks) == 1


def test_one_decision_is_named_with_its_command(tmp_path, capsys):
    """A single missing decision gets the same treatment (its flag added to the user's command)."""
    run = tmp_path / "src" / "ll"
    shutil.copytree(SMOL / "arc_challenge_local", run)
    for res in run.glob("results_*.json"):
        res.unlink()
    rc = import_main(["lm-eval", str(tmp_path / "src"), "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert rc == 4 and "needs 1 decision " in err and "1. model:" in err
    assert f"run: leaderboard-audit import lm-eval {tmp_path / 'src'} -o {tmp_path / 'out'} --model src" in err


def test_an_unrecognised_problem_is_reported_as_before(tmp_path, capsys):
    run = tmp_path / "src" / "ll"
    shutil.copytree(SMOL / "arc_challenge_local", run)
    rc = import_main(
        ["lm-eval", str(tmp_path / "src"), "-o", str(tmp_path / "out"), "--match-by", "field:nope", "--model", "m"]
    )
    err = capsys.readouterr().err
    assert rc == 4 and "decision" not in err and "samples without doc['nope']" in err
