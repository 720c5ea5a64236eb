"""What an audit test does with its verdict, and the report's own copy of the scopes."""

from __future__ import annotations

import json
from typing import Any

import pytest

VERDICT_KEY = pytest.StashKey[list]()
VERDICT_FIELDS = ("check", "id", "status", "value", "threshold", "margin", "message", "evidence", "scope", "user")
FAILURE_DETAILS_LIMIT = 100  # failed audit tests above which pytest's failure section is left out


def record_verdict(
    item: pytest.Item, v: dict[str, Any], *also: dict[str, Any], context: dict[str, str] | None = None
) -> None:
    """Attach a verdict to the running test: on its report (crosses xdist), in JUnit
    ``audit_*`` properties; a fail fails the test with the evidence; a skip skips it.

    ``also``: an alias scope's verdicts the same test judges (``auditor.collected_cases``):
    on the report too, their ids in the ``audit_also`` property; any fail fails the test."""
    vs = (v, *also)
    item.stash.setdefault(VERDICT_KEY, []).extend(vs)
    for key in ("status", "value", "threshold", "margin"):
        item.user_properties.append((f"audit_{key}", v[key]))
    if also:
        item.user_properties.append(("audit_also", " ".join(a["id"] for a in also)))
    failed = [x for x in vs if x["status"] == "fail"]
    if failed and context is not None and all(x["id"] in context for x in failed):
        from ..reports.text import clean

        item.user_properties.append(("audit_gate", "context"))
        pytest.xfail("; ".join(clean(f"{x['id']}: {context[x['id']]}") for x in failed))
    if failed:
        from ..reports.terminal import evidence_block

        blocks: list[str] = []
        for x in failed:
            twin = next((b for b in failed if b is not x and _same_but_id(b, x) and blocks), None)
            if x is not v and twin is not None:  # the alias scope's copy of a verdict shown above
                blocks.append(
                    f"{x['id']}: the same verdict ({x['status'].upper()}; one benchmark: pooled holds its items)"
                )
            else:
                blocks.append(evidence_block(x))
        pytest.fail("\n\n".join(blocks), pytrace=False)
    if all(x["status"] == "skip" for x in vs):
        from ..reports.text import clean

        pytest.skip(clean(v["message"]))


def message_repr(item: pytest.Item) -> Any:
    """An audit test's failure shown as its message (the evidence ``record_verdict`` wrote).

    ``pytest.fail(..., pytrace=False)`` still has pytest walk and filter the traceback, ~3 ms
    a failure: 20 s of a 1,000-model audit's 7,400 failing tests (docs/performance.md). An
    error that is not the audit's own keeps pytest's full report."""
    original = item.repr_failure

    def repr_failure(excinfo: pytest.ExceptionInfo[BaseException], *args: Any, **kwargs: Any) -> Any:
        value = excinfo.value
        if isinstance(value, pytest.fail.Exception) and not value.pytrace:
            return str(value)
        return original(excinfo, *args, **kwargs)

    return repr_failure


def _same_but_id(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two verdicts that differ only in their id (and the scope names inside the message)."""
    keys = ("check", "status", "value", "threshold", "margin")
    return all(a.get(k) == b.get(k) for k in keys)


class AuditCheck:
    """What a bundled check's test receives: its verdict, and how to enforce it."""

    def __init__(
        self,
        item: pytest.Item,
        v: dict[str, Any],
        also: tuple[dict[str, Any], ...] = (),
        context: dict[str, str] | None = None,
    ):
        self.item = item
        self.verdict = v
        self.also = also  # the alias scope's verdicts this test judges too
        self.context = context  # submission gate: fails that do not fail the gate, and why

    @property
    def status(self) -> str:
        return self.verdict["status"]

    def enforce(self) -> None:
        record_verdict(self.item, self.verdict, *self.also, context=self.context)


_JSON_SCALARS = (str, int, float, bool, type(None))


def json_normal(obj: Any) -> bool:
    """Whether ``obj`` is what ``json.loads`` gives back: dicts with str keys, lists, and
    str / int / float / bool / None (no tuples, no other key or value types)."""
    stack = [obj]
    while stack:
        x = stack.pop()
        if type(x) is dict:
            if any(type(k) is not str for k in x):
                return False
            items = x.values()
        elif type(x) is list:
            items = x
        else:
            if type(x) not in _JSON_SCALARS:
                return False
            continue
        for v in items:
            if type(v) is dict or type(v) is list:
                stack.append(v)
            elif type(v) not in _JSON_SCALARS:
                return False
    return True


def report_copy(scopes: dict[str, dict[str, Any]], known_normal: Any = ()) -> dict[str, dict[str, Any]]:
    """The scopes as the report's own, equal to ``json.loads(json.dumps(scopes))``: a scope
    that is already JSON-normal (``json_normal``: always, from xdist workers; the bundled
    checks' sections are) is reused, with fresh copies of what the report then changes
    (its verdict list, its pair entries); any other scope goes through the JSON round trip.
    A 4,278-model scope: 0.04 s instead of 0.2 s, and no second copy of it in memory.
    ``known_normal``: scopes that are ``json.loads``'s own output (from the workers), not walked."""
    out = {}
    for name, s in scopes.items():
        if name not in known_normal and not json_normal(s):
            out[name] = json.loads(json.dumps(s))
            continue
        own = dict(s)
        if type(own.get("verdicts")) is list:
            own["verdicts"] = list(own["verdicts"])
        if type(own.get("pairs")) is list:
            own["pairs"] = [dict(p) if type(p) is dict else p for p in own["pairs"]]
        out[name] = own
    return out


def add_user_verdicts(report: dict[str, Any], verdicts: Any) -> None:
    """Verdicts of checks users wrote (``audit_verdict``) join their scope's verdict list."""
    known = {v["id"] for s in report["scopes"].values() for v in s.get("verdicts", [])}
    extra = sorted((v for v in verdicts if v.get("user") and v["id"] not in known), key=lambda v: v["id"])
    for v in extra:
        scope = v.get("scope") or "pooled"
        target = report["scopes"].get(scope)
        if target is None:
            target = report.setdefault("user_checks", {}).setdefault(scope, {"verdicts": []})
        target.setdefault("verdicts", []).append(dict(v))


__all__ = [
    "AuditCheck",
    "FAILURE_DETAILS_LIMIT",
    "VERDICT_FIELDS",
    "VERDICT_KEY",
    "add_user_verdicts",
    "json_normal",
    "message_repr",
    "record_verdict",
    "report_copy",
]
