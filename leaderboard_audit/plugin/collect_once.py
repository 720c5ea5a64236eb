"""`pytest --audit-collect SPEC.toml`: produce records first, once, under a file lock."""

from __future__ import annotations

from pathlib import Path

import pytest


def collect_once(spec_path: str, config: pytest.Config) -> Path:
    """Run the collector for ``spec_path``; with pytest-xdist one worker collects while
    the others wait on the lock, then find the finished records (collection resumes
    and is a no-op when every file is complete). Bad input (spec, output folder,
    benchmark files) is one usage error (exit 4), never an INTERNALERROR."""
    from filelock import FileLock

    try:
        from ..collect.errors import CollectError
        from ..collect.run import collect
    except ImportError as exc:
        raise pytest.UsageError(
            f"--audit-collect needs the collection extra (pip install 'leaderboard-audit[collect]'): {exc}"
        ) from None
    from ..records import RecordsError

    spec = Path(spec_path)
    if not spec.is_file():
        raise pytest.UsageError(
            f"--audit-collect {spec_path}: no such collection spec file (pass the path of an existing TOML spec)"
        )
    lock = spec.resolve().with_suffix(".lock")
    try:
        with FileLock(str(lock)):
            return Path(collect(spec_path, progress=not hasattr(config, "workerinput")))
    except (CollectError, RecordsError) as exc:
        raise pytest.UsageError(f"--audit-collect {spec_path}: {exc}") from None
    except OSError as exc:
        raise pytest.UsageError(
            f"--audit-collect {spec_path}: {exc.filename or spec_path}: {exc.strerror or exc}"
        ) from None
