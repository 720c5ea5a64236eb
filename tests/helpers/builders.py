"""Small records sets built in code for plugin tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from leaderboard_audit.records import Items, Records, write_records
from leaderboard_audit.records.grid import paper_grid


def stable_records(
    n_items: int = 60, right: tuple[int, ...] = (50, 30, 10), names: tuple[str, ...] = ("alpha", "beta", "gamma")
) -> Records:
    """Every model answers every item the same under every config, with clear gaps, but for
    one probe item (the last): the second model gets it right everywhere and the last model
    under one non-reference config only. That keeps corr(disc, fragility) defined and
    negative (the fragile item is the least discriminative), so compression passes rather
    than warning on an undefined correlation (AUDITS v3): every check passes."""
    grid = paper_grid()
    C = np.zeros((len(names), n_items, len(grid)), dtype=bool)
    for m, r in enumerate(right):
        C[m, :r, :] = True
    if len(names) >= 3 and n_items > max(right):
        C[1, -1, :] = True
        C[-1, -1, 1 if grid.reference_index != 1 else 2] = True
    items = Items(
        np.array(["bench"] * n_items, dtype=object),
        np.array([f"bench/q{i:03d}" for i in range(n_items)], dtype=object),
        [0] * n_items,
        [f"question {i}" for i in range(n_items)],
        [None] * n_items,
    )
    order = np.argsort(names)
    return Records(C[order], tuple(names[i] for i in order), items, grid)


def write(records: Records, path: Path) -> Path:
    write_records(records, path)
    return path


def disk_full_on(monkeypatch, suffix: str) -> None:
    """Every atomic write of a file ending in ``suffix`` fails as a full disk would (ENOSPC)."""
    from leaderboard_audit.records import writer

    real = writer.atomic_write_bytes

    def disk_full(path, data):
        if str(path).endswith(suffix):
            raise OSError(28, "No space left on device")
        return real(path, data)

    monkeypatch.setattr(writer, "atomic_write_bytes", disk_full)
