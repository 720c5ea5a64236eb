"""The harness-averaged order (docs/spec/AUDITS.md v3, "The harness-averaged order").

Section ``averaged`` (no verdict of its own: the ``ranking`` verdict stays on the
identified order and shows this order beside it): every pair of models compared item
by item on its accuracy averaged over the grid, exact sign test, Holm over all pairs.
With one configuration it coincides with the identified order (``coincides``)."""

from __future__ import annotations

from typing import Any

from ..metrics.averaged import METHOD, averaged_order, configs_won
from ..metrics.identified import identified_report
from .tables import Line
from .base import Check, Scope


class Averaged(Check):
    name = "averaged"
    title = "Harness-averaged order (accuracy averaged over the grid, Holm-adjusted sign tests)"
    section = "averaged"

    report_only = True  # no cases: a report section, no audits/ test module

    def cases(self, scope: Scope) -> list[tuple[str, str]]:
        return []

    def judge(self, scope: Scope, section: Any) -> list[dict[str, Any]]:
        return []

    def skip_reason(self, scope: Scope) -> str | None:
        return "one model: there is no order" if scope.shape[0] < 2 else None

    def compute(self, scope: Scope) -> dict[str, Any] | None:
        if scope.shape[0] < 2:
            return None
        names = scope.names
        ao = averaged_order(scope.C, models=names, alpha=scope.alpha, display=scope.order, parts=scope.parts)
        out = identified_report(ao, names, method=METHOD)
        out["winner"] = out.pop("robust_winner")
        out["coincides"] = bool(scope.single_config)
        won = configs_won(scope.C) if not scope.verdicts_only else None
        adjacent = []
        for h, lo in zip(scope.order[:-1].tolist(), scope.order[1:].tolist()):
            entry = {
                "higher": names[h],
                "lower": names[lo],
                "above": int(ao.only[h, lo]),
                "below": int(ao.only[lo, h]),
                "p_holm": float(ao.p_holm[h, lo]),
                "identified": "higher" if ao.above[h, lo] else "lower" if ao.above[lo, h] else None,
            }
            if won is not None:
                entry["configs_won"] = [int(won[h, lo]), int(won[lo, h])]
            adjacent.append(entry)
        out["adjacent"] = adjacent
        out["pairs_tested"] = int(len(names) * (len(names) - 1) // 2)
        return out

    def tables(self, name: str, s: dict[str, Any]) -> list[Line]:
        a = s.get("averaged")
        if not a or a.get("coincides"):
            return []
        return [Line("averaged", averaged_line(a))]


def tiers_text(tiers: list[list[str]], limit: int = 4, names: int = 3) -> str:
    """Tiers as ``{a, b} > {c, ...+5}``: at most ``limit`` tiers and ``names`` names each
    (the full tiers live in the report's section)."""
    parts = []
    for tier in tiers[:limit]:
        shown = ", ".join(tier[:names]) + (f", ... +{len(tier) - names}" if len(tier) > names else "")
        parts.append("{" + shown + "}")
    more = f" > ... ({len(tiers) - limit} more tiers)" if len(tiers) > limit else ""
    return " > ".join(parts) + more


def averaged_line(a: dict[str, Any]) -> str:
    sizes = [len(t) for t in a["tiers"]]
    return (
        f"harness-averaged order (tiers): {tiers_text(a['tiers'])} ({len(sizes)} tier"
        f"{'s' if len(sizes) != 1 else ''}, sizes {', '.join(map(str, sizes[:8]))}"
        f"{', ...' if len(sizes) > 8 else ''}; {a['edges_total']} of {a['pairs_tested']} pairs ordered); "
        f"winner: {a['winner'] or 'none (' + (a.get('reason') or '') + ')'}"
    )


CHECK = Averaged()

__all__ = ["Averaged", "CHECK", "averaged_line", "tiers_text"]
