"""A hand-built entry of mix's section (one left-out benchmark's comparison), for the tests that
judge mix on planted status changes without running the reduced audits."""

from __future__ import annotations

from typing import Any


def reduced_entry(changes: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """An entry of ``mix.without`` whose only facts are the pooled verdicts' ``changes``
    (``extra``: further keys, e.g. the ``drops`` that judged them)."""
    return {
        "items": 75,
        "headline": {},
        "moved": [],
        "crossings": [],
        "only_full": [],
        "only_reduced": [],
        "status_changes": changes,
        "check_status": {},
        **extra,
    }
