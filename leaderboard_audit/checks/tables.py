"""One table model for the three renderers (terminal, Markdown, HTML).

Below both the checks and the renderers (checks build their verdict messages and tables
with it; ``reports.tables`` re-exports it for compatibility).

Checks describe what they show as ``Table`` objects built from the report dict;
renderers only decide how a cell looks. Cells are plain values (``str`` from the
records is untrusted and escaped by each renderer; numbers are formatted with
``text.num``) or ``Cell`` for styled text. Shared labels live here once:
``pair_label``, ``ci_cell``, ``status_counts``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Iterable

STATUSES = ("pass", "warn", "fail", "skip")


def kind_of(x: object) -> str | None:
    """ "cell", "table" or "line" for the model's objects (by a class attribute, not
    isinstance: the check registry may hold objects built before a module was reloaded)."""
    return getattr(x, "model_kind", None)


@dataclass(frozen=True)
class Cell:
    """Styled text: ``style`` is one of ``status`` (text is a verdict status),
    ``strong``, ``code`` (a number or label already formatted, not escaped specially)."""

    text: str
    style: str = ""
    model_kind = "cell"


@dataclass(frozen=True)
class Table:
    model_kind = "table"
    key: str
    title: str
    headers: list[str]
    rows: list[list[Any]]
    note: str = ""
    #: terminal: shown with every summary detail ("short"), or only with --audit-summary full
    detail: str = "full"
    #: terminal column widths to cut untrusted names to (column index -> characters)
    widths: dict[int, int] = field(default_factory=dict)
    #: digits for floats in this table (default 3)
    digits: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Line:
    """A one-line summary (prose) a check shows under its tables."""

    key: str
    text: str
    detail: str = "short"
    model_kind = "line"


def narrow_board(t: Table, n_configs: int) -> Table:
    """With one configuration min = max = reference, spread 0 and rank range = rank on every row:
    Table 1 keeps only the columns that say something (rank, model, reference)."""
    if n_configs > 1 or t.key != "leaderboard":
        return t
    keep = [j for j, h in enumerate(t.headers) if h in ("rank", "model", "reference")]
    if len(keep) == len(t.headers):
        return t
    return Table(
        t.key,
        t.title,
        [t.headers[j] for j in keep],
        [[r[j] for j in keep] for r in t.rows],
        note=(t.note + " " if t.note else "") + "One configuration: the band columns (min, max, spread, robust, "
        "optimistic, rank range) equal the reference and are left out.",
        detail=t.detail,
        widths={keep.index(j): w for j, w in t.widths.items() if j in keep},
        digits={keep.index(j): d for j, d in t.digits.items() if j in keep},
    )


def pair_label(higher: str, lower: str) -> str:
    return f"{higher} > {lower}"


#: a printed gap the robust items do not order, by its cause (AUDITS v5: only "harness" is manufactured)
UNORDERED = {
    "harness": "manufactured by fragile items (harness)",
    "undecidable": "not decidable on robust items",
    "sampling": "too few robust items to tell (sampling)",
}


def pair_kind(p: dict[str, Any]) -> str:
    """How a pair's order stands: identified, tie, or why the robust items do not order it."""
    if p.get("cause") in UNORDERED:
        return f"manufactured ({p['cause']})" if p["cause"] == "harness" else UNORDERED[p["cause"]]
    if p["manufactured"]:
        return "manufactured"
    return "tie" if p["robust_tie"] else "identified"


def evidence_heading(p: dict[str, Any]) -> str:
    return UNORDERED.get(p.get("cause") or "", "manufactured")


def ci_cell(ci: Any, nd: int = 3) -> str:
    return "n/a" if ci is None else f"[{ci[0]:.{nd}f}, {ci[1]:.{nd}f}]"


def range_cell(r: Any) -> str:
    return "-" if not r else f"{r[0]}-{r[1]}"


def bounds_text(lo: float, hi: float) -> str:
    """A value's exact range over the completions of an incomplete grid: ``lo..hi``, or the one
    value when both ends agree (to 12 decimals, as every threshold comparison)."""
    return f"{lo:.3f}" if round(lo, 12) == round(hi, 12) else f"{lo:.3f}..{hi:.3f}"


def status_counts(verdicts: Iterable[dict[str, Any]]) -> dict[str, int]:
    vs = list(verdicts)
    return {st: sum(v["status"] == st for v in vs) for st in STATUSES}


def counts_text(verdicts: Iterable[dict[str, Any]]) -> str:
    c = status_counts(verdicts)
    text = f"{c['pass']:,} pass, {c['warn']:,} warn, {c['fail']:,} fail"
    return text + (f", {c['skip']:,} skipped" if c["skip"] else "")


def verdicts_table(verdicts: list[dict[str, Any]], key: str = "verdicts", title: str = "Verdicts") -> Table:
    rows = [
        [
            Cell(v["status"], "status"),
            v["id"],
            v["value"] if not isinstance(v["value"], str) else v["value"],
            v["threshold"],
            Cell("n/a" if v["margin"] is None else f"{v['margin']:+.3f}", "code"),
            v["message"],
        ]
        for v in verdicts
    ]
    return Table(key, title, ["status", "check", "value", "threshold", "margin", "message"], rows)


__all__ = [
    "STATUSES",
    "bounds_text",
    "kind_of",
    "narrow_board",
    "Cell",
    "Line",
    "Table",
    "ci_cell",
    "counts_text",
    "evidence_heading",
    "pair_kind",
    "pair_label",
    "range_cell",
    "status_counts",
    "verdicts_table",
]
