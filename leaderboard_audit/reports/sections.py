"""What a scope shows: each registered check's tables and lines, except a skipped check's.

A check skipped for the scope (one configuration: band, champions, axes, ...) would
draw tables whose columns all equal the reference and claims (a "most destructive"
axis) that nothing measured; it gets one line saying it was skipped and why.
"""

from __future__ import annotations

from typing import Any

from ..checks import registry
from ..checks.tables import Line


#: tables shown even when their check is skipped (the printed leaderboard itself, narrowed by the renderers)
ALWAYS = frozenset({"leaderboard"})


def skipped_checks(s: dict[str, Any]) -> dict[str, str]:
    """check name -> the reason it was skipped in this scope."""
    return {
        v["check"]: str(v.get("message", ""))
        for v in s.get("verdicts") or []
        if v.get("status") == "skip" and "check" in v
    }


def withheld_sections(s: dict[str, Any]) -> dict[str, str]:
    """section -> why an incomplete scope leaves it out (checks/incomplete_sections.py)."""
    got = (s.get("incomplete") or {}).get("withheld")
    return dict(got) if isinstance(got, dict) else {}


def scope_parts(name: str, s: dict[str, Any]) -> list[Any]:
    """``Table`` / ``Line`` objects in registry order; the skipped checks are one ``Line`` per
    reason (at the place of the first of them), and so are the checks whose section an
    incomplete grid leaves out."""
    skipped = skipped_checks(s)
    withheld = withheld_sections(s)
    out: list[Any] = []
    said: set[str] = set()
    for check_name, check in registry().items():
        if check.section in withheld and check_name not in skipped:
            reason = withheld[check.section]
            if reason not in said:
                said.add(reason)
                names = [n for n, c in registry().items() if c.section in withheld and withheld[c.section] == reason]
                out.append(Line("withheld", f"not shown: {', '.join(names)} ({reason})", "short"))
            continue
        if check_name not in skipped:
            out += check.tables(name, s)
            continue
        out += [x for x in check.tables(name, s) if getattr(x, "key", None) in ALWAYS]
        reason = skipped[check_name]
        if reason in said:
            continue
        said.add(reason)
        names = [n for n in registry() if skipped.get(n) == reason]
        out.append(Line("skipped", f"skipped: {', '.join(names)} ({reason})", "short"))
    return out


__all__ = ["scope_parts", "skipped_checks", "withheld_sections"]
