"""Manufactured orderings: is an adjacent pair ordered by its jointly robust items?
(paper section 4.2, Table 2, Figure 2)

Section ``pairs``: every adjacent pair of the reference leaderboard with its gap
decomposition and the bootstrap CI of the robust difference. One verdict per pair:
``manufactured[<scope>-<higher>><lower>]`` (docs/audits.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..metrics.harness_effects import one_sided
from ..metrics.identified import holm_adjust, sign_test_p
from ..metrics.pairs import PairStats, pairs_from_counts
from ..metrics.power import log10_p, min_disagreements
from .tables import Cell, Table, ci_cell, pair_label
from .verdicts import FAIL, PASS, WARN, at_most, exact, fmt, make_verdict
from .base import Check, Scope, num, discordant_items

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
    position = 20  # in the report: after the checks with a lower position
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
        board_tests(scope, out)
        return out

    def judge(self, scope: Scope, section: list[dict[str, Any]]) -> list[dict[str, Any]]:
        K = scope.shape[2]
        return [pair_verdict(scope.name, p, K, scope.thresholds, scope.alpha, graded=scope.graded) for p in section]


def board_tests(scope: Scope, pairs: list[dict[str, Any]]) -> None:
    """v4: the adjacent-pair claims that can fail a run, tested with board-wide error control
    (docs/audits.md, "AUDITS v4"), added to each pair entry in place.

    One family per scope, Holm over all of it: per printed pair with a gap, "the robust items
    order it the other way" (the pair's sign test, in the lower model's favour) and, per
    configuration other than the reference, "this configuration reverses it" (the exact
    McNemar test of the pair under that configuration, in the lower model's favour). Printed
    ties claim no order and are not in the family. Also the pair's unadjusted
    harness-averaged sign test (``averaged_p``), the v4 ``cause`` of every printed gap the robust
    items do not order (``"harness"``, ``"undecidable"`` or ``"sampling"``; None otherwise) and,
    v5, ``manufactured = cause == "harness"``: a pair is called manufactured only when some
    configuration reverses it beyond item sampling."""
    if not pairs:
        return
    K, ref = scope.shape[2], scope.ref
    hs = np.asarray(scope.order[:-1], dtype=np.intp)
    ls = np.asarray(scope.order[1:], dtype=np.intp)
    above, below = scope.averaged_pair_counts(hs, ls)
    avg_p = sign_test_p(above, below)
    live = np.array([p["gap_items"] != 0 for p in pairs])
    against = one_sided(np.array([p["lower_only"] for p in pairs]), np.array([p["higher_only"] for p in pairs]))
    others = [k for k in range(K) if k != ref]
    if others:
        h_k, l_k = scope.config_discordance(hs, ls)
        rev = one_sided(l_k[:, others], h_k[:, others])
    else:
        h_k = l_k = np.zeros((len(pairs), K), dtype=np.int64)
        rev = np.ones((len(pairs), 0))
    family = np.concatenate([against[live], rev[live].ravel()])
    adj = holm_adjust(family) if family.size else family
    n_live = int(live.sum())
    against_b = np.ones(len(pairs))
    rev_b = np.ones(rev.shape)
    against_b[live] = adj[:n_live]
    rev_b[live] = adj[n_live:].reshape(n_live, len(others))
    threshold = min_disagreements(scope.alpha)
    for j, p in enumerate(pairs):
        p["board_tests"] = int(family.size)
        p["p_against_board"] = float(against_b[j])
        sig = np.flatnonzero(rev_b[j] <= scope.alpha + 1e-12) if rev_b.shape[1] else np.array([], dtype=int)
        # the configuration that reverses the pair most: smallest adjusted p, then smallest own p
        best = int(np.lexsort((rev[j], rev_b[j]))[0]) if rev_b.shape[1] else None
        p["reversing_significant"] = int(sig.size)
        p["reversal"] = (
            None
            if best is None
            else {
                "config": scope.keys[others[best]],
                "lower_only": int(l_k[j, others[best]]),
                "higher_only": int(h_k[j, others[best]]),
                "p": float(rev[j, best]),
                "p_board": float(rev_b[j, best]),
            }
        )
        p["averaged_above"], p["averaged_below"] = int(above[j]), int(below[j])
        p["averaged_p"] = float(avg_p[j])
        if p["gap_items"] != 0 and p["robust_tie"]:  # the robust items do not order the printed gap: why not
            if sig.size:
                p["cause"] = "harness"
            elif p["higher_only"] + p["lower_only"] < threshold:
                p["cause"] = "undecidable"
            else:
                p["cause"] = "sampling"
        else:
            p["cause"] = None
        # v5 (UX review M1): manufactured = some configuration reverses the pair beyond item sampling;
        # a pair the robust items cannot order for want of items keeps its cause and is not called that
        p["manufactured"] = p["cause"] == "harness"

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
            "a bound sits at 0 by construction). A manufactured order's cause (v4): harness (some configuration "
            "reverses the pair beyond item sampling: its own exact McNemar test, Holm over the board's adjacent-pair "
            "claims), not decidable on robust items (too few disagreements for any split to reach alpha), or "
            "sampling (the robust items are too few to tell); items needed = jointly robust items at which the same "
            "proportions would reach "
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
    if p["manufactured"] or p.get("cause"):
        cause = p.get("cause") or "sampling"
        if cause == "harness":
            return Cell("manufactured by the harness", "strong")
        if cause == "undecidable":
            return "not decidable on robust items"
        return "tie (too few robust items)"
    if p.get("identified") == "lower":
        return Cell("reversed", "strong")
    if p["gap_items"] == 0:
        return "printed tie"
    return "tie" if p["robust_tie"] else "identified"


#: the verdict evidence's name for a pair key where the key misnames it: ``fragile_share``
#: (the paper's, kept in the ``pairs`` section) is the fragile items' part of the gap divided
#: by the gap, 3.0 when the robust items favour the lower model by 2 items of a 1-item gap
EVIDENCE_NAMES = {"fragile_share": "fragile_to_gap"}


def fragile_text(fs: float | None) -> str:
    """The fragile part of the gap in words: a share within [0, 1], a multiple of the gap outside
    (UX review 2026-12-04 #23 and 2026-12-07 M9: "fragile share 3.000" is no share)."""
    if fs is None or 0 <= fs <= 1:
        return f"fragile share {fmt(fs)}"
    if fs > 1:
        return f"the fragile items carry {fs:.1f}x the gap (the robust items favour the lower model)"
    return (
        f"the fragile items carry {fs:.1f}x the gap (they favour the lower model; the robust items favour the "
        "higher one by more than the gap)"
    )


def _needed(p: dict[str, Any]) -> str:
    n = p.get("items_needed")
    return "" if n is None else f"; about {n} needed at the same proportions"


def ci_method(n: int, higher_only: int, lower_only: int, ci: Any) -> str:
    """How the pair's ``ci`` was made, or why it is null (issue 54: never a zero-width interval)."""
    if ci is None or not n:
        return "none: no jointly robust items (n = 0), so no interval"
    if higher_only + lower_only == 0 or higher_only == n or lower_only == n:
        return (
            "Wilson score (Newcombe square-and-add): every item resample gives the same difference, "
            "so a bootstrap percentile would have zero width"
        )
    return "bootstrap percentile (item resamples)"


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
        "ci_method": ci_method(p.robust_items, p.higher_only, p.lower_only, p.ci),
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


def pair_verdict(
    scope: str, p: dict[str, Any], n_configs: int, t: Any, alpha: float = 0.05, *, graded: bool = False
) -> dict[str, Any]:
    """AUDITS v4 (docs/audits.md). The pair's own sign test on its jointly robust items stays
    unadjusted (``identified``, value ``s * (-log10 p)`` against ``-log10 alpha``); what can
    fail a run is judged in the board-wide family (``board_tests``): fail when the robust
    items order the pair the other way (``p_against_board <= alpha``) or when a manufactured
    pair is reversed by some configuration beyond item sampling (``reversing_significant``);
    warn: printed tie, manufactured otherwise (not decidable on robust items, or too few of
    them, with the harness-averaged test beside it), identified against the printed order only
    before the board's correction, or identified with fragile share > 0.5; pass otherwise. A
    hand-built pair without the board tests is judged by v3 (``reversing > 0`` fails).
    Margins: ``value - threshold``; on a board-wide fail ``log10(p_board) - log10(alpha)``; a
    fragile-share warn ``0.5 - fragile_share``; a printed tie -1."""
    import math

    h, lo = p["higher"], p["lower"]
    fs = p["fragile_share"]
    ho, lw, n_j = p["higher_only"], p["lower_only"], p["robust_items"]
    side = p.get("identified")
    value = pair_value(p)
    threshold = exact(log10_p(alpha))
    margin = exact(value - threshold) + 0.0
    one_config = n_configs < 2
    board = "p_against_board" in p
    n = ho + lw
    undecidable = n < min_disagreements(alpha)
    if board:
        cause = p.get("cause")
        rev_sig = int(p.get("reversing_significant") or 0)
        against_p = p["p_against_board"]
        # v5: ``manufactured`` is the harness cause alone; every printed gap the robust items
        # do not order carries a cause
        unordered = bool(p["manufactured"]) or (cause is not None and side is None)
    else:
        unordered = bool(p["manufactured"])
        cause = p.get("cause") or ("harness" if fs is not None and not at_most(fs, t.fragile_share) else "sampling")
        rev_sig = p["reversing"]
        against_p = p.get("p_value", 1.0)

    def decades(x: float) -> float:
        return min(exact(math.log10(max(x, 1e-300)) - math.log10(alpha)), -1e-12)

    rev = p.get("reversal") or {}
    avg = p.get("averaged_p")
    avg_txt = (
        ""
        if avg is None or one_config
        else f"; harness-averaged sign test {p.get('averaged_above')} v {p.get('averaged_below')} items, p {avg:.2g}"
        + (" (separates the pair)" if at_most(avg, alpha) else " (does not separate it either)")
    )
    if p["gap_items"] == 0:
        margin = -1.0
        if side is not None:
            above, below = (h, lo) if side == "higher" else (lo, h)
            status, why = WARN, f"printed as a tie; the robust items order it: {above} above {below}"
        else:
            status, why = WARN, "printed tie (reference gap = 0; the printed order is the name order)"
    elif side == "lower" and at_most(against_p, alpha):
        status = FAIL
        why = "the jointly robust items order the pair the other way" + (
            f" (board-wide Holm p {against_p:.2g} over {p.get('board_tests')} tests)" if board else ""
        )
        if board:
            margin = decades(against_p)
    elif unordered and rev_sig > 0 and (cause == "harness" or not board):
        status = FAIL
        if board:
            why = (
                f"manufactured by the harness: the robust items do not order the pair, and {rev_sig}/{n_configs} "
                f"{'configs reverse' if rev_sig != 1 else 'config reverses'} it beyond item sampling ({rev.get('config')}: "
                f"{lo} {rev.get('lower_only')} v {rev.get('higher_only')} items {discordant_items(graded)}, board-wide "
                f"Holm p {rev.get('p_board', 1.0):.2g}); {p['reversing']}/{n_configs} print the opposite order"
            )
            margin = decades(rev.get("p_board", 1.0))
        elif cause == "harness":
            why = (
                f"manufactured by config-fragile items: the robust items do not order the pair, and "
                f"{p['reversing']}/{n_configs} configs print the opposite order"
            )
        else:
            why = (
                f"too few jointly robust items to tell the pair apart ({n_j} of them{_needed(p)}), and "
                f"{p['reversing']}/{n_configs} configs print the opposite order"
            )
    elif side == "lower":
        status, why = (
            WARN,
            (
                f"the robust items lean the other way (p {p.get('p_value', 1.0):.2g} unadjusted), but not beyond the "
                f"board's multiplicity (board-wide Holm p {against_p:.2g})"
            ),
        )
    elif unordered:
        if undecidable:
            what = (
                f"not decidable on robust items: {n} disagreement{'s' if n != 1 else ''} among {n_j} jointly "
                f"robust items, and no split of {n} can reach p <= {alpha:g}{avg_txt}"
            )
        else:
            what = (
                f"too few jointly robust items to tell the pair apart ({n_j} of them{_needed(p)}){avg_txt}: "
                f"a sampling problem, not the harness"
            )
        if one_config:
            status, why = WARN, what
        elif p["reversing"] == 0:
            status, why = WARN, f"{what}; no configuration reverses the pair"
        else:
            status, why = (
                WARN,
                (f"{what}; {p['reversing']}/{n_configs} configs print the opposite order, none beyond item sampling"),
            )
    elif fs is not None and not at_most(fs, t.fragile_share):
        status, why = WARN, f"identified, but {fs:.0%} of the gap is carried by fragile items"
        margin = exact(t.fragile_share - fs) + 0.0
    else:
        status, why = PASS, "the robust items order the pair"
        margin = max(margin, 0.0)
    ci = p["ci"]
    ci_txt = "n/a (no jointly robust items)" if ci is None else ci_cell(ci)
    msg = (
        f"{pair_label(h, lo)}: {why}. gap {fmt(p['gap'])} ({p['gap_items']} item{'' if abs(p['gap_items']) == 1 else 's'}), "
        f"{fragile_text(fs)}; robust items {n_j}: higher_only {ho}, lower_only {lw}, sign test p "
        f"{p.get('p_value', 1.0):.3g} (alpha {alpha:g}, unadjusted); robust diff CI {ci_txt}"
        + ("" if one_config else f"; reversing {p['reversing']}/{n_configs}")
    )
    # the paper's fragile_share is (gap - robust part) / gap: a share only within [0, 1] (UX review M9)
    ev = {EVIDENCE_NAMES.get(k, k): p.get(k) for k in PAIR_KEYS}
    ev["configs"] = n_configs
    if board:
        ev.update(
            p_against_board=against_p,
            reversing_significant=rev_sig,
            reversal=p.get("reversal"),
            averaged_p=avg,
            board_tests=p.get("board_tests"),
        )
    return make_verdict("manufactured", f"manufactured[{scope}-{h}>{lo}]", status, value, threshold, margin, msg, ev)


CHECK = Manufactured()
