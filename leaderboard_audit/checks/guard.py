"""A registered (third-party) check can fail only its own verdicts (docs/checks.md).

The bundled checks are trusted to return well-formed verdicts; a check registered
through the ``leaderboard_audit.checks`` entry point is not. Its ``compute``/``judge``
run through :func:`guarded_verdicts`, so that

* an exception becomes one FAIL verdict per case of that check, naming the check and
  the exception, instead of erroring every test of the scope (the bundled ones too);
* ``judge`` returning fewer verdicts than ``cases`` is a FAIL for each missing case
  (not a ``KeyError`` in the test); verdicts beyond the cases are left out;
* a non-finite value, threshold or margin (NaN would make the JSON report unwritable)
  becomes ``None`` and the verdict a FAIL saying so; non-finite numbers in its section
  become ``None`` (:func:`json_safe`).

Verdict ids are namespaced by ``auditor.cases``: a registered check's id always starts
with ``<name>[``, so it can never shadow a bundled verdict.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .verdicts import FAIL, make_verdict

NUMBERS = ("value", "threshold", "margin")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def is_bundled(check: Any) -> bool:
    return type(check).__module__.startswith("leaderboard_audit.")


def namespaced(check: Any, vid: str) -> str:
    """``vid`` as the id of ``check``'s verdict: it must start with ``<name>[``."""
    if is_bundled(check) or vid.startswith(f"{check.name}["):
        return vid
    return f"{check.name}[{vid}]"


def _failed(check: Any, vid: str, why: str) -> dict[str, Any]:
    return make_verdict(check.name, vid, FAIL, None, None, None, f"check {check.name!r} {why}")


def _finite(check: Any, v: Any, vid: str) -> dict[str, Any]:
    if not isinstance(v, dict):
        return _failed(check, vid, f"returned a {type(v).__name__} instead of a verdict (verdicts.make_verdict)")
    bad = []
    out = dict(v)
    for k in NUMBERS:
        x = out.get(k)
        if isinstance(x, float) and not math.isfinite(x):
            bad.append(f"{k}={x!r}")
            out[k] = None
    if bad:
        out["status"] = FAIL
        out["message"] = f"{out.get('message', '')} (check {check.name!r} returned a non-finite {', '.join(bad)})"
    return out


def json_safe(obj: Any, depth: int = 0) -> Any:
    """A registered check's section with non-finite floats as None (the report stays valid JSON)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if depth > 50:
        return None
    if isinstance(obj, dict):
        return {k: json_safe(v, depth + 1) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [json_safe(v, depth + 1) for v in obj]
    return obj


def guarded_verdicts(check: Any, case_ids: list[str], run: Callable[[], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """``run()``'s verdicts for a registered check, one per case id in ``case_ids``."""
    try:
        found = list(run())
    except Exception as exc:  # a third-party check: contained to its own verdicts
        why = f"raised {type(exc).__name__}: {str(exc)[:300]}"
        return [_failed(check, vid, why) for vid in case_ids or [f"{check.name}[?]"]]
    out = [_finite(check, v, case_ids[j] if j < len(case_ids) else f"{check.name}[?]") for j, v in enumerate(found)]
    for vid in case_ids[len(out) :]:
        out.append(_failed(check, vid, f"returned {_count(len(found), 'verdict')} for {_count(len(case_ids), 'case')}"))
    return out[: len(case_ids)] if case_ids else out


__all__ = ["guarded_verdicts", "is_bundled", "json_safe", "namespaced"]
