"""Axes: which harness axis, varied alone, reorders the models? (paper section 4.5, Table 3, Figure 4)

Section ``axes``: the axis groups (ordering, format, scoring, joint) relative to the
reference, robust accuracy per model and axis, the most destructive axis per model
and the min Kendall tau per axis. Verdict ``axes[<scope>]`` (docs/audits.md).
"""

from __future__ import annotations

from typing import Any

from ..metrics import axes as axes_m
from .tables import Line, Table
from .verdicts import FAIL, PASS, WARN, at_least, exact, make_verdict, skipped
from .base import Check, Scope


class Axes(Check):
    name = "axes"
    title = "Axes (Table 3, Figure 4)"
    section = "axes"
    thresholds = {"axes_pass": 0.9, "axes_warn": 0.6}
    needs_configs = True

    def skip_reason(self, scope: Scope) -> str | None:
        reason = super().skip_reason(scope)
        if reason:
            return reason
        groups = axes_m.axis_groups(scope.records.grid)
        singles = axes_m.single_axes(groups)
        if all(len(groups[a]) < 2 for a in singles):
            return (
                f"no usable axis: every single-axis group ({', '.join(singles)}) holds only the reference configuration"
            )
        return None

    def compute(self, scope: Scope) -> dict[str, Any]:
        keys, names = scope.keys, scope.names
        groups = axes_m.axis_groups(scope.records.grid)
        rob = axes_m.axis_robust(scope.C, groups)
        md = axes_m.most_destructive(rob)
        order = scope.order.tolist()
        declared = {"declared": True} if scope.records.grid.axis_groups is not None else {}
        return {
            **declared,  # grid.json's axis_groups (absent: the paper's three, derived)
            "groups": {a: [keys[k] for k in g] for a, g in groups.items()},
            "robust_accuracy": {names[m]: {a: float(rob[a][m]) for a in groups} for m in order},
            "mean": {a: float(rob[a].mean()) for a in groups},
            "most_destructive": {names[m]: md[m] for m in order},
            "axis_kendall_min": axes_m.axis_kendall_min(scope.acc, scope.ref, groups),
        }

    def judge(self, scope: Scope, section: dict[str, Any]) -> list[dict[str, Any]]:
        return [axes_verdict(scope.name, section, scope.thresholds)]

    def tables(self, name: str, s: dict[str, Any]) -> list[Table | Line]:
        ax = s.get("axes")
        if not ax:
            return []
        return [self.table(ax, s), *declared_summary(ax)]

    def table(self, ax: dict[str, Any], s: dict[str, Any]) -> Table:
        axes = tuple(ax["groups"])  # every declared axis (or the paper's three), joint last
        rows = [
            [
                r["model"],
                *(ax["robust_accuracy"][r["model"]][a] for a in axes),
                ax["most_destructive"].get(r["model"], "-"),
            ]
            for r in s["leaderboard"]
        ]
        rows.append(["mean", *(ax["mean"][a] for a in axes), ""])
        rows.append(["min Kendall tau", *(ax["axis_kendall_min"].get(a) for a in axes), ""])
        sizes = {a: len(ax["groups"].get(a, [])) for a in axes}
        return Table(
            "axes",
            "Axes: robust accuracy per axis (Table 3, Figure 4)",
            ["model", *(f"{a} ({sizes[a]})" for a in axes), "most destructive"],
            rows,
            note="Robust accuracy = items right under every config of the axis group; the last row is "
            "the min Kendall tau between the reference and the group's configs.",
            widths={0: 22},
        )


def declared_summary(ax: dict[str, Any]) -> list[Line]:
    """Declared axes (grid.json axis_groups) get a summary line: every axis's mean robust
    accuracy and min Kendall tau. The paper's derived axes keep their report unchanged."""
    if not ax.get("declared"):
        return []

    def tau(v: float | None) -> str:
        return "n/a" if v is None else f"{v:.2f}"

    parts = [
        f"{a} ({len(g)}) {ax['mean'][a]:.3f} / {tau(ax['axis_kendall_min'].get(a))}" for a, g in ax["groups"].items()
    ]
    return [
        Line(
            "axes", "declared axes, mean axis-robust accuracy / min Kendall tau: " + ", ".join(parts), detail="summary"
        )
    ]


def axes_verdict(scope: str, ax: dict[str, Any], t: Any) -> dict[str, Any]:
    # an axis group with only the reference in it is null and does not enter the verdict (docs/spec/AUDITS.md v2)
    single = {a: v for a, v in ax["axis_kendall_min"].items() if a != "joint" and v is not None}
    if not single:
        names = ", ".join(a for a in ax["axis_kendall_min"] if a != "joint")
        return skipped(
            "axes",
            f"axes[{scope}]",
            f"no usable axis: every single-axis group ({names}) holds only the reference "
            "configuration, or every model scores the same under its configurations (Kendall tau "
            "undefined)",
        )
    axis = min(single, key=lambda a: (single[a], a))
    value = single[axis]
    status = PASS if at_least(value, t.axes_pass) else WARN if at_least(value, t.axes_warn) else FAIL
    detail = ", ".join(f"{a} {v:.2f}" for a, v in single.items())
    lead = (
        f"the {axis} axis is load-bearing: varying it alone reorders the models (min Kendall tau {value:.2f})"
        if status != PASS
        else f"every single axis keeps the order (min Kendall tau {value:.2f}, {axis})"
    )
    msg = f"{lead}; min tau per axis: {detail}; pass >= {t.axes_pass}, warn >= {t.axes_warn}"
    return make_verdict(
        "axes",
        f"axes[{scope}]",
        status,
        value,
        t.axes_pass,
        exact(value - t.axes_pass),
        msg,
        {"axis_kendall_min": ax["axis_kendall_min"], "load_bearing": axis},
    )


CHECK = Axes()
