"""The registry of checks: one module per paper claim, in the order reports show them.

``registry()`` returns name -> check instance: the bundled checks, then any that
third-party packages register through the ``leaderboard_audit.checks`` entry point
group (a ``Check`` subclass; its name must not collide with a bundled one).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from ..registry import Registry, RegistryError
from .base import POOLED, Check, Scope, num
from .thresholds import Thresholds

BUILTIN = (
    "band",
    "manufactured",
    "power",
    "averaged",
    "ranking",
    "champions",
    "compression",
    "axes",
    "brittleness",
    "flip",
    "compliance",
    "robust_subset",
    "mix",
)
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


def untested_checks(audits_dir: Path) -> list[str]:
    """Bundled checks that would pass silently: not report-only, yet no
    ``audits/test_<name>.py`` in ``audits_dir`` (``audits/test_registered.py`` generates
    tests for third-party checks only). The plugin refuses to collect with any."""
    return [n for n in BUILTIN if not registry()[n].report_only and not (audits_dir / f"test_{n}.py").is_file()]


__all__ = [
    "BUILTIN",
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
    "untested_checks",
]


def scope_tables(name: str, s: dict) -> list:
    """Every registered check's tables and lines for one scope, in registry order
    (``tables_model.Table`` / ``Line``; the renderers only format them)."""
    out: list = []
    for check in registry().values():
        out += check.tables(name, s)
    return out
