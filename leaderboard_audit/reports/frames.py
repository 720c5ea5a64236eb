"""The report's tables as pandas DataFrames, for notebooks (UX review 2026-12-04 #18).

A report-v1 dict holds, per scope, sections that are lists of rows (``leaderboard``,
``pairs``, ``verdicts``) and sections that hold such lists one level down
(``identified["edges"]``, ``champions["per_config"]``, ``compliance["per_model"]``, ...).
:func:`report_tables` gives each as one DataFrame, keyed ``"<scope>/<section>"`` or
``"<scope>/<section>/<key>"``; nothing is computed anew.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


def _rows(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(r, dict) for r in value)


def report_tables(report: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """Every list of rows in ``report`` (``leaderboard.audit``'s result) as a DataFrame:
    ``tables["pooled/leaderboard"]``, ``tables["pooled/pairs"]``, ``tables["arc/verdicts"]``,
    ``tables["pooled/identified/edges"]``, ..."""
    import pandas as pd

    out: dict[str, pd.DataFrame] = {}
    for scope, sections in (report.get("scopes") or {}).items():
        for name, value in sections.items():
            if _rows(value):
                out[f"{scope}/{name}"] = pd.DataFrame(value)
            elif isinstance(value, dict):
                for key, inner in value.items():
                    if _rows(inner):
                        out[f"{scope}/{name}/{key}"] = pd.DataFrame(inner)
    return out


__all__ = ["report_tables"]
