"""Robust subset: benchmark compression that does not keep the fragile items (beyond the
paper: beside section 4.4 and Table 7)

Section ``robust_subset`` (no verdict: a report section): the k most discriminative items
among those robust for most models, with its champion count, Kendall tau vs the full set
and mean fragility, beside the same figures for the paper's top-k by discrimination.
Definitions: docs/audits.md, "Beyond the paper: robust subset".
"""

from __future__ import annotations

from typing import Any

from ..metrics.robust_subset import robust_subset
from .tables import Line, Table
from .verdicts import fmt
from .base import GRADED_COMPRESSION, Check, Scope


class RobustSubset(Check):
    name = "robust_subset"
    position = 120  # in the report: after the checks with a lower position
    title = "Robust subset (beyond the paper: section 4.4)"
    section = "robust_subset"

    report_only = True  # no cases: a report section, no audits/ test module

    def cases(self, scope: Scope) -> list[tuple[str, str]]:
        return []

    def judge(self, scope: Scope, section: Any) -> list[dict[str, Any]]:
        return []

    def compute(self, scope: Scope) -> dict[str, Any]:
        if scope.single_config:
            return {"skipped": "one configuration: every item is robust"}
        if scope.graded:
            return {"skipped": GRADED_COMPRESSION}
        return robust_subset(scope.C, scope.ref, seed=scope.seed, scope=scope.name, k=scope.thresholds.compression_k)

    def tables(self, name: str, s: dict[str, Any]) -> list[Table | Line]:
        r = s.get("robust_subset")
        if not r:
            return []
        if "skipped" in r:
            return [Line("robust_subset", f"robust subset: skipped ({r['skipped']})")]
        t = r["topk"]
        k = r.get("k_used", r["k"])
        k_note = "" if k == r["k"] else f" (k={r['k']} asked; only {k} items have a defined discrimination)"

        def row(label: str, x: dict[str, Any]) -> list[Any]:
            return [
                label,
                x["champions_mean"],
                f"{x['champions_min']}-{x['champions_max']}",
                x["kendall_tau_mean"],
                x["kendall_tau_min"],
                x["mean_fragility"],
            ]

        rows = [
            ["all items", r["champions_full"], "-", 1.0, 1.0, r["mean_fragility_all"]],
            row(f"top-{k} by discrimination", t),
            row(f"robust subset (k={k})", r),
        ]
        cap = f"items config-fragile for at most {r['fragile_models_cap']} models" + (
            " (cap raised: too few items are robust for most models)"
            if r["cap_raised"]
            else " (robust for most models)"
        )
        table = Table(
            "robust_subset",
            "Robust subset vs top-k by discrimination",
            ["subset", "champions (mean)", "range", "Kendall tau vs all (mean)", "min", "mean fragility"],
            rows,
            note=f"Robust subset: the {k} most discriminative of the {r['eligible']} {cap}{k_note}; ties at "
            "the cutoff broken by seeded draws, figures are means over the draws. Kendall tau: "
            "reference-config accuracies on the subset vs on all items.",
        )
        line = Line(
            "robust_subset",
            f"robust subset (k={k}{k_note}): mean fragility {fmt(r['mean_fragility'], 2)} vs "
            f"top-k {fmt(t['mean_fragility'], 2)} (all items {fmt(r['mean_fragility_all'], 2)}); champions "
            f"{_count(r['champions_mean'])} vs {_count(t['champions_mean'])} (all items "
            f"{r['champions_full']}); Kendall tau vs all {fmt(r['kendall_tau_mean'], 2)} vs "
            f"{fmt(t['kendall_tau_mean'], 2)}",
            detail="summary",
        )
        return [table, line]


def _count(x: float | None) -> str:
    """A mean champion count: whole when every draw gave the same count (3, not 3.0)."""
    if x is None:
        return "n/a"
    return str(int(x)) if float(x).is_integer() else f"{x:.1f}"


CHECK = RobustSubset()
