"""Scopes: each benchmark, and ``pooled`` (every benchmark's items together)."""

from __future__ import annotations

from ..checks.base import POOLED
from ..records import Records


def scopes_of(records: Records) -> list[str]:
    """``pooled`` first, then each benchmark in sorted order."""
    return [POOLED, *records.benchmarks]


def scope_records(records: Records, scope: str) -> Records:
    """The scope's records, as read-only views (no copy: a benchmark's items are one
    slice), so the checks of a scope share what they derive from them (``metrics.per_model``)."""
    return records.read_only() if scope == POOLED else records.scope(scope)


def alias_of(records: Records, scope: str) -> str:
    """The scope whose items equal this one's: with a single benchmark, ``pooled`` is it."""
    if scope == POOLED and len(records.benchmarks) == 1:
        return records.benchmarks[0]
    return scope


__all__ = ["POOLED", "alias_of", "scope_records", "scopes_of"]
