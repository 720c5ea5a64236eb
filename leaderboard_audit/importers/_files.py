"""Opening importer inputs safely: regular files only, bounded size, hostile JSON is a problem, not a crash."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from ..records.errors import ProblemLog
from ..records.safe_io import MAX_JSON_VALUES, json_values_problem  # noqa: F401 - the importers' bound too

# What json.loads raises on bad input besides JSONDecodeError: undecodable bytes, deep
# nesting (RecursionError), integers past Python's digit limit (ValueError).
JSON_ERRORS = (ValueError, UnicodeDecodeError, RecursionError)


def file_problem(path: Path) -> str | None:
    """Why ``path`` cannot be read as a file (missing, a directory, a FIFO...), or None."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if stat.S_ISDIR(st.st_mode):
        return "is a directory, not a file"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    return None


def read_json_file(path: Path, log: ProblemLog, max_bytes: int, *, missing_fix: str | None = None) -> Any:
    """The decoded JSON of ``path``, or None with the problem added to ``log``."""
    why = file_problem(path)
    if why is not None:
        log.add(str(path), None, why, fix=missing_fix if why == "missing" else None)
        return None
    try:
        if path.stat().st_size > max_bytes:
            log.add(str(path), None, f"larger than {max_bytes} bytes")
            return None
        data = path.read_bytes()
    except OSError as exc:
        log.add(str(path), None, f"cannot be read ({exc.strerror or exc})")
        return None
    why = json_values_problem(data)
    if why is not None:
        log.add(str(path), None, why, fix="check the file: an honest log holds about one JSON value per 25-40 bytes")
        return None
    try:
        return json.loads(data)
    except JSON_ERRORS as exc:
        what = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)[:200]
        log.add(str(path), getattr(exc, "lineno", None), f"unreadable JSON ({what})")
        return None


def obj(v: Any) -> dict[str, Any]:
    """``v`` when it is a JSON object, else an empty one (fields of the wrong type count as absent)."""
    return v if isinstance(v, dict) else {}
