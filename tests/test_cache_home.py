"""One cache-folder rule (architecture review A17): every cache of the tool is a sub-folder of
``records.cache.cache_home()``, which follows ``$XDG_CACHE_HOME``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers.paths import REPO
from leaderboard_audit.records.cache import cache_home


def test_every_cache_folder_is_under_the_one_cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("LEADERBOARD_AUDIT_CACHE", raising=False)
    monkeypatch.delenv("VLLM_CACHE_ROOT", raising=False)
    home = tmp_path / "leaderboard-audit"
    assert cache_home() == home

    from leaderboard_audit.collect.engines.vllm_engine import cpu_env
    from leaderboard_audit.plugin.options import records_free_cache_home
    from leaderboard_audit.records.cache import default_cache_dir

    assert default_cache_dir() == home / "records"
    assert records_free_cache_home() == home / "pytest-cache"
    cpu_env()
    assert os.environ["VLLM_CACHE_ROOT"] == str(home / "vllm")
    # the collector's folder is read when its module loads: a fresh interpreter
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", "from leaderboard_audit.collect.models import CACHE; print(CACHE)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == str(home)


def test_without_xdg_the_cache_home_is_under_the_home_folder(monkeypatch):
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert cache_home() == Path.home() / ".cache" / "leaderboard-audit"
