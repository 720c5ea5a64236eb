"""The registry of checks: one module per paper claim, in the order reports show them.

``registry()`` returns name -> check instance: the bundled checks, then any that
third-party packages register through the ``leaderboard_audit.checks`` entry point
group (a ``Check`` subclass; its name must not collide with a bundled one).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from ..registry import Registry, RegistryError
from .base import POOLED, Check, Scope, num
from .thresholds import Thresholds


def bundled_names(folder: Path = Path(__file__).parent) -> tuple[str, ...]:
    """The bundled checks, in report order: every module of this package that declares
    ``CHECK = ...`` at module level (named as the module), ordered by its check class's
    ``position = N``. Read from the source, so naming them imports nothing (numpy loads with
    the first check used): adding a bundled check is adding its module."""
    found = []
    for path in sorted(folder.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        if not _DECLARED.search(text):
            continue
        pos = _POSITION.search(text)
        if pos is None:
            raise RegistryError(f"{path}: a bundled check declares its place in the report: position = N")
        found.append((int(pos.group(1)), path.stem))
    return tuple(name for _, name in sorted(found))


_DECLARED = re.compile(r"^CHECK\s*=", re.M)
_POSITION = re.compile(r"^    position(?:\s*:[^=\n]*)?\s*=\s*(\d+)", re.M)
BUILTIN = bundled_names()
ENTRY_POINT_GROUP = "leaderboard_audit.checks"


def _bundled(reg: Registry[Check]) -> None:
    for name in BUILTIN:  # lazy: a check module (numpy) is imported when the check is first used
        reg.register(name, lazy=f"{__name__}.{name}:CHECK")


def _from_entry_point(ep: Any) -> tuple[str, Check, tuple[str, ...]]:
    try:
        obj = ep.load()
    except Exception as exc:  # a broken third-party package: name it
        raise RegistryError(
            f"entry point {ENTRY_POINT_GROUP}:{ep.name} ({ep.value}) failed to load: {type(exc).__name__}: {exc}"
        ) from None
    check = obj() if isinstance(obj, type) else obj
    if not isinstance(check, Check) or not check.name:
        raise RegistryError(
            f"entry point {ENTRY_POINT_GROUP}:{ep.name} ({ep.value}) is not a "
            "leaderboard_audit.checks.Check with a name"
        )
    return check.name, check, ()


def check_registry() -> Registry[Check]:
    """A fresh :class:`~leaderboard_audit.registry.Registry` of the checks: the bundled
    ones (lazy, in ``BUILTIN`` order), then the entry points' (sorted by entry point name)."""
    return Registry("check", group=ENTRY_POINT_GROUP, bundled=_bundled, from_entry_point=_from_entry_point)


@functools.lru_cache(maxsize=1)
def registry() -> dict[str, Check]:
    """Every check, bundled first, in report order."""
    reg = check_registry()
    return {name: reg[name] for name in reg.names()}


def default_thresholds() -> dict[str, float | int]:
    """Every check's thresholds with their defaults (names are global)."""
    out: dict[str, float | int] = {}
    for c in registry().values():
        for k, v in c.thresholds.items():
            if k in out and out[k] != v:
                raise RegistryError(f"threshold {k!r} is declared twice with different defaults")
            out[k] = v
    return out


__all__ = [
    "BUILTIN",
    "bundled_names",
    "ENTRY_POINT_GROUP",
    "POOLED",
    "Check",
    "RegistryError",
    "Scope",
    "Thresholds",
    "check_registry",
    "default_thresholds",
    "num",
    "registry",
    "scope_tables",
]


def scope_tables(name: str, s: dict) -> list:
    """Every registered check's tables and lines for one scope, in registry order
    (``tables_model.Table`` / ``Line``; the renderers only format them)."""
    out: list = []
    for check in registry().values():
        out += check.tables(name, s)
    return out
