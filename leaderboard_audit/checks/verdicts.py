"""Verdicts: pass / warn / fail with a value, a threshold and a margin (docs/audits.md, "Verdicts").

``margin`` is the signed distance from ``value`` to ``threshold``, the boundary of the
pass region: positive inside it, negative outside. Comparisons with a threshold are
exact at the boundary: both sides are rounded to 12 decimals first.

Each check's own rule lives in its module under ``leaderboard_audit/checks/``; this
module holds what they share, and ``judge`` for checks users write themselves. The
thresholds' defaults are the checks' declarations, so ``Thresholds`` lives with the
checks (``leaderboard_audit.checks.Thresholds``); this module only converts a value
(``convert_threshold``) and never imports the checks.
"""

from __future__ import annotations

import math
from typing import Any


from ..metrics.exact import DECIMALS, exact, ge, le

PASS, WARN, FAIL, SKIP = "pass", "warn", "fail", "skip"
SEVERITY = {PASS: 0, SKIP: 0, WARN: 1, FAIL: 2}
# One definition of the exact comparisons (metrics/exact.py); the rule names read as verdicts.
at_most = le
at_least = ge


# Upper bounds of count thresholds whose value sizes an array: flip_boot draws a
# (flip_boot x items) int64 table (1e9 asked for 447 GiB); 100,000 is 100x the default.
COUNT_MAXIMA = {"flip_boot": 100_000}


def convert_threshold(name: str, value: Any, default: float | int) -> float | int:
    if isinstance(value, bool):
        raise ValueError(f"audit threshold {name}={value!r} is not a number")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"audit threshold {name}={value!r} is not a number") from None
    if not math.isfinite(x):
        raise ValueError(f"audit threshold {name}={value!r} must be finite")
    if isinstance(default, int):
        if x != int(x) or x < 1:
            raise ValueError(f"audit threshold {name}={value!r} must be a positive whole number")
        top = COUNT_MAXIMA.get(name)
        if top is not None and x > top:
            raise ValueError(f"audit threshold {name}={value!r} must be between 1 and {top:,}")
        return int(x)
    return x


def make_verdict(
    check: str,
    vid: str,
    status: str,
    value: float | None,
    threshold: float | None,
    margin: float | None,
    message: str,
    evidence: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The verdict record every check returns (and the report, JUnit and summary carry)."""
    out = {
        "check": check,
        "id": vid,
        "status": status,
        "value": value,
        "threshold": threshold,
        "margin": margin,
        "message": message,
    }
    if evidence is not None:
        out["evidence"] = evidence
    return out


def judge(
    value: float, *, pass_at: float, warn_at: float | None = None, higher_is_better: bool = True
) -> tuple[str, float]:
    """(status, margin) of ``value`` against a pass boundary and an optional warn boundary.

    ``higher_is_better``: pass when ``value >= pass_at``, warn when ``>= warn_at``;
    otherwise the mirror image. Exact at the boundary (12 decimals). The margin is
    ``value - pass_at`` (or ``pass_at - value``): positive inside the pass region."""
    if not math.isfinite(float(value)):
        raise ValueError(f"value {value!r} is not a finite number")
    ok = at_least if higher_is_better else at_most
    margin = exact(value - pass_at if higher_is_better else pass_at - value) + 0.0  # never -0.0
    if ok(value, pass_at):
        return PASS, margin
    if warn_at is not None and ok(value, warn_at):
        return WARN, margin
    return FAIL, margin


def fmt(x: float | None, nd: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{nd}f}"


def skipped(check: str, vid: str, reason: str) -> dict[str, Any]:
    return make_verdict(check, vid, SKIP, None, None, None, reason)


__all__ = [
    "DECIMALS",
    "FAIL",
    "PASS",
    "SEVERITY",
    "SKIP",
    "WARN",
    "at_least",
    "at_most",
    "exact",
    "fmt",
    "judge",
    "make_verdict",
    "skipped",
]
