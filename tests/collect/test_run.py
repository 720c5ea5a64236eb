"""The runner with the fake engine: records-v1 output, atomic files, SIGKILL + resume, progress."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from leaderboard_audit.collect.cells import decide, ll_requests
from leaderboard_audit.collect.run import collect
from leaderboard_audit.collect.spec import load_spec, spec_from_obj
from leaderboard_audit.records import load_records
from helpers.collect import _spec, _tree


def test_collect_writes_valid_records(tmp_path, capsys):
    root = collect(_spec(tmp_path))
    rec = load_records(root)
    assert rec.models == ("m/one", "two") or list(rec.models) == ["m/one", "two"]
    assert len(rec.items) == 24 and len(rec.grid) == 26
    assert (root / "mmlu" / "m__one.jsonl").exists()
    assert (root / "_raw" / "arc" / "two.jsonl").exists()
    assert not (root / "_work").exists()
    line = json.loads((root / "arc" / "two.jsonl").read_text().splitlines()[0])
    assert set(line) >= {"benchmark", "model", "item_id", "gold", "question", "options", "correct", "pred", "margin"}
    assert set(line["margin"]) == {"ll|cloze_plain", "ll|cloze_question"}
    for k, v in line["pred"].items():
        assert line["correct"][k] == int(v is not None and v == line["gold"])
    # raw sidecar text re-parses to the recorded preds
    from leaderboard_audit.collect.harness import paper_harness, parse_answer

    cfg = {c.key: c for c in paper_harness().configs}
    raw = json.loads((root / "_raw" / "arc" / "two.jsonl").read_text().splitlines()[0])
    assert raw["item_id"] == line["item_id"]
    for k, text in raw["gen"].items():
        assert parse_answer(cfg[k], text) == line["pred"][k]
    err = capsys.readouterr().err
    assert "items/s" in err and "ETA" in err and "item-configs/s" in err
    # ARC item with 3 choices is dropped from the pool: 22 of the 23 rows, less the 5 reserved
    from leaderboard_audit.collect.benchmarks import load_items

    pool = [it.item_id for it in load_items("arc", None, files=str(tmp_path / "bench" / "arc.jsonl"))]
    assert len(pool) == 22 - 5 and "arc/Q4" not in pool + list(rec.items.item_id)


def test_second_run_is_a_no_op_and_identical(tmp_path, capsys):
    spec = _spec(tmp_path)
    root = collect(spec)
    before = _tree(root)
    capsys.readouterr()
    collect(spec)
    assert _tree(root) == before
    assert "resumed" in capsys.readouterr().err


@pytest.mark.slow
def test_sigkill_mid_run_then_resume_is_byte_identical(tmp_path):
    spec_a = _spec(tmp_path / "a")
    ref = collect(spec_a, progress=False)
    spec_b = _spec(tmp_path / "b")
    env = dict(os.environ, LEADERBOARD_AUDIT_FAKE_CRASH_AFTER="5")
    cmd = [sys.executable, "-m", "leaderboard_audit.collect.cli", str(spec_b), "--quiet"]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert r.returncode == 137, r.stderr
    out_b = tmp_path / "b" / "records"
    chunks = list((out_b / "_work").rglob("chunk-*.json"))
    assert chunks, "a killed run leaves its finished chunks"
    # chunk-major order: the first chunk of every benchmark comes before any second chunk
    assert {c.parent.parent.name for c in chunks} == {"arc", "mmlu"}
    assert not list(out_b.rglob("*.tmp"))
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert _tree(out_b) == _tree(ref)


def test_changed_spec_recollects_stale_files(tmp_path):
    spec = _spec(tmp_path)
    root = collect(spec, progress=False)
    obj_n = len((root / "arc" / "two.jsonl").read_text().splitlines())
    s = load_spec(spec)
    s.n_items = 7
    collect(s, progress=False)
    assert len((root / "arc" / "two.jsonl").read_text().splitlines()) == 7 != obj_n


def test_decide_ties_and_margin():
    assert decide([-1.0, -0.5, -0.5, -2.0]) == (1, 0.0)
    b, m = decide([-3.0, -1.0, -1.25, -4.0])
    assert b == 1 and m == pytest.approx(0.25)


def test_ll_requests_split_option_tokens():
    from leaderboard_audit.collect.engines.fake import ByteTokenizer
    from leaderboard_audit.collect.harness import paper_harness
    from leaderboard_audit.collect.benchmarks import Item

    cfg = paper_harness().ll_configs[0]
    it = Item("x/1", "Hi", ("yes", "no", "ok", "k"), 0)
    reqs = ll_requests(ByteTokenizer(), cfg, it, " ")
    ids, start = reqs[0]
    assert ByteTokenizer().decode(ids[start:]) == " yes"
    assert ByteTokenizer().decode(ids[:start]) == "Hi\nAnswer:"


def test_spec_validation(tmp_path):
    with pytest.raises(ValueError, match="no \\[\\[models\\]\\]"):
        spec_from_obj({"output": "x"})
    with pytest.raises(ValueError, match="unknown spec key"):
        spec_from_obj({"models": [{"path": "a"}], "bogus": 1})
    with pytest.raises(ValueError, match="unknown benchmark"):
        spec_from_obj({"models": [{"path": "a"}], "benchmarks": ["squad"]})
    with pytest.raises(ValueError, match="unique"):
        spec_from_obj({"models": [{"path": "a", "name": "x"}, {"path": "b", "name": "x"}]})
    s = spec_from_obj({"models": [{"path": "org/model-1"}]}, tmp_path)
    assert s.models[0].name == "model-1" and s.engine == "vllm" and s.n_items == 1000
    assert s.models[0].dtype == "auto" and s.models[0].chat_template is False


def test_cli_entry_points(tmp_path, capsys):
    from leaderboard_audit.collect.cli import main, models_main

    assert main([str(_spec(tmp_path)), "--quiet"]) == 0
    assert "records:" in capsys.readouterr().out
    assert models_main(["list"]) == 0
    assert "smollm2-135m-instruct" in capsys.readouterr().out


def test_collector_does_not_import_pytest_or_torch():
    code = (
        "import sys, leaderboard_audit.collect.run, leaderboard_audit.collect.cli, "
        "leaderboard_audit.collect.models, leaderboard_audit.collect.engines; "
        "bad = [m for m in ('pytest', 'torch', 'vllm', 'transformers') if m in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_larger_n_reuses_finished_chunks_and_equals_a_fresh_run(tmp_path, capsys):
    spec = _spec(tmp_path / "inc")
    s = load_spec(spec)
    s.n_items = 10
    collect(s)
    capsys.readouterr()
    s.n_items = 12
    root = collect(s)
    err = capsys.readouterr().err
    assert "from the previous file" in err
    fresh = collect(_spec(tmp_path / "fresh"), progress=False)
    assert _tree(root) == _tree(fresh)


def _engine_spy(monkeypatch):
    """make_engine wrapped: the environment and a vLLM-logger INFO line at each engine load."""
    import logging

    import leaderboard_audit.collect.engines as engines

    seen: list[dict[str, str | None]] = []
    real = engines.make_engine

    def spy(name, path, **kw):
        logging.getLogger("vllm").info("INFO 12-01 [core.py:1] vLLM chatter")
        logging.getLogger("vllm").error("ERROR 12-01 [core.py:2] a real vLLM error")
        seen.append({k: os.environ.get(k) for k in ("VLLM_LOGGING_LEVEL", "TORCH_CPP_LOG_LEVEL", "TQDM_DISABLE")})
        seen[-1]["mode"] = os.environ.get("LEADERBOARD_AUDIT_LIBRARY_LOGS")
        return real(name, path, **kw)

    monkeypatch.setattr(engines, "make_engine", spy)
    for k in ("VLLM_LOGGING_LEVEL", "TORCH_CPP_LOG_LEVEL", "TQDM_DISABLE", "LEADERBOARD_AUDIT_LIBRARY_LOGS"):
        monkeypatch.delenv(k, raising=False)
    return seen


@pytest.fixture
def vllm_logger():
    """A vLLM-like logger with its own handler on a buffer (what vLLM configures at import)."""
    import io
    import logging

    buf = io.StringIO()
    lg = logging.getLogger("vllm")
    h = logging.StreamHandler(buf)
    old = lg.level
    lg.addHandler(h)
    lg.setLevel(logging.INFO)
    yield buf
    lg.removeHandler(h)
    lg.setLevel(old)


def test_collect_quiets_the_libraries_and_restores_the_environment(tmp_path, monkeypatch, capsys, vllm_logger):
    """Issue 22: vLLM's INFO/WARNING lines, torch's C++ warnings and progress bars are off while the
    collector runs (errors still show); the environment is as before once it returns."""
    import logging

    seen = _engine_spy(monkeypatch)
    collect(_spec(tmp_path), progress=False)
    assert seen and all(
        s == {"VLLM_LOGGING_LEVEL": "ERROR", "TORCH_CPP_LOG_LEVEL": "ERROR", "TQDM_DISABLE": "1", "mode": "quiet"}
        for s in seen
    )
    assert "chatter" not in vllm_logger.getvalue() and "a real vLLM error" in vllm_logger.getvalue()
    for k in ("VLLM_LOGGING_LEVEL", "TORCH_CPP_LOG_LEVEL", "TQDM_DISABLE", "LEADERBOARD_AUDIT_LIBRARY_LOGS"):
        assert k not in os.environ
    assert logging.getLogger("vllm").level == logging.INFO  # restored


def test_collect_keeps_what_the_user_set(tmp_path, monkeypatch, capsys):
    seen = _engine_spy(monkeypatch)
    monkeypatch.setenv("VLLM_LOGGING_LEVEL", "DEBUG")
    collect(_spec(tmp_path), progress=False)
    assert {s["VLLM_LOGGING_LEVEL"] for s in seen} == {"DEBUG"}
    assert os.environ["VLLM_LOGGING_LEVEL"] == "DEBUG"


def test_cli_verbose_lets_the_libraries_speak(tmp_path, monkeypatch, capsys, vllm_logger):
    from leaderboard_audit.collect.cli import main

    seen = _engine_spy(monkeypatch)
    assert main([str(_spec(tmp_path)), "--verbose"]) == 0
    assert seen and all(s["VLLM_LOGGING_LEVEL"] is None and s["mode"] == "verbose" for s in seen)
    assert "chatter" in vllm_logger.getvalue()
    seen.clear()
    vllm_logger.truncate(0)
    assert main([str(_spec(tmp_path, out="records2"))]) == 0
    assert seen and all(s["mode"] == "quiet" for s in seen)
    assert "chatter" not in vllm_logger.getvalue()


def test_vllm_engine_in_a_quiet_collection_loads_without_the_progress_bar(monkeypatch):
    """In a quiet collection the engine passes use_tqdm_on_load=False (vLLM's weight-loading bar)."""
    import types

    from leaderboard_audit.collect.engines import vllm_engine

    made = []

    class LLM:
        def __init__(self, **kw):
            made.append(kw)

    mod = types.ModuleType("vllm")
    mod.LLM, mod.SamplingParams = LLM, dict
    monkeypatch.setitem(sys.modules, "vllm", mod)
    monkeypatch.setattr(vllm_engine, "HFTokenizer", lambda p: None)
    monkeypatch.setenv("LEADERBOARD_AUDIT_LIBRARY_LOGS", "quiet")
    vllm_engine.VLLMEngine("/models/x", cuda=True)
    monkeypatch.setenv("LEADERBOARD_AUDIT_LIBRARY_LOGS", "verbose")
    vllm_engine.VLLMEngine("/models/x", cuda=True)
    assert made[0]["use_tqdm_on_load"] is False and "use_tqdm_on_load" not in made[1]
