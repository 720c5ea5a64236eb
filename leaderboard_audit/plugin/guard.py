"""Records are data: a records path must never configure pytest or bring code.

``pytest --audit records/`` passes ``records/`` to pytest before any plugin loads, so
pytest may look for its configuration there (a ``pytest.ini`` inside the records
would become the run's config). ``problems(path)`` names every file under the path
that pytest or Python would treat as configuration or code; the plugin refuses such
a path before any conftest is loaded (docs/records.md, "Security model").
"""

from __future__ import annotations

import os
import re
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


def basetemp_problem(
    basetemp: str | os.PathLike[str] | None, records: str | os.PathLike[str], invocation_dir: str | os.PathLike[str]
) -> str | None:
    """Why ``--basetemp`` must not be used with these records, or None: pytest empties the
    basetemp folder as a run starts (xdist's controller does so before its workers start), so
    a basetemp that is or holds the records (a file source, or a records folder) would delete
    them, and one inside a records folder would write into it."""
    if basetemp is None or not str(basetemp).strip():
        return None
    base = Path(invocation_dir, basetemp)
    rec = Path(invocation_dir, records)
    # a folder of records: emptied, or written into; a file source: emptied with its folder
    if inside(rec, base) or (not rec.is_file() and inside(base, rec)):
        return (
            f"--basetemp {basetemp} would be emptied by pytest and holds, or lies inside, the records "
            f"({records}): choose another folder"
        )
    return None


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


#: what a records folder may hold in the CI gate (``leaderboard-audit guard``)
DATA_SUFFIXES = (".jsonl", ".json", ".csv", ".parquet", ".arrow", ".md", ".txt")
#: a file or folder name the gate accepts: no shell metacharacters, spaces or controls, and
#: no ``@`` (a model name reaches the sticky PR comment, where ``@org/team`` is a mention: C09)
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+=,-]*$")


def not_data(path: str | os.PathLike[str], limit: int = 20) -> list[str]:
    """Entries under ``path`` that a CI gate must refuse: anything but a data file
    (``DATA_SUFFIXES``), a link, or a name outside ``SAFE_NAME`` (e.g. ``$(...)``)."""
    from ..reports.text import clean

    found: list[str] = []
    if Path(path).is_symlink():  # os.walk would follow the top folder's link
        return [f"{clean(Path(path))}: a link"]
    for root, dirs, files in os.walk(path, followlinks=False):
        for name in sorted(dirs + files):
            f = Path(root) / name
            why = None
            if f.is_symlink():
                why = "a link"
            elif not SAFE_NAME.match(name):
                why = "a name with characters outside [A-Za-z0-9._+=,-]"
            elif f.is_file() and not name.endswith(DATA_SUFFIXES):
                why = "not a data file (" + ", ".join(DATA_SUFFIXES) + ")"
            elif not f.is_file() and not f.is_dir():
                why = "not a regular file"
            if why:
                found.append(f"{clean(f)}: {why}")
                if len(found) >= limit:
                    return found
    return found


def main(argv: list[str] | None = None) -> int:
    """``leaderboard-audit guard RECORDS``: exit 0 if the folder is data only, else
    name what is refused and exit 4 (the CI gate's step before the audit)."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not (Path(args[0]).is_dir() or Path(args[0]).is_symlink()):
        print("usage: leaderboard-audit guard RECORDS_DIR", file=sys.stderr)
        return 4
    found = not_data(args[0])
    if found:
        print(f"refusing {args[0]}: records must be data only:", file=sys.stderr)
        for f in found:
            print(f"  {f}", file=sys.stderr)
        return 4
    return 0


__all__ = ["CONFIG_NAMES", "DATA_SUFFIXES", "SAFE_NAME", "ini_from_records", "inside", "main", "not_data", "problems"]


if __name__ == "__main__":
    raise SystemExit(main())
