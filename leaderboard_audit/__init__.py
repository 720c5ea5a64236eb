"""leaderboard-audit: is the order you are about to publish actually in the data?

Import-light on purpose: numpy, pandas and scipy load only when a function that
needs them is first used.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "Records": ("leaderboard_audit.records", "Records"),
    "Grid": ("leaderboard_audit.records", "Grid"),
    "RecordsError": ("leaderboard_audit.records", "RecordsError"),
    "load_records": ("leaderboard_audit.records", "load_records"),
    "write_records": ("leaderboard_audit.records", "write_records"),
    "audit": ("leaderboard_audit.engine.run", "audit"),
    "report_tables": ("leaderboard_audit.reports.frames", "report_tables"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        mod, attr = _LAZY[name]
        value = getattr(importlib.import_module(mod), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'leaderboard_audit' has no attribute {name!r}")


__all__ = sorted(_LAZY) + ["__version__"]
