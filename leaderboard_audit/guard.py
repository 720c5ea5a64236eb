"""Records are data: a records path must never configure pytest or bring code.

``pytest --audit records/`` passes ``records/`` to pytest before any plugin loads, so
pytest may look for its configuration there (a ``pytest.ini`` inside the records
would become the run's config). ``problems(path)`` names every file under the path
that pytest or Python would treat as configuration or code; the plugin refuses such
a path before any conftest is loaded (docs/records.md, "Security model").
"""

from __future__ import annotations

import os
from pathlib import Path

CONFIG_NAMES = frozenset(
    {
        "pytest.ini",
        ".pytest.ini",
        "pyproject.toml",
        "tox.ini",
        "setup.cfg",
        "conftest.py",
        "setup.py",
        "sitecustomize.py",
        "usercustomize.py",
    }
)
CODE_SUFFIXES = (".py", ".pyc", ".pyo", ".pyd", ".so", ".pth")
MAX_ENTRIES = 200_000


def problems(path: str | os.PathLike[str], limit: int = 10) -> list[str]:
    """Files under ``path`` (or ``path`` itself) that are pytest configuration or code."""
    p = Path(path)
    found: list[str] = []

    def bad(f: Path) -> bool:
        return f.name in CONFIG_NAMES or f.name.endswith(CODE_SUFFIXES) or f.name == "__pycache__"

    if p.is_file() or not p.is_dir():
        return [str(p)] if p.exists() and bad(p) else []
    seen = 0
    for root, dirs, files in os.walk(p, followlinks=False):
        for name in sorted(dirs + files):
            seen += 1
            f = Path(root) / name
            if bad(f):
                found.append(str(f))
                if len(found) >= limit:
                    return found
        if seen > MAX_ENTRIES:
            break
    return found


def inside(child: str | os.PathLike[str] | None, parent: str | os.PathLike[str]) -> bool:
    if child is None:
        return False
    c, p = Path(child).resolve(), Path(parent).resolve()
    return c == p or p in c.parents


__all__ = ["CONFIG_NAMES", "inside", "problems"]
