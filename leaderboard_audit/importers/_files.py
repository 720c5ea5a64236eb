"""Opening importer inputs safely: regular files only, bounded size, hostile JSON is a problem, not a crash."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from ..records.errors import ProblemLog

# What json.loads raises on bad input besides JSONDecodeError: undecodable bytes, deep
# nesting (RecursionError), integers past Python's digit limit (ValueError).
JSON_ERRORS = (ValueError, UnicodeDecodeError, RecursionError)

# Decoded JSON costs far more memory than its bytes: ``[{},{},...]`` is ~24 bytes of
# Python objects per byte of text. The bound is on the values ``json.loads`` would build,
# counted (over, never under: brackets and commas inside strings count too) before it
# runs: 16 million values are at most ~1.6 GB of objects, and an honest HELM or
# Inspect file of 400 MB holds fewer (one value per 25-40 bytes). docs/reliability.md.
MAX_JSON_VALUES = 16_000_000


def json_values_problem(data: bytes, max_values: int = MAX_JSON_VALUES) -> str | None:
    """Why decoding ``data`` could cost too much memory (too many values), or None.

    Counts ``{``, ``[`` and ``,``: a value is the root, an element after a comma, or the first
    element of a container, so this is an upper bound (brackets and commas inside strings
    count too); linear, in C, without allocating."""
    n = data.count(b"{") + data.count(b"[") + data.count(b",")
    if n > max_values:
        return f"holds up to {n:,} JSON values (limit {max_values:,}): decoding it would take gigabytes of memory"
    return None


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
