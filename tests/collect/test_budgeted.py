"""A budgeted collection through a real engine path (collect/budgeted.py; issue 44, item 3).

The fake engine answers as a pure function of the prompt, so a budgeted collection must
observe exactly what the replay of a full collection observes at the same budget and seed:
that pins the wiring (which cells reach the engine, which answers come back to the plan).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from helpers.collect import _spec, _tree
from leaderboard_audit.collect.errors import CollectError
from leaderboard_audit.collect.replay import DESIGN_KEY, replay_plan, replayed_records
from leaderboard_audit.collect.cells import CALL_LOG_ENV
from leaderboard_audit.collect.run import collect
from leaderboard_audit.collect.spec import load_spec, spec_from_obj
from leaderboard_audit.records import load_records
from leaderboard_audit.records.missing import NOT_COLLECTED


def _budget_spec(tmp: Path, *lines: str, out: str = "records", **kw) -> Path:
    p = _spec(tmp, out=out, **kw)
    text = p.read_text()
    # top-level keys must come before the first table
    p.write_text("\n".join(lines) + "\n" + text)
    return p


def _logged(path: Path) -> list[tuple[str, str, str, str]]:
    cells = []
    for line in path.read_text().splitlines() if path.exists() else []:
        e = json.loads(line)
        assert e["prompts"] == sum(k.startswith("gen|") for _, _, k in e["cells"])
        assert e["requests"] == e["expected_requests"]
        cells += [(e["model"], b, i, k) for b, i, k in e["cells"]]
    return cells


def _observed(rec) -> set[tuple[str, str, str, str]]:
    return {
        (rec.models[m], str(rec.items.benchmark[i]), str(rec.items.item_id[i]), rec.grid.keys[k])
        for m, i, k in zip(*np.nonzero(rec.missing == 0))
    }


def test_budgeted_collection_observes_what_the_replay_of_the_full_grid_observes(tmp_path, monkeypatch):
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv(CALL_LOG_ENV, str(log))
    got = load_records(collect(_budget_spec(tmp_path / "b", "budget = 0.3", "budget_seed = 4"), progress=False))
    monkeypatch.delenv(CALL_LOG_ENV)
    full = load_records(collect(_spec(tmp_path / "f"), progress=False))
    want = replayed_records(full, replay_plan(full, 0.3, 4), fraction=0.3, seed=4)

    assert got.models == want.models and list(got.items.item_id) == list(want.items.item_id)
    assert got.missing is not None and ((got.missing == 0) | (got.missing == NOT_COLLECTED)).all()
    assert np.array_equal(got.missing, want.missing)
    assert np.array_equal(got.correct, want.correct)
    obs = got.missing == 0
    assert np.array_equal(np.where(obs, got.pred, 0), np.where(obs, want.pred, 0))
    d, w = got.grid.extra[DESIGN_KEY], want.grid.extra[DESIGN_KEY]
    assert {k: d[k] for k in w} == w  # same sample, inclusion probability, order, rounds
    assert d["stop"] == "budget" and d["seed"] == 4 and d["random_sample"]["items"] >= 2
    # the engine got exactly the planned cells, each once
    cells = _logged(log)
    assert not [c for c, n in Counter(cells).items() if n > 1]
    assert set(cells) == _observed(got)


@pytest.mark.slow
def test_sigkill_then_resume_is_byte_identical_and_recomputes_no_checkpoint(tmp_path):
    ref = collect(_budget_spec(tmp_path / "a", "budget = 0.3", "budget_seed = 2"), progress=False)
    spec = _budget_spec(tmp_path / "b", "budget = 0.3", "budget_seed = 2")
    cmd = [sys.executable, "-m", "leaderboard_audit.collect.cli", str(spec), "--quiet"]
    # the fake engine dies like SIGKILL at its 4th call (each model's engine counts its own)
    r = subprocess.run(cmd, env=dict(os.environ, LEADERBOARD_AUDIT_FAKE_CRASH_AFTER="3"), capture_output=True)
    assert r.returncode == 137, r.stderr
    out = tmp_path / "b" / "records"
    kept = set()
    for p in (out / "_work" / "_budget").rglob("chunk-*.json"):
        kept |= {(p.parent.name, b, i, k) for b, i, ks in json.loads(p.read_text())["cells"] for k in ks}
    assert kept and not list(out.rglob("*.jsonl"))
    log = tmp_path / "resumed.jsonl"
    r = subprocess.run(cmd, env=dict(os.environ, **{CALL_LOG_ENV: str(log)}), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert _tree(out) == _tree(ref)
    stem = {"m/one": "m__one", "two": "two"}  # a checkpoint's folder is its model's file stem
    again = {(stem[m], b, i, k) for m, b, i, k in _logged(log)}
    assert again and not again & kept


def test_a_finished_budgeted_collection_rerun_is_a_no_op(tmp_path, monkeypatch, capsys):
    spec = _budget_spec(tmp_path, "budget = 0.3")
    root = collect(spec)
    err = capsys.readouterr().err
    assert "cells" in err and "of the budget" in err and "robust status decided" in err
    before = _tree(root)
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv(CALL_LOG_ENV, str(log))
    collect(spec)
    assert _tree(root) == before and not log.exists()
    assert "nothing to collect" in capsys.readouterr().err
    # another seed is another design: recollected, its old checkpoints never reused
    s = load_spec(spec)
    s.budget_seed = 9
    collect(s, progress=False)
    assert load_records(root).grid.extra[DESIGN_KEY]["seed"] == 9 and log.exists()


def test_until_decided_stops_when_every_robust_status_is_known(tmp_path):
    root = collect(_budget_spec(tmp_path, "until_decided = true", "max_budget = 1.0"), progress=False)
    rec = load_records(root)
    d = rec.grid.extra[DESIGN_KEY]
    assert d["stop"] == "until_decided" and d["max_budget"] == 1.0
    assert d["robust_status"]["decided"] == d["robust_status"]["pairs"] == 48
    assert d["cells"] < d["grid_cells"]  # the fake's answers are fragile: it stopped early
    obs = rec.missing == 0
    wrong = (obs & ~rec.correct).any(axis=2)
    assert (wrong | obs.all(axis=2)).all()  # every pair: a failure seen, or all K seen


def test_cli_flags_and_their_errors(tmp_path, capsys):
    from leaderboard_audit.collect.cli import main

    spec = _spec(tmp_path)
    assert main([str(spec), "--budget", "0.3", "--seed", "3", "--quiet"]) == 0
    d = load_records(tmp_path / "records").grid.extra[DESIGN_KEY]
    assert d["budget"] == 0.3 and d["seed"] == 3
    for argv, msg in (
        (["--budget", "0.3", "--until-decided", "--max-budget", "0.5"], "not both"),
        (["--until-decided"], "needs its cap"),
        (["--max-budget", "0.5"], "cap of 'until_decided'"),
        (["--budget", "1.5"], "in (0, 1]"),
        (["--budget", "0.01"], "less than the reference configuration"),
        (["--budget", "0.3", "--only-model", "two"], "every model"),
    ):
        capsys.readouterr()
        assert main([str(spec), "--output", str(tmp_path / "x"), *argv]) == 4, argv
        assert msg in capsys.readouterr().err, argv
    # with --replay, --until-decided runs (tests/collect/test_replay_until_decided.py); a budgeted
    # output is no complete records set to replay
    out = str(tmp_path / "r")
    assert main(["--replay", str(tmp_path / "records"), "--until-decided", "--max-budget", "0.5", "--output", out]) == 4
    assert "needs a complete records set" in capsys.readouterr().err


def test_a_resumed_round_prints_no_rate(capsys):
    # collect review 2026-12-07: "0 computed, 62 resumed, nan cells/s"
    from leaderboard_audit.collect.budgeted import _Round

    r = object.__new__(_Round)
    r.observed = np.zeros((1, 3, 4), dtype=bool)
    r.observed[0, :, 0] = True
    r.correct = r.observed.copy()
    r.round, r.budget, r.progress, r.computed, r.resumed, r.busy = 1, 6, True, 0, 3, 0.0
    r._line("reference", "m")
    line = capsys.readouterr().err
    assert "0 computed, 3 resumed" in line and "nan" not in line and "cells/s" not in line
    r.computed, r.busy = 6, 2.0
    r._line("robust status", "m")
    assert "6 computed, 3 resumed, 3.0 cells/s" in capsys.readouterr().err


def test_spec_keys_are_checked():
    m = {"models": [{"path": "a"}]}
    assert spec_from_obj({**m, "budget": 0.2, "budget_seed": 5}).budget == 0.2
    with pytest.raises(ValueError, match="not both"):
        spec_from_obj({**m, "budget": 0.2, "until_decided": True, "max_budget": 0.4})
    with pytest.raises(ValueError, match="a number in"):
        spec_from_obj({**m, "budget": "lots"})
    with pytest.raises(ValueError, match="in \\(0, 1\\]"):
        spec_from_obj({**m, "until_decided": True, "max_budget": 0})


def test_a_budget_below_the_reference_round_is_one_error_before_any_engine(tmp_path):
    with pytest.raises(CollectError, match="give at least"):
        collect(_budget_spec(tmp_path, "budget = 0.02"), progress=False)
    assert not (tmp_path / "records").exists()


FIXTURE_TEST = """
def test_budgeted(audit_collect):
    rec = audit_collect({spec!r})
    assert rec.missing is not None
    assert rec.grid.extra["collection_design"]["budget"] == 0.3
"""


def test_the_collection_fixture_runs_a_budgeted_spec(pytester, tmp_path):
    spec = _budget_spec(tmp_path, "budget = 0.3")
    pytester.makepyfile(FIXTURE_TEST.format(spec=str(spec)))
    r = pytester.runpytest("-p", "no:cacheprovider", "-q")
    assert r.ret == 0, r.stdout.str()


def _certified(root: Path) -> dict[str, bytes]:
    """Every file's bytes, a manifest without its provenance (how each run made the file)."""
    out = {}
    for name, data in _tree(root).items():
        if name.endswith(".manifest.json"):
            man = json.loads(data)
            man.pop("provenance", None)
            data = json.dumps(man, sort_keys=True).encode()
        out[name] = data
    return out


def test_a_ray_budgeted_collection_equals_the_single_process_one(tmp_path, monkeypatch):
    ray = pytest.importorskip("ray")
    from leaderboard_audit.collect.distributed import collect_ray

    ref = collect(_budget_spec(tmp_path / "a", "budget = 0.3"), progress=False)
    spec = load_spec(_budget_spec(tmp_path / "b", "budget = 0.3"))
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv(CALL_LOG_ENV, str(log))  # the driver builds every batch, so it logs them
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=80 * 2**20)
    try:
        got = collect_ray(spec, progress=False)
    finally:
        ray.shutdown()
    assert _certified(got) == _certified(ref)
    cells = _logged(log)
    assert len(cells) == len(set(cells)) == len(_observed(load_records(got)))


def test_a_budgeted_collection_through_the_http_engine_equals_the_in_process_one(tmp_path):
    from helpers.openai_stub import StubServer
    from leaderboard_audit.collect.engines.fake import ByteTokenizer, FakeEngine
    from leaderboard_audit.collect.engines.openai_engine import OpenAIEngine

    spec_a = _budget_spec(tmp_path / "a", "budget = 0.3", models=["m"])
    ref = collect(spec_a, progress=False, engine_factory=lambda m: FakeEngine("fake-m"))
    server = StubServer()  # an OpenAI-compatible server on 127.0.0.1 over the fake engine
    try:
        opts = {"base_url": server.url, "prompts_per_request": 0, "concurrency": 2, "backoff_s": 0.01}
        spec = load_spec(_budget_spec(tmp_path / "b", "budget = 0.3", models=["m"]))
        spec.engine, spec.engine_options = "openai", opts
        http = lambda m: OpenAIEngine("fake-m", tokenizer=ByteTokenizer(), **opts)  # noqa: E731
        got = collect(spec, progress=False, engine_factory=http)
        assert server.seen  # every batch went over HTTP
    finally:
        server.close()
    data = {k: v for k, v in _tree(got).items() if k != "grid.json" and not k.endswith(".manifest.json")}
    assert data == {k: v for k, v in _tree(ref).items() if k in data} and len(data) == 4
    assert load_records(got).grid.extra[DESIGN_KEY]["cells"] == load_records(ref).grid.extra[DESIGN_KEY]["cells"]


def test_a_dry_run_of_a_budgeted_spec_says_its_ceiling(tmp_path, capsys):
    from leaderboard_audit.collect.cli import main

    assert main([str(_spec(tmp_path)), "--budget", "0.3", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "budgeted collection (--budget 0.3): at most 30% of the grid's cells" in out
    assert not (tmp_path / "records").exists()
