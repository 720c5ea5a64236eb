"""One benchmark: the pooled scope repeats the benchmark's scope, so the reports show the
repeated verdicts once, under pooled. A verdict only the benchmark's scope holds (a user
check's ``audit_verdict(..., scope=benchmark)``) repeats nothing and is shown like any other
(UX review 2026-12-04 #7: it failed the run but no table showed it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


def twin_scopes(report: dict[str, Any]) -> dict[str, str]:
    """With one benchmark the pooled scope repeats it: {benchmark scope: "pooled"}."""
    scopes = report.get("scopes") or {}
    benches = [n for n in scopes if n != "pooled"]
    return {benches[0]: "pooled"} if "pooled" in scopes and len(benches) == 1 else {}


def _pooled_id(vid: str, scope: str) -> str:
    """``check[arc-a>b]`` -> ``check[pooled-a>b]``; ``check[arc]`` -> ``check[pooled]``."""
    head, sep, inner = vid.partition("[")
    if not sep:
        return vid
    for tail in ("-", "]"):
        if inner.startswith(scope + tail):
            return f"{head}[pooled{inner[len(scope) :]}"
    return vid


def twin_copy_test(report: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
    """A predicate: is this verdict a twin scope's copy of a pooled verdict (shown once, under pooled)?"""
    twins = twin_scopes(report)
    if not twins:
        return lambda v: False
    pooled = (report.get("scopes") or {}).get("pooled") or {}
    pooled_ids = {str(v.get("id")) for v in pooled.get("verdicts") or []}

    def is_copy(v: dict[str, Any]) -> bool:
        vid = str(v.get("id", ""))
        return any((p := _pooled_id(vid, name)) != vid and p in pooled_ids for name in twins)

    return is_copy


def shown(report: dict[str, Any], verdicts: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """``verdicts`` less the twin copies."""
    is_copy = twin_copy_test(report)
    return [v for v in verdicts if not is_copy(v)]


def reported_verdicts(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Every scope's verdicts, each repeated verdict once."""
    return shown(report, (v for s in (report.get("scopes") or {}).values() for v in s.get("verdicts") or []))


def twin_only(report: dict[str, Any], scope: str) -> list[dict[str, Any]]:
    """The verdicts of a twin scope that repeat no pooled verdict (a user check's)."""
    return shown(report, ((report.get("scopes") or {}).get(scope) or {}).get("verdicts") or [])


def steps_scope(report: dict[str, Any]) -> str:
    """ " (scope NAME)" when "what to do next" describes a scope other than pooled (``-k mmlu``
    leaves pooled out of the report; UX review 2026-12-04 #25), else ""."""
    scopes = report.get("scopes") or {}
    if not scopes or "pooled" in scopes:
        return ""
    return f" (scope {next(iter(scopes))})"


__all__ = ["reported_verdicts", "shown", "steps_scope", "twin_copy_test", "twin_only"]
