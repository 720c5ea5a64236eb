"""Missing cells: why a (model, item, config) cell holds no answer (docs/records.md, "Incomplete records").

In memory a records set's ``missing`` is None when every cell was observed (a complete
grid, read exactly as before), else an int8 array (models x items x configs) holding
``OBSERVED`` (0) where the cell was observed and the code of its reason otherwise;
``correct`` is False at every missing cell, so it never reads as an answer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

OBSERVED = 0
#: the reasons, in code order (code = position + 1)
MISSING_REASONS: tuple[str, ...] = ("not_collected", "not_possible", "failed")
NOT_COLLECTED, NOT_POSSIBLE, FAILED = 1, 2, 3
REASON_CODE: dict[str, int] = {r: i + 1 for i, r in enumerate(MISSING_REASONS)}
FIX_MISSING = (
    "a missing cell is null (not collected) or one of "
    + ", ".join(repr(r) for r in MISSING_REASONS)
    + " in 'correct'; see docs/records.md, 'Incomplete records'"
)


def reason_code(v: Any) -> int | None:
    """The reason code of a JSONL ``correct`` value that marks a missing cell (``null`` is
    "not_collected"), or None when ``v`` does not mark one."""
    if v is None:
        return NOT_COLLECTED
    if type(v) is str:
        return REASON_CODE.get(v)
    return None


def reason_name(code: int) -> str:
    return MISSING_REASONS[int(code) - 1]


def check_missing(missing: np.ndarray | None, shape: tuple[int, ...]) -> str | None:
    """What is wrong with a ``missing`` array (None if nothing): its shape and codes."""
    if missing is None:
        return None
    if missing.shape != tuple(shape):
        return f"'missing' has shape {missing.shape}, expected {tuple(shape)}"
    if ((missing < 0) | (missing > len(MISSING_REASONS))).any():
        return f"'missing' holds codes other than 0..{len(MISSING_REASONS)}"
    return None


#: the fix of ``check_correct``'s problem (only a packed file, a load-cache entry or records built
#: in memory can have it: a JSONL or table cell that is missing is written as its reason, not a bit)
FIX_MISSING_CORRECT = (
    "a missing cell holds 0 (false) in 'correct' and 'score' and its reason in 'missing': set 'correct' to 0 "
    "there, or re-create a packed file from its source with `leaderboard-audit pack SRC -o OUT` "
    "(docs/records.md, 'Incomplete records')"
)
CHECK_BLOCK = 1 << 20  # cells per step of ``correct_at_missing``: its product buffer stays small


def correct_at_missing(correct: np.ndarray, missing: np.ndarray) -> int:
    """How many cells ``missing`` marks (non-zero) that are 1 in ``correct`` (same shape, one
    axis or more).

    One vectorised pass over both arrays, a block of leading rows (~``CHECK_BLOCK`` cells)
    at a time, so a 1,000 x 8,000 x 26 grid needs no full-size temporary (~70 ms here): the
    bytes are multiplied (0/1 times a reason code), non-zero exactly where both are."""
    c = correct.view(np.uint8) if correct.dtype == np.bool_ else (correct != 0).view(np.uint8)
    m = missing.view(np.uint8) if missing.dtype.itemsize == 1 else (missing != 0).view(np.uint8)
    rows = c.shape[0]
    step = max(1, CHECK_BLOCK // max(1, int(np.prod(c.shape[1:]))))
    buf = np.empty((min(step, rows), *c.shape[1:]), dtype=np.uint8)
    n = 0
    for lo in range(0, rows, step):
        hi = min(lo + step, rows)
        out = buf[: hi - lo]
        np.multiply(c[lo:hi], m[lo:hi], out=out)
        n += int(np.count_nonzero(out))
    return n


def check_correct(correct: np.ndarray, missing: np.ndarray | None) -> str | None:
    """What is wrong with ``correct`` beside a ``missing`` mask (None if nothing): a cell
    both missing and 1 in ``correct``. Such a bit would be read as an answer by every
    quantity that reads the bits, although a verdict on incomplete records must be the
    same whatever the missing cells hold (docs/audits.md, "Incomplete grids"). A complete
    set (``missing`` None) costs nothing; a mask of another shape is ``check_missing``'s."""
    if missing is None:
        return None
    correct, missing = np.asarray(correct), np.asarray(missing)
    if missing.shape != correct.shape or correct.ndim == 0:
        return None
    n = correct_at_missing(correct, missing)
    if not n:
        return None
    return f"'correct' is 1 at {n:,} missing cell(s) (a missing cell is 0 in 'correct')"


def normalised(missing: np.ndarray | None) -> np.ndarray | None:
    """None when no cell is missing (a complete grid has no mask), else ``missing`` as int8."""
    if missing is None or not missing.any():
        return None
    return np.asarray(missing, dtype=np.int8)


def missing_counts(records: Any) -> dict[str, Any]:
    """How many cells are missing: in all, per reason, per benchmark and per model."""
    miss = records.missing
    out: dict[str, Any] = {"cells": int(np.prod(records.shape)), "missing": 0, "by_reason": {}}
    if miss is None:
        return out
    out["missing"] = int(np.count_nonzero(miss))
    out["by_reason"] = {r: int(np.count_nonzero(miss == c)) for r, c in REASON_CODE.items() if (miss == c).any()}
    bench = records.items.benchmark
    per_b = {}
    for b in records.benchmarks:
        n = int(np.count_nonzero(miss[:, bench == b]))
        if n:
            per_b[b] = n
    out["by_benchmark"] = per_b
    per_m = np.count_nonzero(miss.reshape(miss.shape[0], -1), axis=1)
    out["by_model"] = {m: int(n) for m, n in zip(records.models, per_m.tolist()) if n}
    return out


def incomplete_message(records: Any, where: str) -> str:
    """The one usage error an audit gives for records it cannot audit at all: missing cells
    under the reference configuration (docs/audits.md, "Incomplete grids")."""
    c = missing_counts(records)
    ref = records.grid.reference_index
    at_ref = records.missing[:, :, ref]
    n_ref = int(np.count_nonzero(at_ref))
    per_m = np.count_nonzero(at_ref, axis=1)
    models = sorted(((m, int(n)) for m, n in zip(records.models, per_m.tolist()) if n), key=lambda kv: (-kv[1], kv[0]))
    shown = ", ".join(f"{m}={n:,}" for m, n in models[:8]) + (f" (+{len(models) - 8} more)" if len(models) > 8 else "")
    reasons = ", ".join(
        f"{int(np.count_nonzero(at_ref == code)):,} {r}" for r, code in REASON_CODE.items() if (at_ref == code).any()
    )
    return (
        f"{where}: incomplete records: {c['missing']:,} of {c['cells']:,} cells are missing, {n_ref:,} of them under "
        f"the reference configuration {records.grid.reference!r} ({reasons}; per model: {shown}). The printed "
        "leaderboard is the reference configuration on every item, and every verdict compares against it, so it "
        "cannot be audited with reference cells missing; a missing cell is never counted as wrong. Fix: collect "
        "the reference configuration on every (model, item) (a budgeted collection's first round does), or drop "
        "the models that lack it (docs/audits.md, 'Incomplete grids')"
    )


class IncompleteRecordsError(ValueError):
    """An audit was asked of records it cannot audit (``incomplete_message``)."""


def refuse_incomplete(records: Any, where: str) -> None:
    """Raise ``IncompleteRecordsError`` when ``records`` miss cells under the reference
    configuration; other missing cells are audited (checks/incomplete.py)."""
    miss = getattr(records, "missing", None)
    if miss is not None and np.asarray(miss)[:, :, records.grid.reference_index].any():
        raise IncompleteRecordsError(incomplete_message(records, where))


__all__ = [
    "FAILED",
    "FIX_MISSING",
    "FIX_MISSING_CORRECT",
    "IncompleteRecordsError",
    "MISSING_REASONS",
    "NOT_COLLECTED",
    "NOT_POSSIBLE",
    "OBSERVED",
    "REASON_CODE",
    "check_correct",
    "correct_at_missing",
    "incomplete_message",
    "missing_counts",
    "reason_code",
    "reason_name",
    "refuse_incomplete",
]
