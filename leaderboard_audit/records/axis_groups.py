"""Declared harness axes: grid.json's ``axis_groups`` (docs/spec/RECORDS.md "v3: declared axis groups").

``{"<axis>": ["<config key>", ...]}``: for each axis, the configurations that vary
that axis alone from the reference, the reference included. Names are free but
non-empty, unique and not ``joint`` (the audit's name for every configuration).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .errors import ProblemLog

AXIS_GROUPS = "axis_groups"
JOINT = "joint"
_FIX = 'axis_groups maps each axis name to the config keys that vary it alone, the reference included (docs/records.md, "Declared axes")'


def check_axis_groups(obj: Any, keys: Sequence[str], reference: str, source: str) -> dict[str, tuple[str, ...]]:
    """Validate a decoded ``axis_groups`` against the legend's keys; every problem is named
    (file, the axis, the key) in one :class:`RecordsError` with its fix."""
    log = ProblemLog()

    def bad(msg: str, fix: str = _FIX) -> None:
        log.add(source, None, f"axis_groups: {msg}", fix=fix)

    if not isinstance(obj, dict):
        bad(f"must be a JSON object (axis name -> list of config keys), got {type(obj).__name__}")
        log.raise_if_any()
    if not obj:
        bad("declares no axis", fix="drop axis_groups (the paper's three axes are then derived) or declare one")
    known = set(keys)
    out: dict[str, tuple[str, ...]] = {}
    folded: dict[str, str] = {}
    for name, group in obj.items():
        if not isinstance(name, str) or not name.strip():
            bad(f"an axis name must be a non-empty string, got {name!r}")
            continue
        if name.strip().lower() == JOINT:
            bad(f"axis {name!r}: 'joint' is reserved (every configuration)", fix="rename the axis")
            continue
        if name.strip().lower() in folded:
            bad(f"axis {name!r} repeats axis {folded[name.strip().lower()]!r}", fix="give each axis its own name")
            continue
        folded[name.strip().lower()] = name
        if not isinstance(group, list) or not all(isinstance(k, str) for k in group):
            bad(f"axis {name!r}: expected a list of config keys (strings), got {group!r}"[:300])
            continue
        unknown = [k for k in group if k not in known]
        for k in unknown:
            bad(f"axis {name!r}: {k!r} is not a config key of the legend", fix="use keys of grid.json's configs")
        dup = sorted({k for k in group if group.count(k) > 1})
        if dup:
            bad(f"axis {name!r}: config key(s) {dup} listed twice", fix="list each config once per axis")
        if reference not in group:
            bad(
                f"axis {name!r} does not hold the reference {reference!r}",
                fix="add the reference key to every axis group (each axis is varied from it)",
            )
        elif len(set(group)) < 2:
            bad(
                f"axis {name!r} holds only the reference; an axis needs at least one other configuration",
                fix="add the configs that vary this axis, or drop the axis",
            )
        if not unknown and not dup:
            out[name] = tuple(group)
    log.raise_if_any()
    return out
