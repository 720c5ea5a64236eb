"""Hostile custom benchmark files: a FIFO, deep nesting, an infinite answer (issue 25: B13, B29, B30)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

SPEC = """output = "out_{name}"
engine = "fake"
n_items = 4
benchmarks = ["quiz"]
[benchmark_sources.quiz]
files = "{file}"
question = "q"
choices = "c"
answer = "a"
[[models]]
name = "m"
path = "fake-m"
"""


def _good() -> str:
    return "".join(json.dumps({"q": f"Q{i}?", "c": ["w", "x", "y", "z"], "a": i % 4}) + "\n" for i in range(12))


def _collect(tmp_path, name: str) -> subprocess.CompletedProcess:
    spec = tmp_path / f"spec_{name}.toml"
    spec.write_text(SPEC.format(name=name, file=f"{name}.jsonl"))
    env = dict(os.environ, LEADERBOARD_AUDIT_CACHE="off")
    code = "import sys; from leaderboard_audit.collect.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, str(spec)], cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX only")
def test_a_fifo_benchmark_file_is_refused_not_waited_on(tmp_path):
    os.mkfifo(tmp_path / "fifo.jsonl")
    r = _collect(tmp_path, "fifo")
    assert r.returncode == 4 and "FIFO" in r.stderr and "Traceback" not in r.stderr, r.stderr


@pytest.mark.parametrize(
    ("name", "line", "needle"),
    [
        ("deep", '{"q":' + "[" * 100000 + "]" * 100000 + "}", "deep.jsonl:13: unreadable JSON (nested too deeply)"),
        ("inf", '{"q":"Q?","c":["w","x","y","z"],"a":1e400}', "OverflowError"),
    ],
)
def test_unreadable_rows_are_named_errors_not_tracebacks(tmp_path, name, line, needle):
    (tmp_path / f"{name}.jsonl").write_text(_good() + line + "\n")
    r = _collect(tmp_path, name)
    assert r.returncode == 4 and needle in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_choices_mapped_to_a_dict_is_named_not_an_empty_file(tmp_path):
    """B31: a hub-style ``{"text": [...], "label": [...]}`` choices field gave every row 2 'options'
    (the dict's keys), skipped them all and wrote an empty records file."""
    rows = [{"q": f"Q{i}?", "a": i % 4, "ch": {"text": ["w", "x", "y", "z"], "label": list("ABCD")}} for i in range(12)]
    (tmp_path / "dict.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "spec_dict.toml").write_text(SPEC.format(name="dict", file="dict.jsonl").replace('"c"', '"ch"'))
    code = "import sys; from leaderboard_audit.collect.cli import main; sys.exit(main(sys.argv[1:]))"
    env = dict(os.environ, LEADERBOARD_AUDIT_CACHE="off")
    r = subprocess.run(
        [sys.executable, "-c", code, "spec_dict.toml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert r.returncode == 4 and "Traceback" not in r.stderr, r.stderr
    assert "the choices field 'ch' is an object" in r.stderr and 'choices = "ch.text"' in r.stderr, r.stderr
    assert not (tmp_path / "out_dict" / "quiz" / "m.jsonl").exists()


def test_every_row_skipped_names_the_count():
    """B31: rows that all have the wrong number of choices are an error naming the count."""
    from leaderboard_audit.collect.benchmarks import load_mapped_items

    rows = [{"q": f"Q{i}?", "c": ["w", "x"], "a": 0} for i in range(12)]
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "two.jsonl")
        with open(f, "w") as out:
            out.write("".join(json.dumps(r) + "\n" for r in rows))
        with pytest.raises(ValueError, match=r"0 of 12 rows gave an item \(each needs 4 choices"):
            load_mapped_items("quiz", {"files": f, "question": "q", "choices": "c", "answer": "a"}, 4)
