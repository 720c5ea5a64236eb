"""Reading an aggregate input (arena counts or battles, judge outputs, a published table) and
auditing what was read: the library side of ``pytest --audit FILE`` and ``audit_file``."""

from __future__ import annotations

from typing import Any

from .audit import DEFAULT_ARENA_BOOT, audit_arena, audit_table
from .data import Battles, PairCounts


def read_input(path: str, kind: str) -> Any:
    """The input at ``path`` read as ``kind`` (raises ``ArenaInputError``)."""
    if kind == "arena-counts":
        from .data import read_counts

        return read_counts(path)
    if kind == "arena-battles":
        from .data import read_battles

        return read_battles(path)
    if kind == "alpaca-eval-annotations":
        from .judges import read_alpaca_annotations

        return read_alpaca_annotations(path)
    if kind == "arena-hard":
        from .judges import read_arena_hard

        return read_arena_hard(path)
    if kind == "mt-bench":
        from .judges import read_mt_bench

        return read_mt_bench(path)
    from .table import read_table

    return read_table(path)


def audit_input(data: Any, *, n_boot: int, seed: int, alpha: float) -> dict[str, Any]:
    """The aggregate report of what ``read_input`` read."""

    if isinstance(data, PairCounts):
        return audit_arena(data, n_boot=n_boot, seed=seed, alpha=alpha)
    if isinstance(data, Battles):
        return audit_arena(data.pair_counts(), data, n_boot=n_boot, seed=seed, alpha=alpha)
    return audit_table(data, alpha=alpha)


def audit_file(
    path: str,
    fmt: str | None = None,
    *,
    n_boot: int = DEFAULT_ARENA_BOOT,
    seed: int = 1234,
    alpha: float = 0.05,
) -> dict[str, Any]:
    """The aggregate audit of an arena, published-table or judge-output file or folder
    without pytest; ``fmt`` a format name, else recognised by content (``formats``)."""
    from .data import ArenaInputError
    from .formats import aggregate_kind

    kind = aggregate_kind(path, fmt)
    if kind is None:
        raise ArenaInputError(f"{path}: not an arena, published-table or judge-output input (name one with fmt=)")
    return audit_input(read_input(path, kind), n_boot=n_boot, seed=seed, alpha=alpha)


__all__ = ["audit_file", "audit_input", "read_input"]
