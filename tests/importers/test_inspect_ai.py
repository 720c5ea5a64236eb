"""Inspect AI importer on real logs (tests/data/inspect: a real `inspect eval` of SmolLM2-135M-Instruct
on 20 ARC-Challenge items, choices as given and shuffled; see its README)."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from leaderboard_audit.importers import load
from leaderboard_audit.importers.cli import main as import_main
from leaderboard_audit.importers.inspect_ai import FORMAT_INFO, load_inspect, score_bit
from leaderboard_audit.records import RecordsError, load_records
from helpers import paths

DATA = paths.DATA / "inspect"
EVAL = DATA / "eval"
JSON = DATA / "json"
MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"
KEYS = ("shuffle=0", "shuffle=7")
ARGS = ("-p", "no:cacheprovider", "-q")


def json_logs() -> dict[str, dict]:
    """The .json logs, read with json only: config key -> log."""
    out = {}
    for p in sorted(JSON.glob("*.json")):
        lg = json.loads(p.read_text())
        out[f"shuffle={lg['eval']['task_args']['shuffle']}"] = lg
    return out


def test_bits_equal_the_scores_in_the_real_logs():
    logs = json_logs()
    assert sorted(logs) == list(KEYS)
    for src in (EVAL, JSON):
        rec = load(src, "inspect", reference="shuffle=0")
        assert rec.shape == (1, 20, 2) and rec.models == (MODEL,) and rec.benchmarks == ("arc_mc",)
        assert rec.grid.keys == KEYS
        ids = list(rec.items.item_id)
        for key, lg in logs.items():
            assert lg["status"] == "success" and len(lg["samples"]) == 20
            k = rec.grid.index(key)
            for s in lg["samples"]:
                bit = {"C": 1, "I": 0}[s["scores"]["choice"]["value"]]
                assert rec.correct[0, ids.index(s["id"]), k] == bit, (src, key, s["id"])
        # the dataset's order, and Inspect's own accuracy per log
        assert ids == logs["shuffle=0"]["eval"]["dataset"]["sample_ids"]
        for key, lg in logs.items():
            acc = lg["results"]["scores"][0]["metrics"]["accuracy"]["value"]
            assert rec.correct[0, :, rec.grid.index(key)].mean() == pytest.approx(acc)


def test_eval_and_json_forms_give_identical_records():
    a, b = load(EVAL, "inspect"), load(JSON, "inspect")
    assert a.grid.keys == b.grid.keys and a.grid.reference == b.grid.reference == "shuffle=0"
    assert list(a.items.item_id) == list(b.items.item_id)
    assert np.array_equal(a.correct, b.correct) and np.array_equal(a.pred, b.pred)
    assert a.items.gold == b.items.gold and a.items.options == b.items.options
    assert a.items.question == b.items.question
    eval_files = sorted(EVAL.glob("*.eval"))
    assert len(eval_files) == 2 and all(zipfile.is_zipfile(f) for f in eval_files)


def test_shuffled_choices_are_given_in_the_reference_order():
    rec = load(EVAL, "inspect")
    assert any("shuffled choices" in n for n in rec.notes)
    ref = json_logs()["shuffle=0"]
    by_id = {s["id"]: s for s in ref["samples"]}
    for i, iid in enumerate(rec.items.item_id):
        s = by_id[iid]
        assert rec.items.options[i] == s["choices"]
        assert rec.items.gold[i] == ord(s["target"]) - ord("A")
        assert rec.items.question[i] == s["input"][-1]["content"]  # the last user turn (after the example)
    ok = rec.pred >= 0
    gold = np.array(rec.items.gold)[None, :, None]
    assert ok.any() and np.array_equal(rec.correct[ok], (rec.pred == gold)[ok])
    c = rec.grid.configs[1]
    assert c.scoring == "gen" and c.extra["source"] == "inspect" and c.extra["metric"] == "choice"
    assert c.extra["task_args"]["shuffle"] == 7 and c.extra["inspect_ai_version"] == "0.3.285"
    assert c.extra["solver"][0]["solver"] == "multiple_choice"


def test_mapping_options_and_mapping_file(tmp_path):
    mp = {
        "model": "smollm2-135m",
        "benchmark": "arc",
        "reference": "gen|inspect_mc|p0",
        "runs": {
            "*CfabLbkgX4kmS6h7EFjQFb*": {"config": {"scoring": "gen", "template": "inspect_mc", "ordering": "p0"}},
            "*mo7CSDq9URPvkAZ3fcMtKP*": {"config": "shuffled"},
        },
    }
    rec = load(EVAL, "inspect", mapping=mp)
    assert rec.models == ("smollm2-135m",) and rec.benchmarks == ("arc",)
    assert rec.grid.keys == ("gen|inspect_mc|p0", "shuffled") and rec.grid.reference == "gen|inspect_mc|p0"
    src = tmp_path / "logs"
    src.mkdir()
    for f in JSON.glob("*.json"):
        (src / f.name).write_bytes(f.read_bytes())
    (src / "audit_mapping.json").write_text(json.dumps(mp))
    assert load(src, "inspect").grid.keys == ("gen|inspect_mc|p0", "shuffled")
    # options win over the logs' own names
    rec = load(EVAL, "inspect", model="m1", benchmark="arc_small", reference="shuffle=7")
    assert rec.models == ("m1",) and rec.benchmarks == ("arc_small",) and rec.grid.reference == "shuffle=7"
    # a mapping that names only one log: the other is not imported (a note)
    one = {"runs": {"*Cfab*": {"config": "as_given"}}}
    rec = load(EVAL, "inspect", mapping=one)
    assert rec.grid.keys == ("as_given",) and any("not in the mapping" in n for n in rec.notes)
    # one log file alone
    (f,) = [f for f in EVAL.glob("*.eval") if "Cfab" in f.name]
    assert load_inspect(f).grid.keys == ("default",)


def _json_copy(tmp_path: Path) -> tuple[Path, list[Path]]:
    src = tmp_path / "logs"
    src.mkdir(parents=True)
    files = []
    for f in sorted(JSON.glob("*.json")):
        (src / f.name).write_bytes(f.read_bytes())
        files.append(src / f.name)
    return src, files


def _edit(path: Path, fn) -> None:
    lg = json.loads(path.read_text())
    fn(lg)
    path.write_text(json.dumps(lg))


def test_missing_sample_is_an_error_naming_the_log_or_intersection(tmp_path):
    src, (a, b) = _json_copy(tmp_path)

    def drop(lg):
        lg["samples"] = [s for s in lg["samples"] if s["id"] != "Mercury_7175875"]

    _edit(b, drop)  # the dataset still lists it
    with pytest.raises(RecordsError, match="lacks 1 sample.*its own dataset lists"):
        load(src, "inspect")
    rec = load(src, "inspect", intersect=True)
    assert rec.shape == (1, 19, 2) and rec.dropped == {"arc_mc": 1}

    def unlist(lg):
        lg["eval"]["dataset"]["sample_ids"].remove("Mercury_7175875")

    _edit(b, unlist)  # a smaller dataset: the other log has a sample this one lacks
    with pytest.raises(RecordsError) as err:
        load(src, "inspect")
    assert b.name in str(err.value) and "lacks 1 sample(s)" in str(err.value)
    assert load(src, "inspect", intersect=True).dropped == {"arc_mc": 1}


@pytest.mark.parametrize("value", ["P", "N", 0.5, {"a": 1}, None, "c"])
def test_a_score_that_is_not_a_bit_names_file_and_sample(tmp_path, value):
    src, (a, _) = _json_copy(tmp_path)

    def bad(lg):
        lg["samples"][3]["scores"]["choice"]["value"] = value

    _edit(a, bad)
    sid = json.loads(a.read_text())["samples"][3]["id"]
    with pytest.raises(RecordsError) as err:
        load(src, "inspect")
    msg = str(err.value)
    assert a.name in msg and repr(sid) in msg and "not a correctness bit" in msg


def test_score_values():
    assert [score_bit(v) for v in ("C", "I", 1, 0, 1.0, True, False)] == [1, 0, 1, 0, 1, 1, 0]
    assert [score_bit(v) for v in ("P", "N", "1", 0.5, None, [1])] == [None] * 6


def test_a_log_with_status_error_is_refused():
    with pytest.raises(RecordsError) as err:
        load(DATA / "error", "inspect")
    msg = str(err.value)
    assert "error_status.json" in msg and "status is 'error'" in msg and "strictly positive float" in msg


def test_duplicate_sample_no_samples_and_epochs(tmp_path):
    src, (a, b) = _json_copy(tmp_path)
    _edit(a, lambda lg: lg["samples"].append(dict(lg["samples"][0])))
    with pytest.raises(RecordsError, match="appears twice"):
        load(src, "inspect")
    _edit(a, lambda lg: lg.__setitem__("samples", []))
    with pytest.raises(RecordsError, match="holds no samples"):
        load(src, "inspect")

    src, (a, b) = _json_copy(tmp_path / "ep")

    def two_epochs(lg):
        lg["eval"]["config"]["epochs"] = 2
        lg["samples"] += [{**s, "epoch": 2, "scores": {"choice": {"value": "C"}}} for s in lg["samples"]]

    _edit(a, two_epochs)
    _edit(b, two_epochs)
    with pytest.raises(RecordsError, match=r"(?s)2 epochs.*epoch=K \(--epoch K\)"):
        load(src, "inspect")
    one = load(src, "inspect", epoch=1)
    assert np.array_equal(one.correct, load(JSON, "inspect").correct)
    assert load(src, "inspect", epoch=2).correct.all()
    out = tmp_path / "records"
    assert import_main(["inspect", str(src), "-o", str(out), "--epoch", "2"]) == 0
    assert load_records(out).correct.all()
    with pytest.raises(RecordsError, match="no sample of epoch 3"):
        load(src, "inspect", epoch=3)


def test_scorer_choice_and_a_missing_score(tmp_path):
    src, (a, b) = _json_copy(tmp_path)
    with pytest.raises(RecordsError, match=r"no score for scorer 'match'"):
        load(src, "inspect", metric="match")

    def extra_scorer(lg):
        for s in lg["samples"]:
            s["scores"]["match"] = {"value": "I"}

    _edit(a, extra_scorer)
    _edit(b, extra_scorer)
    rec = load(src, "inspect")  # choice is preferred
    assert np.array_equal(rec.correct, load(JSON, "inspect").correct) and any("scorer 'choice'" in n for n in rec.notes)
    assert not load(src, "inspect", metric="match").correct.any()

    def only_two_others(lg):
        for s in lg["samples"]:
            s["scores"] = {"match": {"value": "I"}, "includes": {"value": "C"}}

    _edit(a, only_two_others)
    _edit(b, only_two_others)
    with pytest.raises(RecordsError, match=r"(?s)\[.includes., .match.\].*metric=NAME"):
        load(src, "inspect")


def _eval_from_json(src: Path, dst: Path, *, header: bool = True, compression=zipfile.ZIP_DEFLATED) -> None:
    """A .eval (zip) log with the json log's content; deflate-compressed (Inspect reads either)."""
    lg = json.loads(src.read_text())
    with zipfile.ZipFile(dst, "w", compression) as z:
        for s in lg["samples"]:
            z.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", json.dumps(s))
        if header:
            z.writestr("header.json", json.dumps({k: v for k, v in lg.items() if k != "samples"}))
        else:
            z.writestr("_journal/start.json", json.dumps({"version": 2, "eval": lg["eval"]}))


def test_eval_zip_other_compression_unfinished_damaged_and_not_a_zip(tmp_path):
    d = tmp_path / "logs"
    d.mkdir()
    files = sorted(JSON.glob("*.json"))
    for f in files:
        _eval_from_json(f, d / (f.stem + ".eval"))
    assert np.array_equal(load(d, "inspect").correct, load(JSON, "inspect").correct)

    _eval_from_json(files[0], d / (files[0].stem + ".eval"), header=False)
    with pytest.raises(RecordsError, match="no header.json: the eval did not finish"):
        load(d, "inspect")

    bad = d / (files[0].stem + ".eval")
    _eval_from_json(files[0], bad, compression=zipfile.ZIP_STORED)
    raw = bytearray(bad.read_bytes())
    i = raw.find(b'"choice"')
    raw[i + 2] ^= 0x01  # one flipped byte in a stored member: the CRC no longer matches
    bad.write_bytes(bytes(raw))
    with pytest.raises(RecordsError, match="damaged member"):
        load(d, "inspect")

    bad.write_bytes(b"not a zip")
    with pytest.raises(RecordsError, match="not a readable .eval"):
        load(d, "inspect")


def test_zstd_members_without_zstandard_say_what_to_do(monkeypatch):
    monkeypatch.setitem(sys.modules, "zstandard", None)  # import zstandard -> ImportError
    if sys.version_info >= (3, 14):
        pytest.skip("the stdlib reads Zstandard zip members")
    with pytest.raises(RecordsError) as err:
        load(EVAL, "inspect")
    assert "Zstandard" in str(err.value) and "inspect log convert --to json" in str(err.value)


def test_not_logs_and_unreadable_json(tmp_path):
    with pytest.raises(RecordsError, match="no Inspect log"):
        load(tmp_path, "inspect")
    (tmp_path / "other.json").write_text('{"a": 1}')
    with pytest.raises(RecordsError, match="no Inspect log"):  # a JSON file that is not a log is skipped
        load(tmp_path, "inspect")
    (tmp_path / "broken.json").write_text('{"eval": ')
    with pytest.raises(RecordsError, match="broken.json.*unreadable JSON"):
        load(tmp_path, "inspect")
    with pytest.raises(RecordsError, match="no such log file"):
        load(tmp_path / "nope", "inspect")


def test_cli_round_trip(tmp_path, capsys):
    out = tmp_path / "records"
    assert import_main(["inspect", str(EVAL), "-o", str(out), "--reference", "shuffle=0"]) == 0
    cap = capsys.readouterr()
    assert "1 model x 20 items x 2 configs [arc_mc]" in cap.out and "note: model 'hf/" in cap.err
    rec = load_records(out)
    assert np.array_equal(rec.correct, load(EVAL, "inspect").correct)
    assert (out / "arc_mc" / "HuggingFaceTB__SmolLM2-135M-Instruct.jsonl").is_file()
    assert json.loads((out / "grid.json").read_text())["imported_from"] == "inspect"
    assert import_main(["inspect", str(DATA / "error"), "-o", str(tmp_path / "bad")]) == 4
    assert "status is 'error'" in capsys.readouterr().err


def test_format_info_and_import_is_light():
    assert FORMAT_INFO["name"] == "inspect" and "inspect-ai" in FORMAT_INFO["aliases"]
    assert FORMAT_INFO["patterns"] == ("*.eval", "*.json")
    assert {"metric", "mapping", "intersect", "reference", "model", "benchmark"} <= set(FORMAT_INFO["options"])
    assert load(EVAL, "inspect-ai").shape == load(EVAL, "inspect_ai").shape == (1, 20, 2)
    code = (
        "import sys, leaderboard_audit.importers.inspect_ai; "
        "print(','.join(m for m in ('numpy', 'pandas') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_pytest_audit_inspect_logs_directly(pytester, tmp_path):
    """pytest --audit SRC --audit-format inspect on the vendored real logs."""
    out = tmp_path / "r.json"
    r = pytester.runpytest(f"--audit={EVAL}", "--audit-format", "inspect", "--audit-report", str(out), *ARGS)
    assert r.ret in (0, 1)
    rep = json.loads(out.read_text())
    assert sorted(rep["records"]["configs"]) == list(KEYS)
    assert rep["records"]["items"] == 20 and rep["records"]["benchmarks"] == ["arc_mc"]


def test_config_keys_from_solver_parameters_when_task_args_agree(tmp_path):
    src, (a, b) = _json_copy(tmp_path)

    def same_args_other_template(lg):
        lg["eval"]["task_args"]["shuffle"] = 0
        lg["plan"]["steps"][0]["params"]["template"] = "Q: {question}\n{choices}\nANSWER: $LETTER from {letters}" * 2

    _edit(b, same_args_other_template)
    rec = load(src, "inspect")
    long_key = [k for k in rec.grid.keys if k != "multiple_choice.template=null"]
    assert "multiple_choice.template=null" in rec.grid.keys and len(long_key) == 1
    assert (
        long_key[0].startswith("multiple_choice.template=h")
        and len(long_key[0]) == len("multiple_choice.template=") + 9
    )

    _edit(b, lambda lg: lg["plan"]["steps"][0]["params"].__setitem__("template", None))
    with pytest.raises(RecordsError, match="(?s)already read from.*name them apart in the mapping"):
        load(src, "inspect")  # nothing tells the two logs apart: both are 'default'
