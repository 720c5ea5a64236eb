"""`pytest --audit-collect SPEC.toml`: produce records first, once, under a file lock."""
from __future__ import annotations

from pathlib import Path

import pytest


def collect_once(spec_path: str, config: pytest.Config) -> Path:
    """Run the collector for ``spec_path``; with pytest-xdist one worker collects while
    the others wait on the lock, then find the finished records (collection resumes
    and is a no-op when every file is complete)."""
    from filelock import FileLock
    try:
        from .collect.run import collect
    except ImportError as exc:
        raise pytest.UsageError(f"--audit-collect needs the collection extra "
                                f"(pip install 'leaderboard-audit[collect]'): {exc}") from None
    lock = Path(spec_path).resolve().with_suffix(".lock")
    with FileLock(str(lock)):
        return Path(collect(spec_path, progress=not hasattr(config, "workerinput")))
