"""Finding and reading the legend beside the records (docs/records.md, "The paper's release").

A records-v1 set keeps its legend in ``grid.json``. A release may call it something
else and write it in a simpler shape, so the reader tries the names in
``LEGEND_NAMES`` (in that order; two present is an error) and accepts, besides the
records-v1 object, a legend that only names each key and its permutation:

* ``{"gen|letter_plain|p0": [0, 1, 2, 3], ..., "ll|cloze_plain": null}``
* ``[{"key": "gen|letter_plain|p0", "permutation": [0, 1, 2, 3]}, ...]``
* either of those under ``"configs"``, ``"configurations"`` or ``"legend"``, with an
  optional ``"reference"`` beside it.

Scoring, template and ordering then come from the key convention, exactly as when
the legend is inferred; the permutations are the file's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .errors import RecordsError
from .grid import DEFAULT_REFERENCE, FORMAT, Grid, parse_grid
from .safe_io import JSON_ERRORS, json_values_problem, loads_strict, read_regular_bytes

GRID_NAME = "grid.json"
LEGEND_NAMES = (
    GRID_NAME,
    "legend.json",
    "config_legend.json",
    "configuration_legend.json",
    "configs.json",
    "configurations.json",
)
MAX_GRID_BYTES = 16 * 1024 * 1024
MAX_GRID_VALUES = 2_000_000  # JSON values in a legend (~200 MB of objects at worst)
_LIST_KEYS = ("configs", "configurations", "legend")


def find_legend(root: Path) -> Path | None:
    """The one legend file in ``root`` (see ``LEGEND_NAMES``), or None."""
    found = [root / n for n in LEGEND_NAMES if (root / n).exists() or (root / n).is_symlink()]
    if len(found) > 1:
        raise RecordsError.one(
            str(root),
            None,
            f"more than one legend file: {[p.name for p in found]}",
            fix="keep one legend (grid.json) next to the records",
        )
    return found[0] if found else None


def read_legend_file(path: Path, limit: int = MAX_GRID_BYTES) -> Grid:
    """Read and validate a legend: records-v1 ``grid.json`` or a release-style legend."""
    text = read_regular_bytes(path, limit, what=path.name)
    why = json_values_problem(text, MAX_GRID_VALUES)
    if why is not None:
        raise RecordsError.one(str(path), None, why, fix=f"{path.name} holds one entry per configuration")
    try:
        obj = loads_strict(text)
    except JSON_ERRORS as exc:
        line = getattr(exc, "lineno", None)
        raise RecordsError.one(
            str(path),
            line,
            f"unreadable JSON ({type(exc).__name__}: {str(exc)[:200]})",
            fix=f"{path.name} must be one JSON object",
        ) from None
    if path.name == GRID_NAME or (isinstance(obj, dict) and obj.get("format") == FORMAT):
        return parse_grid(obj, str(path))
    return parse_grid(release_legend_as_grid(obj, str(path)), str(path))


def release_legend_as_grid(obj: Any, source: str) -> dict[str, Any]:
    """A release-style legend rewritten as a records-v1 grid object (validated by parse_grid)."""
    reference: Any = DEFAULT_REFERENCE
    body = obj
    if isinstance(obj, dict):
        inner = [k for k in _LIST_KEYS if k in obj]
        if inner:
            body = obj[inner[0]]
            reference = obj.get("reference", DEFAULT_REFERENCE)
    if isinstance(body, dict):
        entries = [_entry_from_item(k, v, source) for k, v in body.items()]
    elif isinstance(body, list):
        entries = [dict(e) if isinstance(e, dict) else e for e in body]
        for e in entries:
            if isinstance(e, dict):
                _alias_permutation(e)
    else:
        raise RecordsError.one(
            source,
            None,
            "a legend must be a JSON object (config key -> permutation) or a list of configs",
            fix='see docs/records.md, "The paper\'s release"',
        )
    return {"format": FORMAT, "reference": reference, "configs": entries}


def _entry_from_item(key: str, value: Any, source: str) -> dict[str, Any]:
    if value is None or isinstance(value, list):
        return {"key": key, "permutation": value}
    if isinstance(value, dict):
        entry = dict(value)
        entry.setdefault("key", key)
        if entry["key"] != key:
            raise RecordsError.one(source, None, f"legend entry {key!r} names key {entry['key']!r}")
        _alias_permutation(entry)
        return entry
    raise RecordsError.one(
        source,
        None,
        f"legend entry {key!r}: expected a permutation list, null or an object, got {type(value).__name__}",
    )


def _alias_permutation(entry: dict[str, Any]) -> None:
    if "permutation" not in entry and "perm" in entry:
        entry["permutation"] = entry.pop("perm")
