"""Power of the robust-item comparison (docs/spec/AUDITS.md v3, "Power of the robust-item
comparison"; docs/audits.md).

Section ``unidentifiable_pairs`` (no verdict of its own): the adjacent pairs of the
printed order whose jointly robust items disagree too rarely for any split to reach
``p <= alpha`` under the exact sign test (n <= 5 at 0.05). When they are most adjacent
pairs, the summary says so, why, and points to the harness-averaged order.
"""

from __future__ import annotations

from typing import Any

from ..metrics.power import median, min_disagreements
from .tables import Line
from .base import Check, Scope


class Power(Check):
    name = "power"
    position = 30  # in the report: after the checks with a lower position
    title = "Power of the robust-item comparison"
    section = "unidentifiable_pairs"

    report_only = True  # no cases: a report section, no audits/ test module

    def cases(self, scope: Scope) -> list[tuple[str, str]]:
        return []

    def judge(self, scope: Scope, section: Any) -> list[dict[str, Any]]:
        return []

    def compute(self, scope: Scope) -> dict[str, Any] | None:
        pairs = scope.sections.get("pairs")
        if pairs is None:
            return None
        n_min = min_disagreements(scope.alpha)
        low = [p for p in pairs if p["higher_only"] + p["lower_only"] < n_min]
        return {
            "count": len(low),
            "adjacent": len(pairs),
            "min_disagreements": n_min,
            "alpha": scope.alpha,
            "median_robust_items": median([p["robust_items"] for p in pairs]),
            "median_disagreements": median([p["higher_only"] + p["lower_only"] for p in pairs]),
            "pairs": [[p["higher"], p["lower"]] for p in low[:20]],
        }

    def tables(self, name: str, s: dict[str, Any]) -> list[Line]:
        u = s.get("unidentifiable_pairs")
        if not u or not u["adjacent"] or 2 * u["count"] <= u["adjacent"]:
            return []
        return [Line("power", power_line(u, s.get("n_configs", 1)), detail="summary")]


def power_line(u: dict[str, Any], n_configs: int) -> str:
    why = (
        "a model is rarely wrong under every configuration of a grid of many option orders, so few items "
        "are robust for both models of a pair"
        if n_configs > 1
        else "the pairs disagree on too few items"
    )
    return (
        f"power: {u['count']} of {u['adjacent']} adjacent pairs disagree on fewer than "
        f"{u['min_disagreements']} jointly robust items, and no split of so few can reach p <= "
        f"{u['alpha']:g} (median |J| {u['median_robust_items']:g}, median disagreements "
        f"{u['median_disagreements']:g}): {why}. Read the harness-averaged order beside the identified one."
    )


CHECK = Power()

__all__ = ["CHECK", "Power", "power_line"]
