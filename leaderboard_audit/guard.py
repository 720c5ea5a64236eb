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


def problems(
    path: str | os.PathLike[str], limit: int = 10, invocation_dir: str | os.PathLike[str] | None = None
) -> list[str]:
    """Files under ``path`` (or ``path`` itself) that are pytest configuration or code; for a
    file source also those beside it, unless its folder is ``invocation_dir`` or above it
    (there they are the project's own, read whatever ``--audit`` names)."""
    p = Path(path)
    found: list[str] = []

    def bad(f: Path) -> bool:
        return f.name in CONFIG_NAMES or f.name.endswith(CODE_SUFFIXES) or f.name == "__pycache__"

    if p.is_file() or not p.is_dir():  # a file source: pytest also reads the folder it sits in
        if not p.exists():
            return []
        folder = p.resolve().parent
        inv = Path(invocation_dir).resolve() if invocation_dir is not None else None
        own = inv is not None and (folder == inv or folder in inv.parents)
        near = [] if own else [f for f in sorted(p.parent.iterdir(), key=lambda f: f.name) if bad(f)]
        return ([str(p)] if bad(p) else []) + [str(f) for f in near if f != p][:limit]
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


def ini_from_records(
    inipath: str | os.PathLike[str] | None, path: str | os.PathLike[str], invocation_dir: str | os.PathLike[str]
) -> bool:
    """pytest found its ini through the records path: the ini sits in the records, beside a
    file source, or in a folder above the records that is not the invocation folder or one
    above it (pytest searches the argument's folder and its parents; an ini the run would
    find from where it was started is the project's own)."""
    if inipath is None:
        return False
    if inside(inipath, path):
        return True
    ini_dir = Path(inipath).resolve().parent
    rec = Path(path).resolve()
    rec_dir = rec if rec.is_dir() else rec.parent
    inv = Path(invocation_dir).resolve()
    on_records_chain = ini_dir == rec_dir or ini_dir in rec_dir.parents
    on_invocation_chain = ini_dir == inv or ini_dir in inv.parents
    return on_records_chain and not on_invocation_chain


__all__ = ["CONFIG_NAMES", "ini_from_records", "inside", "problems"]
