"""Collection on a local Ray cluster (2 CPU workers) equals a single-process run byte for byte.

Skips without Ray (``pip install 'leaderboard-audit[ray]'``). The fake engine runs
everywhere; ``LEADERBOARD_AUDIT_REAL=1`` in the collection environment (torch,
transformers) adds the transformers engine on SmolLM2-135M-Instruct.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from leaderboard_audit.collect.distributed import collect_ray, plan_slots  # noqa: E402
from leaderboard_audit.collect.errors import CollectError  # noqa: E402
from leaderboard_audit.collect.run import collect  # noqa: E402
from leaderboard_audit.collect.spec import spec_from_obj  # noqa: E402
from leaderboard_audit.records import load_records  # noqa: E402
from helpers.collect import arc_lines, mmlu_lines  # noqa: E402
from helpers import paths  # noqa: E402

SHARED = paths.SHARED / "benchmarks"


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=80 * 2**20)
    yield
    ray.shutdown()


def _files(d: Path) -> dict[str, str]:
    d.mkdir(parents=True, exist_ok=True)
    arc, mm = d / "arc.jsonl", d / "mmlu.jsonl"
    arc.write_text(arc_lines(23))
    mm.write_text(mmlu_lines(17))
    return {"arc": str(arc), "mmlu": str(mm)}


def _spec(tmp: Path, out: str, **kw):
    obj = {
        "output": str(tmp / out),
        "engine": "fake",
        "n_items": 12,
        "chunk_items": 5,
        "benchmarks": ["arc", "mmlu"],
        "benchmark_files": _files(tmp / "bench"),
        "models": [{"name": "m/one", "path": "fake-one"}, {"name": "two", "path": "fake-two"}],
    }
    obj.update(kw)
    return spec_from_obj(obj)


def _tree(root: Path) -> dict[str, bytes]:
    """Every file's bytes; a manifest counts by what it certifies (fingerprints, line counts and
    hashes), not by its provenance, which says how each run made the file."""
    import json

    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            data = p.read_bytes()
            if p.name.endswith(".manifest.json"):
                man = json.loads(data)
                man.pop("provenance", None)
                data = json.dumps(man, sort_keys=True).encode()
            out[str(p.relative_to(root))] = data
    return out


def test_ray_run_is_byte_identical_to_a_single_process_run_and_reruns_as_a_no_op(cluster, tmp_path, capsys):
    ref = collect(_spec(tmp_path, "ref"), progress=False)
    got = collect_ray(_spec(tmp_path, "ray"), progress=True)
    assert _tree(got) == _tree(ref)
    assert not (got / "_work").exists()
    assert len(load_records(got).items) == 24
    err = capsys.readouterr().err
    # 3 chunks x 2 benchmarks x 2 calls = 12 engine calls per model, spread over both actors
    for name in ("m/one", "two"):
        line = next(x for x in err.splitlines() if x.startswith(f"[collect] ray: {name} on "))
        calls = json.loads(line.split("per actor ")[1])
        assert len(calls) == 2 and sum(calls) == 12 and min(calls) >= 1, line
    # a second run finds every file complete: no actor, no file rewritten
    before = {p: p.stat().st_mtime_ns for p in got.rglob("*") if p.is_file() and p.name != "grid.json"}
    collect_ray(_spec(tmp_path, "ray"), progress=True)
    assert "[collect] ray: " not in capsys.readouterr().err
    assert {p: p.stat().st_mtime_ns for p in before} == before
    assert not (got / "_work").exists()  # a no-op rerun leaves no checkpoint folders behind


def test_a_killed_ray_run_resumes_to_the_same_bytes(cluster, tmp_path):
    ref = collect(_spec(tmp_path, "ref"), progress=False)
    # each actor process exits like SIGKILL after 2 engine calls, its restart too: the driver stops
    # with a named error (B25: no 60-line Ray traceback) that says how to resume
    with pytest.raises(CollectError, match="engine actor .* died 2 times") as e:
        collect_ray(_spec(tmp_path, "ray"), progress=False, actor_env={"LEADERBOARD_AUDIT_FAKE_CRASH_AFTER": "2"})
    assert "run the same command again" in str(e.value)
    work = tmp_path / "ray" / "_work"
    assert any(work.rglob("chunk-*.json")), "some chunks were checkpointed before the crash"
    assert not (tmp_path / "ray" / "arc" / "m__one.jsonl").exists()
    got = collect_ray(_spec(tmp_path, "ray"), progress=False)
    assert _tree(got) == _tree(ref)


def test_an_actor_killed_once_is_restarted_and_the_run_finishes(cluster, tmp_path):
    # B25: one engine actor dies once mid-run (the review SIGKILLed a ray::EngineActor): it is
    # restarted, its call retried, and the run ends with the uninterrupted run's bytes
    ref = collect(_spec(tmp_path, "ref"), progress=False)
    env = {"LEADERBOARD_AUDIT_FAKE_CRASH_AFTER": "1", "LEADERBOARD_AUDIT_FAKE_CRASH_ONCE": str(tmp_path / "died")}
    got = collect_ray(_spec(tmp_path, "ray"), progress=False, actor_env=env)
    assert (tmp_path / "died").exists(), "an actor died"
    assert _tree(got) == _tree(ref)


def test_single_process_run_killed_then_finished_on_ray(cluster, tmp_path):
    import subprocess
    import sys

    ref = collect(_spec(tmp_path, "ref"), progress=False)
    spec_path = tmp_path / "spec.json"
    obj = {
        "output": str(tmp_path / "mixed"),
        "engine": "fake",
        "n_items": 12,
        "chunk_items": 5,
        "benchmarks": ["arc", "mmlu"],
        "benchmark_files": _files(tmp_path / "bench"),
        "models": [{"name": "m/one", "path": "fake-one"}, {"name": "two", "path": "fake-two"}],
    }
    spec_path.write_text(json.dumps(obj))
    code = (
        "import json, sys; from leaderboard_audit.collect.run import collect; "
        f"collect(json.load(open({str(spec_path)!r})), progress=False)"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        env=dict(os.environ, LEADERBOARD_AUDIT_FAKE_CRASH_AFTER="5"),
        capture_output=True,
        timeout=120,
    )
    assert r.returncode == 137, r.stderr.decode()[-2000:]
    got = collect_ray(spec_from_obj(obj), progress=False)
    assert _tree(got) == _tree(ref)


def test_cli_ray_flag(cluster, tmp_path, capsys):
    from leaderboard_audit.collect.cli import main

    files = _files(tmp_path / "bench")
    lines = [
        f'output = "{tmp_path / "cli"}"',
        'engine = "fake"',
        "n_items = 6",
        "chunk_items = 5",
        'benchmarks = ["arc", "mmlu"]',
        "[benchmark_files]",
    ]
    lines += [f'{k} = "{v}"' for k, v in files.items()]
    lines += ["[[models]]", 'name = "two"', 'path = "fake-two"']
    (tmp_path / "s.toml").write_text("\n".join(lines) + "\n")
    assert main([str(tmp_path / "s.toml"), "--ray", "--ray-actors", "1"]) == 0
    out = capsys.readouterr()
    assert "records: " in out.out and "12 items x 26 configs" in out.out
    assert "[collect] ray: two on 1 actor(s)" in out.err
    ref = collect(_spec(tmp_path, "ref2", n_items=6, models=[{"name": "two", "path": "fake-two"}]), progress=False)
    assert _tree(tmp_path / "cli") == _tree(ref)


def test_slot_plan():
    s = plan_slots({"CPU": 8.0}, engine="vllm", cpus_per_actor=2)
    assert (s.actors, s.num_cpus, s.num_gpus) == (4, 2.0, 0.0)
    assert s.cpu_binds == ["0-1", "2-3", "4-5", "6-7"]
    s = plan_slots({"CPU": 64.0, "GPU": 8.0}, engine="vllm", tensor_parallel_size=2)
    assert (s.actors, s.num_gpus, s.cpu_binds) == (4, 2.0, [None] * 4)
    assert plan_slots({"CPU": 3.0}, engine="fake").cpu_binds == [None, None, None]
    assert plan_slots({"CPU": 16.0, "GPU": 4.0}, engine="vllm", max_actors=3).actors == 3
    with pytest.raises(ValueError, match="tensor_parallel_size = 4"):
        plan_slots({"GPU": 2.0}, engine="vllm", tensor_parallel_size=4)


@pytest.mark.skipif(os.environ.get("LEADERBOARD_AUDIT_REAL") != "1", reason="set LEADERBOARD_AUDIT_REAL=1")
def test_transformers_engine_on_ray_equals_single_process(cluster, tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from leaderboard_audit.collect.benchmarks import local_file

    base = {
        "engine": "transformers",
        "n_items": 2,
        "chunk_items": 1,
        "benchmarks": ["arc", "truthfulqa"],
        "benchmark_files": {b: str(local_file(b, SHARED)) for b in ("arc", "truthfulqa")},
        "engine_options": {"threads": 1},
        "models": [{"name": "SmolLM2-135M-Instruct", "path": "gguf:smollm2-135m-instruct"}],
    }
    ref = collect(spec_from_obj(dict(base, output=str(tmp_path / "ref"))), progress=False)
    got = collect_ray(spec_from_obj(dict(base, output=str(tmp_path / "ray"))), progress=False)
    assert _tree(got) == _tree(ref)
