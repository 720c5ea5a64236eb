"""Compatibility: the table model moved below the checks, to ``leaderboard_audit.tables_model``."""

from ..tables_model import (
    STATUSES,
    kind_of,
    narrow_board,
    Cell,
    Line,
    Table,
    ci_cell,
    counts_text,
    evidence_heading,
    pair_kind,
    pair_label,
    range_cell,
    status_counts,
    verdicts_table,
)

__all__ = [
    "STATUSES",
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
