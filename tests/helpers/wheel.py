"""Building the package's wheel from this checkout, and a fresh venv to install it in.

The wheel is built from a copy of what the build reads (so the checkout gets no ``build/``
or ``*.egg-info``), with pip's build isolation: setuptools comes from the configured
index or cache, as for any user. Used by the wheel test and the gate job's emulation.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from helpers.paths import REPO

# what pyproject.toml's build reads (packages, package data, readme, licence)
BUILD_INPUTS = ("pyproject.toml", "README.md", "LICENSE", "leaderboard_audit", "audits", "docs", "fixtures/demo")


def run(cmd: list[str], *, cwd: Path | None = None, env: dict | None = None, timeout: int = 300):
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise AssertionError(
            f"{' '.join(map(str, cmd))} exited {r.returncode}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
        )
    return r


def build_wheel(out: Path) -> Path:
    """``pip wheel --no-deps`` of a copy of this checkout's build inputs -> the .whl path."""
    src = out / "src"
    for name in BUILD_INPUTS:
        s = REPO / name
        if s.is_dir():
            shutil.copytree(s, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(s, src / name)
    dist = out / "dist"
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(src), "-w", str(dist)])
    (wheel,) = dist.glob("leaderboard_audit-*.whl")
    return wheel


def wheel_once(tmp_path_factory) -> Path:
    """The wheel of this checkout, built once per test run: the first test (of any xdist
    worker) to ask builds it under the run's shared base folder, holding a file lock; the
    others wait for it and take the same file (the pattern pytest-xdist's docs give for
    session fixtures)."""
    from filelock import FileLock

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # shared by the run's workers
    out = root / "wheel_once"
    with FileLock(str(root / "wheel_once.lock")):
        built = sorted((out / "dist").glob("leaderboard_audit-*.whl")) if out.is_dir() else []
        if built:
            return built[0]
        shutil.rmtree(out, ignore_errors=True)  # a build that failed part way
        return build_wheel(out)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def clean_env(venv: Path) -> dict[str, str]:
    """The environment of a shell whose first ``python``/``pip``/``pytest`` are the venv's
    (and nothing of this checkout on the import path)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), "/usr/local/bin", "/usr/bin", "/bin"])
    env["VIRTUAL_ENV"] = str(venv)
    return env


def fresh_venv(path: Path) -> Path:
    """A new venv (with pip) from the interpreter running the tests."""
    run([sys.executable, "-m", "venv", str(path)])
    return path
