"""Collector hardening (issue 11, items 22-24) and incremental collection by (benchmark, model) (issue 14).

Each test builds the bad input with the fake engine and asserts the clean behaviour:
a checkpoint or a final file that lost lines is recomputed, never trusted; bad specs,
outputs and model names are one error line (exit 4), not a traceback.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import ClassVar

import pytest
from helpers.collect import _spec, _tree

from leaderboard_audit.collect.cli import main as collect_main
from leaderboard_audit.collect.engines.fake import FakeEngine
from leaderboard_audit.collect.run import collect
from leaderboard_audit.records import load_records
from helpers.paths import REPO


class _Boom(RuntimeError):
    pass


class CrashingFake(FakeEngine):
    """Raises (instead of os._exit) after ``limit`` engine calls, leaving checkpoints behind."""

    def __init__(self, path: str, limit: int) -> None:
        super().__init__(path)
        self.limit = limit

    def _tick(self) -> None:
        super()._tick()
        if self.calls > self.limit:
            raise _Boom("engine died")


class CountingFake(FakeEngine):
    log: ClassVar[list[str]] = []

    def _tick(self) -> None:
        super()._tick()
        CountingFake.log.append(self.model)


def _ref(tmp_path: Path, **kw) -> dict[str, bytes]:
    return _tree(collect(_spec(tmp_path / "ref", **kw), progress=False))


def _without_provenance(tree: dict[str, bytes]) -> dict[str, bytes]:
    """Manifests carry how a run was made (device, versions); the rest must match byte for byte."""
    out = {}
    for k, v in tree.items():
        if k.endswith(".manifest.json"):
            obj = json.loads(v)
            obj.pop("provenance")
            v = json.dumps(obj, sort_keys=True).encode()
        out[k] = v
    return out


# --------------------------------------------------------------------------- item 22


@pytest.mark.parametrize("damage", ["drop_line", "drop_raw", "drop_config", "bad_json"])
def test_damaged_checkpoint_is_recomputed(tmp_path, damage, capsys):
    ref = _ref(tmp_path)
    spec = _spec(tmp_path / "b")
    with pytest.raises(_Boom):
        collect(spec, progress=False, engine_factory=lambda m: CrashingFake(m.path, 5))
    out = tmp_path / "b" / "records"
    chunk = min((out / "_work" / "arc").rglob("chunk-00000.json"))
    obj = json.loads(chunk.read_text())
    assert len(obj["ids"]) == 5
    if damage == "drop_line":  # right ids, one line missing: was accepted before
        obj["lines"] = obj["lines"][:-1]
    elif damage == "drop_raw":
        obj["raw"] = obj["raw"][:-1]
    elif damage == "drop_config":
        del obj["lines"][2]["correct"]["ll|cloze_plain"]
    chunk.write_text("{not json" if damage == "bad_json" else json.dumps(obj))
    capsys.readouterr()
    collect(spec, progress=True)
    assert _without_provenance(_tree(out)) == _without_provenance(ref)
    assert "recomputing it" in capsys.readouterr().err
    rec = load_records(out)
    assert len(rec.items) == 24


# --------------------------------------------------------------------------- item 23


@pytest.mark.parametrize("damage", ["truncate", "flip_byte", "delete_raw", "delete_manifest"])
def test_damaged_final_file_is_recollected(tmp_path, damage, capsys):
    spec = _spec(tmp_path)
    root = collect(spec, progress=False)
    ref = _without_provenance(_tree(root))
    f = root / "arc" / "two.jsonl"
    data = f.read_bytes()
    if damage == "truncate":  # a final file cut after a complete run was trusted before
        f.write_bytes(data[: data.rindex(b"\n", 0, len(data) - 1) + 1])
    elif damage == "flip_byte":
        i = data.index(b'"correct":{') + len(b'"correct":{"gen|digit_labels|p0":')
        f.write_bytes(data[:i] + (b"1" if data[i : i + 1] == b"0" else b"0") + data[i + 1 :])
    elif damage == "delete_raw":
        (root / "_raw" / "arc" / "two.jsonl").unlink()
    else:
        (root / "_raw" / "arc" / "two.manifest.json").unlink()
    capsys.readouterr()
    collect(spec, progress=True)
    assert _without_provenance(_tree(root)) == ref
    err = capsys.readouterr().err
    if damage in ("truncate", "flip_byte"):
        assert "arc/two.jsonl" in err and "recollecting" in err


def test_manifest_records_line_count_hash_and_provenance(tmp_path):
    root = collect(_spec(tmp_path), progress=False)
    man = json.loads((root / "_raw" / "mmlu" / "m__one.manifest.json").read_text())
    import hashlib

    data = (root / "mmlu" / "m__one.jsonl").read_bytes()
    assert man["records"] == {"path": "mmlu/m__one.jsonl", "lines": 12, "sha256": hashlib.sha256(data).hexdigest()}
    assert man["raw"]["lines"] == 12
    prov = man["provenance"]
    assert prov["engine"] == "fake" and prov["dtype"] == "auto"
    assert prov["versions"]["python"] and "leaderboard-audit" in prov["versions"]
    assert prov["device"]["cpu_count"] == os.cpu_count()
    assert not list(root.rglob("*.fingerprint"))


def test_weight_hashes_of_a_model_folder(tmp_path):
    from leaderboard_audit.collect.manifest import weight_hashes

    (tmp_path / "model.safetensors").write_bytes(b"abc")
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "notes.txt").write_text("ignored")
    h = weight_hashes(str(tmp_path))
    assert h == {
        "model.safetensors": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        "config.json": "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
    }
    assert weight_hashes("org/hub-id") == {}


# --------------------------------------------------------------------------- item 24


def _run_cli(args: list[str], capsys) -> tuple[int, str]:
    capsys.readouterr()
    rc = collect_main(args)
    err = capsys.readouterr().err
    return rc, err


def test_missing_spec(tmp_path, capsys):
    rc, err = _run_cli([str(tmp_path / "nope.toml")], capsys)
    assert rc == 4 and "nope.toml: no such collection spec" in err and "Traceback" not in err


def test_bad_toml_names_file_and_line(tmp_path, capsys):
    p = tmp_path / "bad.toml"
    p.write_text('output = "x"\nengine = "fake"\nn_items = = 3\n')
    rc, err = _run_cli([str(p)], capsys)
    assert rc == 4 and f"{p}:3: invalid TOML" in err and "fix:" in err
    assert not (tmp_path / "x").exists()


def test_unknown_spec_key_names_line(tmp_path, capsys):
    p = _spec(tmp_path)
    p.write_text(p.read_text().replace('engine = "fake"', 'engine = "fake"\nchunk_itmes = 3'))
    rc, err = _run_cli([str(p)], capsys)
    assert rc == 4 and f"{p}:3: unknown spec key(s) 'chunk_itmes'" in err
    assert not (tmp_path / "records").exists()


@pytest.mark.parametrize("name", ["../evil", "a/../../evil", ".hidden", "/abs", "x\x1b[2J"])
def test_model_name_that_escapes_is_refused(tmp_path, capsys, name):
    p = _spec(tmp_path, models=["ok"])
    esc = name.replace("\x1b", "\\u001b")
    p.write_text(p.read_text().replace('name = "ok"', f'name = "{esc}"'))
    rc, err = _run_cli([str(p)], capsys)
    assert rc == 4 and "cannot be a records file name" in err and "Traceback" not in err
    assert f"{p}:" in err
    assert not (tmp_path / "records").exists() and not (tmp_path / "evil.jsonl").exists()


def test_unwritable_output(tmp_path, capsys):
    p = _spec(tmp_path)
    (tmp_path / "afile").write_text("x")
    rc, err = _run_cli([str(p), "--output", str(tmp_path / "afile" / "records")], capsys)
    assert rc == 4 and "cannot write the output directory" in err and "Traceback" not in err
    rc, err = _run_cli([str(p), "--output", str(tmp_path / "afile")], capsys)
    assert rc == 4 and "not a directory" in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through permission bits")
def test_read_only_output(tmp_path, capsys):
    p = _spec(tmp_path)
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        rc, err = _run_cli([str(p), "--output", str(ro)], capsys)
    finally:
        ro.chmod(0o755)
    assert rc == 4 and "cannot write the output directory" in err


def test_missing_benchmark_file(tmp_path, capsys):
    p = _spec(tmp_path)
    (tmp_path / "bench" / "mmlu.jsonl").unlink()
    rc, err = _run_cli([str(p)], capsys)
    assert rc == 4 and "mmlu.jsonl" in err and "cannot read benchmark 'mmlu'" in err


def test_pytest_audit_collect_bad_spec_is_a_usage_error(pytester, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("output = [\n")
    r = pytester.runpytest("--audit-collect", str(bad), "-p", "no:cacheprovider", "-q")
    assert r.ret == 4, r.stdout.str() + r.stderr.str()
    text = r.stdout.str() + r.stderr.str()
    assert "INTERNALERROR" not in text and "invalid TOML" in text
    r = pytester.runpytest("--audit-collect", str(tmp_path / "missing.toml"), "-p", "no:cacheprovider", "-q")
    assert r.ret == 4 and "no such collection spec" in r.stdout.str() + r.stderr.str()


# --------------------------------------------------------------------------- incremental (issue 14)


def test_adding_a_model_collects_only_that_model(tmp_path):
    spec = _spec(tmp_path, models=["a", "b"])
    root = collect(spec, progress=False, engine_factory=lambda m: CountingFake(m.path))
    before = {k: v for k, v in _tree(root).items() if k != "grid.json"}
    stamps = {p: p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file() and p.name != "grid.json"}
    CountingFake.log.clear()
    spec = _spec(tmp_path, models=["a", "b", "c"])
    collect(spec, progress=False, engine_factory=lambda m: CountingFake(m.path))
    assert set(CountingFake.log) == {"fake-c"}  # no engine call for a or b
    after = _tree(root)
    assert {k: after[k] for k in before} == before
    assert stamps == {p: p.stat().st_mtime_ns for p in stamps}
    assert (root / "arc" / "c.jsonl").exists() and len(load_records(root).models) == 3
    # the same files as collecting all three from scratch
    fresh = collect(_spec(tmp_path / "fresh", models=["a", "b", "c"]), progress=False)
    assert _without_provenance(_tree(fresh)) == _without_provenance(after)


def test_adding_a_benchmark_keeps_the_other_files(tmp_path):
    spec = _spec(tmp_path, models=["a"])
    spec.write_text(spec.read_text().replace('benchmarks = ["arc", "mmlu"]', 'benchmarks = ["arc"]'))
    root = collect(spec, progress=False)
    arc = (root / "arc" / "a.jsonl").stat().st_mtime_ns
    CountingFake.log.clear()
    spec = _spec(tmp_path, models=["a"])
    collect(spec, progress=False, engine_factory=lambda m: CountingFake(m.path))
    assert (root / "arc" / "a.jsonl").stat().st_mtime_ns == arc
    assert len(CountingFake.log) == 2 * 3  # mmlu only: 3 chunks x (generate + score)


def test_only_model_cli_then_submission_audit(tmp_path, capsys, pytester):
    spec = _spec(tmp_path, models=["a", "b"])
    assert collect_main([str(spec), "--quiet"]) == 0
    spec = _spec(tmp_path, models=["a", "b", "new"])
    root = tmp_path / "records"
    a_before = (root / "arc" / "a.jsonl").stat().st_mtime_ns
    assert collect_main([str(spec), "--quiet", "--only-model", "new"]) == 0
    assert (root / "arc" / "new.jsonl").exists() and (root / "arc" / "a.jsonl").stat().st_mtime_ns == a_before
    rc, err = _run_cli([str(spec), "--quiet", "--only-model", "nobody"], capsys)
    assert rc == 4 and "'nobody' is not a model of the spec" in err
    r = pytester.runpytest("--audit", str(root), "--audit-submission", "new", "-p", "no:cacheprovider", "-q")
    assert r.ret in (0, 1), r.stdout.str()


def test_fixtures_real_is_complete_for_its_spec(tmp_path):
    """Every bundled real file matches its manifest, so rerunning its spec computes nothing."""
    import shutil

    from leaderboard_audit.collect.spec import load_spec

    real = REPO / "fixtures" / "real"
    spec = load_spec(real / "spec.toml")
    if spec.benchmarks_dir is None or not spec.benchmarks_dir.is_dir():
        pytest.skip("the shared benchmarks are not next to this checkout")
    shutil.copytree(real, tmp_path / "real")
    spec.output = tmp_path / "real"

    def no_engine(m):
        raise AssertionError(f"{m.name} would be recollected")

    collect(spec, progress=False, engine_factory=no_engine)
    assert _tree(tmp_path / "real") == _tree(real)


# --------------------------------------------------------------------------- batches vs checkpoints (issue 14.1)


class BatchDependentFake(FakeEngine):
    """A fake whose answers depend on the batch size, like an engine whose numerics do."""

    def generate(self, prompts, max_tokens, *, seed=1234):
        return super().generate([list(p) + [len(prompts) % 7 + 2] for p in prompts], max_tokens, seed=seed)


def _records_only(tree: dict[str, bytes]) -> dict[str, bytes]:
    return {k: v for k, v in tree.items() if k != "grid.json" and not k.endswith(".manifest.json")}


def test_batch_items_groups_chunks_into_one_engine_call(tmp_path):
    ref = collect(_spec(tmp_path / "a"), progress=False)
    spec = _spec(tmp_path / "b")
    spec.write_text("batch_items = 15\n" + spec.read_text())
    CountingFake.log.clear()
    root = collect(spec, progress=False, engine_factory=lambda m: CountingFake(m.path))
    # 12 items per benchmark in chunks of 5 -> 3 chunks -> 1 group of 3: one generate + one score call
    assert len(CountingFake.log) == 2 * 2 * 2
    assert _records_only(_tree(root)) == _records_only(_tree(ref))  # a batch-invariant engine: same bits
    assert json.loads((root / "grid.json").read_text())["collector"]["batch_items"] == 15


def test_resume_inside_a_group_recomputes_the_whole_group(tmp_path):
    """A batch-dependent engine still gives byte-identical files after a partial group is resumed."""
    ref_spec = _spec(tmp_path / "ref")
    ref_spec.write_text("batch_items = 10\n" + ref_spec.read_text())
    ref = collect(ref_spec, progress=False, engine_factory=lambda m: BatchDependentFake(m.path))
    spec = _spec(tmp_path / "b")
    spec.write_text("batch_items = 10\n" + spec.read_text())

    class Crash(BatchDependentFake):
        def _tick(self):
            super()._tick()
            if self.calls > 2:
                raise _Boom("engine died")

    with pytest.raises(_Boom):
        collect(spec, progress=False, engine_factory=lambda m: Crash(m.path))
    work = tmp_path / "b" / "records" / "_work" / "arc" / "m__one"
    assert (work / "chunk-00000.json").exists() and (work / "chunk-00001.json").exists()
    (work / "chunk-00001.json").unlink()  # half of group 0 survives
    collect(spec, progress=False, engine_factory=lambda m: BatchDependentFake(m.path))
    out = tmp_path / "b" / "records"
    assert _without_provenance(_tree(out)) == _without_provenance(_tree(ref))


def test_packaged_weights_are_verified_against_the_recorded_hash(tmp_path, monkeypatch):
    from leaderboard_audit.collect import models

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.gguf").write_bytes(b"weights")
    src = models.GGUFSource("t", "test", ("pkg",), (("pkg", "m.gguf"),), "0" * 64, version="1.0")
    monkeypatch.setitem(models.KNOWN, "t", src)
    calls = []

    def module_dir(module, package, *, install, version=None):
        calls.append((package, version))
        return tmp_path / module

    monkeypatch.setattr(models, "_module_dir", module_dir)
    with pytest.raises(ValueError, match="sha256 differs from the recorded"):
        models.gguf_file("t")
    assert calls == [("pkg", "1.0")]
    import hashlib

    monkeypatch.setitem(
        models.KNOWN, "t", src.__class__(**{**src.__dict__, "sha256": hashlib.sha256(b"weights").hexdigest()})
    )
    assert models.gguf_file("t") == tmp_path / "pkg" / "m.gguf"


# --------------------------------------------------------------------------- a run that stops before collecting


@pytest.mark.parametrize("given", ["new", "empty"])
def test_a_run_that_stops_before_collecting_leaves_no_partial_output(tmp_path, given):
    """An engine that cannot load (torch missing) left grid.json and _work/ in the output
    folder (UX review 2026-12-04 #30): a new folder is removed, an empty one left empty."""
    spec = _spec(tmp_path)
    out = tmp_path / "records"
    if given == "empty":
        out.mkdir()

    def no_torch(m):
        raise ModuleNotFoundError("No module named 'torch'")

    with pytest.raises(ModuleNotFoundError):
        collect(spec, progress=False, engine_factory=no_torch)
    assert (not out.exists()) if given == "new" else (out.is_dir() and not list(out.iterdir()))


def test_a_run_that_stops_after_collecting_keeps_its_checkpoints(tmp_path):
    spec = _spec(tmp_path)
    with pytest.raises(_Boom):
        collect(spec, progress=False, engine_factory=lambda m: CrashingFake(m.path, 5))
    out = tmp_path / "records"
    assert (out / "grid.json").is_file() and list(out.rglob("chunk-*.json"))  # resumable
