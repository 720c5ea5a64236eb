"""The package as a pip user gets it (issue 42, item 4; UX review 2026-12-04 #6).

Builds the wheel from this checkout, installs it in a fresh venv outside the source tree
(pip: the configured index or cache, no other network), and runs there the README's
"From a wheel" lines, verbatim: the first lesson (``leaderboard-audit demo``), the demo's
records as a folder, ``pytest --audit`` on them, and a bundled doc. Also: the LICENSE in
the wheel, and ``-n`` with the ``xdist`` extra. About 30 s (a venv install).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import zipfile

import pytest

from helpers.paths import REPO
from helpers.wheel import clean_env, fresh_venv, run

pytestmark = [pytest.mark.wheel, pytest.mark.slow]  # -m "not slow" (the inner loop) leaves it out

# pip byte-compiles every module it installs unless told not to: 25 of the install's 45 s
# (numpy, scipy, pandas, pyarrow), and nothing this test checks depends on .pyc files
NO_COMPILE = ("--no-compile",)

MARKER = "<!-- first lesson from a wheel: tests/test_bundled_wheel.py runs these lines -->"


def readme_wheel_lines() -> list[str]:
    text = (REPO / "README.md").read_text()
    assert MARKER in text, "README.md lost its 'From a wheel' block"
    m = re.search(re.escape(MARKER) + r"\n```bash\n(.*?)```", text, re.S)
    assert m, "the marker must be followed by a ```bash block"
    return [line.split("#", 1)[0].strip() for line in m[1].splitlines() if line.split("#", 1)[0].strip()]


def check_wheel_contents(wheel) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    licence = [n for n in names if n.endswith(".dist-info/licenses/LICENSE") or n.endswith(".dist-info/LICENSE")]
    assert licence, "no LICENSE in the wheel"
    assert "Apache License" in zipfile.ZipFile(wheel).read(licence[0]).decode()
    assert "leaderboard_audit/demo/grid.json" in names
    assert sum(n.startswith("leaderboard_audit/demo/") and n.endswith(".jsonl") for n in names) == 24
    assert {"leaderboard_audit/docs/records.md", "leaderboard_audit/docs/spec/AUDITS.md"} <= set(names)
    meta = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "Provides-Extra: xdist" in meta and "extra == 'xdist'" in meta.replace('"', "'")


def run_readme_lines(wheel, venv, scratch) -> None:
    """The README's "From a wheel" lines, verbatim but for the wheel's path."""
    env = clean_env(venv)
    lines = readme_wheel_lines()
    assert lines[0].startswith("pip install dist/leaderboard_audit-") and lines[0].endswith(".whl")
    assert wheel.name == lines[0].split("/")[-1], "README names a wheel file this version does not build"
    outputs = {}
    for line in lines:
        argv = shlex.split(line)
        if argv[:2] == ["pip", "install"]:
            argv = ["python", "-m", "pip", "install", "-q", *NO_COMPILE, str(wheel)]
        r = subprocess.run(argv, cwd=scratch, env=env, capture_output=True, text=True, timeout=300)
        outputs[line] = r
        # the demo fails on purpose (exit 1); anything else is an error
        assert r.returncode in (0, 1), f"{line!r} exited {r.returncode}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    demo = outputs["leaderboard-audit demo"]
    assert demo.returncode == 1 and "what to do next:" in demo.stdout
    assert "no such file" not in demo.stdout + demo.stderr
    assert (scratch / "demo" / "grid.json").is_file() and len(list((scratch / "demo").rglob("*.jsonl"))) == 24
    tests = outputs["pytest --audit=demo --tb=no -q"]
    assert tests.returncode == 1 and re.search(r"\d+ failed, \d+ passed", tests.stdout), tests.stdout[-2000:]
    doc = outputs["leaderboard-audit docs records"]
    assert doc.returncode == 0 and doc.stdout.startswith("# Records")
    # the installed package is the wheel's, not this checkout
    where = run(["python", "-c", "import leaderboard_audit; print(leaderboard_audit.__file__)"], cwd=scratch, env=env)
    assert str(venv) in where.stdout and str(REPO) not in where.stdout


def run_with_xdist_extra(wheel, venv, scratch) -> None:
    env = clean_env(venv)
    run(["python", "-m", "pip", "install", "-q", *NO_COMPILE, f"{wheel}[xdist]"], cwd=scratch, env=env)
    r = subprocess.run(
        ["pytest", "--audit", "demo", "-n", "2", "--tb=no", "-q", "-k", "pooled and band"],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode in (0, 1) and "unrecognized arguments" not in r.stderr, r.stderr[-2000:]
    assert re.search(r"\d+ (passed|failed)", r.stdout), r.stdout[-2000:]


def test_the_wheel_in_a_fresh_venv_outside_the_tree(tmp_path, built_wheel):
    """One test (one venv, whichever xdist worker runs it; the run's one wheel build): the
    wheel's contents, the README's first lesson from it, then ``-n`` with the ``xdist`` extra."""
    wheel = built_wheel
    check_wheel_contents(wheel)
    venv = fresh_venv(tmp_path / "venv")
    scratch = tmp_path / "scratch"  # outside the source tree: no fixtures/, no docs/, no conftest
    scratch.mkdir()
    assert not str(scratch).startswith(str(REPO))
    run_readme_lines(wheel, venv, scratch)
    run_with_xdist_extra(wheel, venv, scratch)
