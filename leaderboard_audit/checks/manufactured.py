"""Manufactured orderings: is an adjacent pair ordered by its jointly robust items?
(paper section 4.2, Table 2, Figure 2)

Section ``pairs``: every adjacent pair of the reference leaderboard with its gap
decomposition and the bootstrap CI of the robust difference. One verdict per pair:
``manufactured[<scope>-<higher>><lower>]`` (docs/audits.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..metrics.pairs import PairStats, pairs_from_counts
from ..metrics.power import log10_p, min_disagreements
from .tables import Cell, Table, ci_cell, pair_label
from .verdicts import FAIL, PASS, WARN, at_most, exact, fmt, make_verdict
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
    "p_value",
    "identified",
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
        for p in pairs_from_counts(
            scope.pair_counts,
            scope.counts,
            scope.shape[1],
            scope.ref,
            scope.order,
            seed=scope.seed,
            scope=scope.name,
            n_boot=scope.n_boot,
            fragile_threshold=scope.thresholds.fragile_share,
            alpha=scope.alpha,
            report=not scope.verdicts_only,
        ):
            out.append(pair_entry(p, names))
        return out

    def judge(self, scope: Scope, section: list[dict[str, Any]]) -> list[dict[str, Any]]:
        K = scope.shape[2]
        return [pair_verdict(scope.name, p, K, scope.thresholds, scope.alpha) for p in section]

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
                Cell(f"{p.get('p_value', 1.0):.2g}", "code"),
                Cell(ci_cell(p["ci"]), "code"),
                _order_cell(p),
                "-" if p.get("items_needed") is None else p["items_needed"],
                f"{p['reversing']}/{K}",
            ]
            for p in s["pairs"]
        ]
        note = (
            "J = items robust (right under every config, or wrong under every config) for both models; "
            "higher/lower only = items of J only that model gets right. A pair is identified when the exact "
            "sign test on those two counts gives p <= alpha (no split of 5 or fewer disagreements can at "
            "0.05); the bootstrap CI describes the robust difference (with no disagreement in one direction "
            "a bound sits at 0 by construction). A manufactured order's cause: harness (fragile share > 0.5: "
            "the gap rests on config-fragile items) or sampling (the gap sits on robust items, too few of "
            "them to tell); items needed = jointly robust items at which the same proportions would reach "
            "p <= alpha; reversing = configs that print the opposite order."
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
                    "sign p",
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
    if p.get("identified") == "lower":
        return Cell("reversed", "strong")
    if p["gap_items"] == 0:
        return "printed tie"
    return "tie" if p["robust_tie"] else "identified"


def _needed(p: dict[str, Any]) -> str:
    n = p.get("items_needed")
    return "" if n is None else f"; about {n} needed at the same proportions"


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
        "p_value": p.p_value,
        "identified": p.identified,
        "robust_tie": p.robust_tie,
        "manufactured": p.manufactured,
        "reversing": p.reversing,
        "cause": p.cause,
        "items_needed": p.items_needed,
    }


def pair_value(p: dict[str, Any]) -> float:
    """v3: ``s * (-log10 p)``, ``s = +1`` when higher_only >= lower_only, else -1."""
    s = 1.0 if p["higher_only"] >= p["lower_only"] else -1.0
    return exact(s * log10_p(p.get("p_value", 1.0))) + 0.0


def pair_verdict(scope: str, p: dict[str, Any], n_configs: int, t: Any, alpha: float = 0.05) -> dict[str, Any]:
    """docs/spec/AUDITS.md v3 (the table in docs/audits.md). The pair is identified by the
    exact sign test on its jointly robust items (``p <= alpha``, unadjusted); value
    ``s * (-log10 p)`` against ``-log10 alpha``. fail: manufactured with configs that
    reverse it, or identified against the printed order; warn: printed tie (gap 0: the
    printed order is the name order and claims nothing), manufactured that no config
    reverses, or identified with fragile share > 0.5; pass otherwise. Margins: see
    ``docs/audits.md`` ("Margins"): ``value - threshold``, except a fragile-share warn
    (``0.5 - fragile_share``) and a printed tie (-1: one item short of a printed gap)."""
    h, lo = p["higher"], p["lower"]
    fs = p["fragile_share"]
    ho, lw, n_j = p["higher_only"], p["lower_only"], p["robust_items"]
    side = p.get("identified")
    value = pair_value(p)
    threshold = exact(log10_p(alpha))
    margin = exact(value - threshold) + 0.0
    one_config = n_configs < 2
    cause = p.get("cause") or ("harness" if fs is not None and not at_most(fs, t.fragile_share) else "sampling")
    n = ho + lw
    if n < min_disagreements(alpha):
        power = f"; no split of {n} disagreement{'s' if n != 1 else ''} can reach p <= {alpha:g}"
    else:
        power = ""
    if p["manufactured"]:
        if cause == "harness":
            what = "manufactured by config-fragile items: the robust items do not order the pair"
        else:
            what = (
                f"too few jointly robust items to tell the pair apart ({n_j} of them{_needed(p)}"
                f"{power}): a sampling problem, not the harness"
            )
    if p["gap_items"] == 0:
        margin = -1.0
        if side is not None:
            above, below = (h, lo) if side == "higher" else (lo, h)
            status, why = WARN, f"printed as a tie; the robust items order it: {above} above {below}"
        else:
            status, why = WARN, "printed tie (reference gap = 0; the printed order is the name order)"
    elif p["manufactured"] and p["reversing"] > 0:
        status, why = FAIL, f"{what}, and {p['reversing']}/{n_configs} configs print the opposite order"
    elif side == "lower":
        status, why = FAIL, "the jointly robust items order the pair the other way"
    elif p["manufactured"]:
        status, why = WARN, what if one_config else f"{what}; no config reverses the pair"
    elif fs is not None and not at_most(fs, t.fragile_share):
        status, why = WARN, f"identified, but {fs:.0%} of the gap is carried by fragile items"
        margin = exact(t.fragile_share - fs) + 0.0
    else:
        status, why = PASS, "the robust items order the pair"
        margin = max(margin, 0.0)
    ci = p["ci"]
    ci_txt = "n/a (no jointly robust items)" if ci is None else ci_cell(ci)
    msg = (
        f"{pair_label(h, lo)}: {why}. gap {fmt(p['gap'])} ({p['gap_items']} item{'' if abs(p['gap_items']) == 1 else 's'}), fragile share "
        f"{fmt(fs)}; robust items {n_j}: higher_only {ho}, lower_only {lw}, sign test p "
        f"{p.get('p_value', 1.0):.3g} (alpha {alpha:g}); robust diff CI {ci_txt}"
        + ("" if one_config else f"; reversing {p['reversing']}/{n_configs}")
    )
    ev = {k: p.get(k) for k in PAIR_KEYS}
    ev["configs"] = n_configs
    return make_verdict("manufactured", f"manufactured[{scope}-{h}>{lo}]", status, value, threshold, margin, msg, ev)


CHECK = Manufactured()
