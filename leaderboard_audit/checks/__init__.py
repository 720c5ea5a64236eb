"""The registry of checks: one module per paper claim, in the order reports show them.

``registry()`` returns name -> check instance: the bundled checks, then any that
third-party packages register through the ``leaderboard_audit.checks`` entry point
group (a ``Check`` subclass; its name must not collide with a bundled one).
"""

from __future__ import annotations

import functools
import importlib
from pathlib import Path

from .base import POOLED, Check, Scope, num

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


class RegistryError(ValueError):
    """A third-party check that cannot be registered (named in the message)."""


def _builtin() -> list[Check]:
    out = []
    for name in BUILTIN:
        mod = importlib.import_module(f"{__name__}.{name}")
        out.append(mod.CHECK)
    return out


def _entry_point_checks() -> list[Check]:
    from importlib.metadata import entry_points

    out = []
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
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
        out.append(check)
    return out


@functools.lru_cache(maxsize=1)
def registry() -> dict[str, Check]:
    """Every check, bundled first, in report order."""
    checks: dict[str, Check] = {}
    for c in _builtin() + _entry_point_checks():
        if c.name in checks:
            raise RegistryError(f"two checks are named {c.name!r}")
        checks[c.name] = c
    return checks


def check_names() -> tuple[str, ...]:
    return tuple(registry())


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
    "check_names",
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
