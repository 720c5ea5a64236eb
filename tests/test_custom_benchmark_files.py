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
