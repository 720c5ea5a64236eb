"""Report output paths, checked before the audit runs (a bad path fails in a second, not
after the whole audit), and the line saying where each report was written."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

#: option -> the suffixes its file may have (None: any)
SUFFIXES: dict[str, tuple[str, ...] | None] = {
    "--audit-report": None,
    "--audit-markdown": None,
    "--audit-html": None,
    "--audit-leaderboard": (".md", ".csv", ".html"),
}


def output_problem(opt: str, path: str | os.PathLike[str], suffixes: tuple[str, ...] | None = None) -> str | None:
    """Why ``path`` cannot take a report (one line naming the option), or None.

    Tries to create (and at once removes) a temporary file in the target folder, so a
    read-only folder or a pseudo-filesystem such as /proc is refused up front."""
    p = Path(path)
    if not str(path).strip():
        return f"{opt}: empty path"
    if suffixes is not None and p.suffix.lower() not in suffixes:
        return f"{opt} {path}: the file must end in {', '.join(suffixes)} (the suffix picks the format)"
    if p.is_dir():
        return f"{opt} {path}: is a folder; give a file name"
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        return f"{opt} {path}: the folder {parent} does not exist"
    try:
        with tempfile.NamedTemporaryFile(dir=parent, prefix=".la-check-", delete=True):
            pass
    except OSError as exc:
        return f"{opt} {path}: cannot write in {parent} ({exc.strerror or exc})"
    return None


def written_line(opt: str, path: str, n_bytes: int) -> str:
    return f"{opt}: wrote {path} ({n_bytes:,} bytes)"


__all__ = ["SUFFIXES", "output_problem", "written_line"]
