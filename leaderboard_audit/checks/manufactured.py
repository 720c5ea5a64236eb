"""Manufactured orderings: is an adjacent pair ordered by its jointly robust items?
(paper section 4.2, Table 2, Figure 2)

Section ``pairs``: every adjacent pair of the reference leaderboard with its gap
decomposition and the bootstrap CI of the robust difference. One verdict per pair:
``manufactured[<scope>-<higher>><lower>]`` (docs/audits.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..metrics.pairs import PairStats, adjacent_pairs
from ..reports.tables import Cell, Table, ci_cell, pair_label
from ..verdicts import FAIL, PASS, WARN, at_least, at_most, fmt, make_verdict
from .base import Check, Scope, num

PAIR_KEYS = (
    "gap",
    "gap_items",
    "fragile_share",
    "robust_items",
    "higher_only",
    "lower_only",
    "robust_diff",
    "ci",
    "reversing",
    "cause",
    "items_needed",
)


class Manufactured(Check):
    name = "manufactured"
    title = "Adjacent pairs (Table 2, Figure 2)"
    section = "pairs"
    thresholds = {"fragile_share": 0.5}
    gate = "subject"  # the newcomer's two neighbour pairs

    def cases(self, scope: Scope) -> list[tuple[str, str]]:
        return [(f"manufactured[{scope.name}-{h}>{lo}]", f"{scope.name}-{h}>{lo}") for h, lo in scope.adjacent]

    def subjects(self, scope: Scope) -> list[tuple[str, ...]]:
        return list(scope.adjacent)

    def compute(self, scope: Scope) -> list[dict[str, Any]]:
        names = scope.names
        out = []
        for p in adjacent_pairs(
            scope.C,
            scope.ref,
            scope.order,
            seed=scope.seed,
            scope=scope.name,
            models=names,
            n_boot=scope.n_boot,
            fragile_threshold=scope.thresholds.fragile_share,
        ):
            out.append(pair_entry(p, names))
        return out

    def judge(self, scope: Scope, section: list[dict[str, Any]]) -> list[dict[str, Any]]:
        K = scope.shape[2]
        return [pair_verdict(scope.name, p, K, scope.thresholds) for p in section]

    def tables(self, name: str, s: dict[str, Any]) -> list[Table]:
        K = s["n_configs"]
        rows = [
            [
                pair_label(p["higher"], p["lower"]),
                p["gap"],
                p["gap_items"],
                p["fragile_share"],
                p["robust_items"],
                p["higher_only"],
                p["lower_only"],
                Cell(ci_cell(p["ci"]), "code"),
                _order_cell(p),
                "-" if p.get("items_needed") is None else p["items_needed"],
                f"{p['reversing']}/{K}",
            ]
            for p in s["pairs"]
        ]
        note = (
            "J = items robust (right under every config, or wrong under every config) for both models; "
            "higher/lower only = items of J only that model gets right. With no disagreement in one "
            "direction a CI bound sits at 0 by construction, so read them beside the CI. A manufactured "
            "order's cause: harness (fragile share > 0.5: the gap rests on config-fragile items) or "
            "sampling (the gap sits on robust items, too few of them to tell); items needed = jointly "
            "robust items at which a 95% interval around the same difference would exclude 0; "
            "reversing = configs that print the opposite order."
        )
        return [
            Table(
                "pairs",
                "Adjacent pairs (Table 2, Figure 2)",
                [
                    "pair",
                    "gap",
                    "gap items",
                    "fragile share",
                    "J",
                    "higher only",
                    "lower only",
                    "robust diff 95% CI",
                    "order",
                    "items needed",
                    "reversing",
                ],
                rows,
                note=note,
                detail="short",
                widths={0: 28},
                digits={3: 2},
            )
        ]


def _order_cell(p: dict[str, Any]) -> Any:
    if p["manufactured"]:
        return Cell(f"manufactured ({p.get('cause') or 'harness'})", "strong")
    if p["robust_tie"]:
        return "tie"
    return Cell("reversed", "strong") if p["ci"] is not None and p["ci"][1] < 0 else "identified"


def _needed(p: dict[str, Any]) -> str:
    n = p.get("items_needed")
    return "" if n is None else f"; about {n} needed"


def pair_entry(p: PairStats, names: Sequence[str]) -> dict[str, Any]:
    """The report's pair entry for one ``metrics.pairs.PairStats`` (JSON-ready)."""
    return {
        "higher": names[p.higher],
        "lower": names[p.lower],
        "gap": p.gap,
        "gap_items": p.gap_items,
        "fragile_share": num(p.fragile_share),
        "robust_items": p.robust_items,
        "higher_only": p.higher_only,
        "lower_only": p.lower_only,
        "robust_diff": num(p.robust_diff),
        "ci": None if p.ci is None else [p.ci[0], p.ci[1]],
        "robust_tie": p.robust_tie,
        "manufactured": p.manufactured,
        "reversing": p.reversing,
        "cause": p.cause,
        "items_needed": p.items_needed,
    }


def pair_verdict(scope: str, p: dict[str, Any], n_configs: int, t: Any) -> dict[str, Any]:
    """The table in docs/audits.md; messages follow the pair's ``cause`` (docs/spec/AUDITS.md v2):
    "harness" = manufactured by fragile items, "sampling" = too few robust items to tell."""
    h, lo = p["higher"], p["lower"]
    ci = p["ci"]
    value = 0.0 if ci is None else ci[0]
    fs = p["fragile_share"]
    identified = not p["robust_tie"]
    cause = p.get("cause") or ("harness" if fs is not None and not at_most(fs, t.fragile_share) else "sampling")
    if p["manufactured"]:
        if cause == "harness":
            what = "manufactured by config-fragile items: the robust items do not order the pair"
        else:
            what = (
                f"too few jointly robust items to tell the pair apart ({p['robust_items']} of them"
                f"{_needed(p)}): a sampling problem, not the harness"
            )
    if p["manufactured"] and p["reversing"] > 0:
        status, why = FAIL, f"{what}, and {p['reversing']}/{n_configs} configs print the opposite order"
    elif ci is not None and not at_least(ci[1], 0.0):
        status, why = FAIL, "the jointly robust items order the pair the other way"
    elif p["gap_items"] == 0:
        status, why = WARN, "an order printed for a tie (reference gap = 0)"
    elif p["manufactured"]:
        status, why = WARN, f"{what}; no config reverses the pair"
    elif identified and fs is not None and not at_most(fs, t.fragile_share):
        status, why = WARN, f"identified, but {fs:.0%} of the gap is carried by fragile items"
    else:
        status, why = PASS, "the robust items order the pair"
    caveat = ""
    if ci is not None and (p["higher_only"] == 0 or p["lower_only"] == 0) and 0.0 in (ci[0], ci[1]):
        caveat = (
            " (no disagreement in one direction: a CI bound sits at 0 by construction)"
            if p["higher_only"] + p["lower_only"] > 0
            else " (the two agree on every jointly robust item: the CI is [0, 0] by construction)"
        )
    ci_txt = "n/a (no jointly robust items)" if ci is None else ci_cell(ci)
    msg = (
        f"{pair_label(h, lo)}: {why}. gap {fmt(p['gap'])} ({p['gap_items']} items), fragile share "
        f"{fmt(fs)}; robust items {p['robust_items']}: higher_only {p['higher_only']}, lower_only "
        f"{p['lower_only']}, robust diff CI {ci_txt}{caveat}; reversing {p['reversing']}/{n_configs}"
    )
    ev = {k: p.get(k) for k in PAIR_KEYS}
    ev["configs"] = n_configs
    return make_verdict("manufactured", f"manufactured[{scope}-{h}>{lo}]", status, value, 0.0, value, msg, ev)


CHECK = Manufactured()
