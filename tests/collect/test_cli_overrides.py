"""`leaderboard-audit collect --benchmarks-dir`: a spec written for another checkout (its
benchmarks_dir points at a folder that is not there) collects once the folder is given."""

from __future__ import annotations


from leaderboard_audit.collect.cli import main
from leaderboard_audit.records import load_records
from helpers import paths

DATA = paths.DATA / "benchmarks"

SPEC = """
output = "out"
engine = "fake"
n_items = 3
benchmarks = ["arc", "mmlu"]
benchmarks_dir = "../../../shared/benchmarks"

[[models]]
name = "one"
path = "fake-one"
"""


def test_benchmarks_dir_overrides_a_spec_from_elsewhere(tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    assert main([str(spec), "--quiet", "--no-validate"]) == 4  # the spec's folder is not there
    assert "cannot read benchmark" in capsys.readouterr().err
    assert main([str(spec), "--quiet", "--benchmarks-dir", str(DATA), "--output", str(tmp_path / "out")]) == 0
    rec = load_records(tmp_path / "out")
    assert rec.shape[:2] == (1, 6) and rec.benchmarks == ("arc", "mmlu")


def test_benchmarks_dir_that_is_not_a_folder_is_named(tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    assert main([str(spec), "--quiet", "--benchmarks-dir", str(tmp_path / "nowhere")]) == 4
    err = capsys.readouterr().err
    assert "--benchmarks-dir: not a folder" in err and "fix:" in err


def test_a_gguf_model_without_the_collect_extra_names_what_to_install(tmp_path, capsys, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "torch" else real(n, *a))
    spec = tmp_path / "spec.toml"
    spec.write_text(
        SPEC.replace('path = "fake-one"', 'path = "gguf:smollm2-135m-instruct"').replace(
            "../../../shared/benchmarks", str(DATA)
        )
    )
    assert main([str(spec), "--quiet", "--output", str(tmp_path / "o")]) == 4
    err = capsys.readouterr().err
    assert "needs torch" in err and 'pip install -e ".[collect]"' in err and "Traceback" not in err
