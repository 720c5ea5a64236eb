"""Ranking: the order the robust items identify, beside the printed one
(docs/spec/AUDITS.md v2, "The identified order" and "ranking"; docs/audits.md).

Section ``identified``: every pair of models compared on its jointly robust items
(exact two-sided sign test, Holm over all pairs at ``--audit-alpha``), the edges,
the tiers of the identified partial order and the robust winner (the paper's
section 6: "an aggregation rule that returns a configuration-robust winner"). One
verdict per scope: ``ranking[<scope>]``, value = share of adjacent pairs of the
printed order that are edges in the printed direction.
"""

from __future__ import annotations

from typing import Any


from ..metrics.identified import identified_order, identified_report
from .tables import Cell, Line, Table
from .verdicts import FAIL, PASS, WARN, exact, make_verdict
from .averaged import CHECK as AVERAGED, contradictions, tiers_text
from .base import Check, Scope

SHOWN = 5  # contradictions / unidentified pairs named in a message


class Ranking(Check):
    name = "ranking"
    position = 50  # in the report: after the checks with a lower position
    title = "Identified order (jointly robust items, Holm-adjusted sign tests)"
    section = "identified"
    gate = "scope"

    def gate_created(
        self, with_v: dict[str, Any], without_v: Any, newcomers: frozenset[str], section: Any = None
    ) -> bool:
        """Also the newcomer's when it already failed: a contradiction of the printed order
        names a newcomer."""
        if super().gate_created(with_v, without_v, newcomers, section):
            return True
        found = (section or {}).get("contradictions", []) if isinstance(section, dict) else []
        return with_v["status"] == FAIL and any({c["printed_above"], c["identified_above"]} & newcomers for c in found)

    def skip_reason(self, scope: Scope) -> str | None:
        if scope.shape[0] < 2:
            return "one model: there is no order to identify"
        return None

    def compute(self, scope: Scope) -> dict[str, Any]:
        names = scope.names
        io = identified_order(scope.C, models=names, alpha=scope.alpha, display=scope.order, parts=scope.parts)
        out = identified_report(io, names)
        ref_counts = scope.counts[:, scope.ref]
        adjacent = []
        for h, lo in zip(scope.order[:-1].tolist(), scope.order[1:].tolist()):
            adjacent.append(
                {
                    "higher": names[h],
                    "lower": names[lo],
                    "printed_tie": bool(ref_counts[h] == ref_counts[lo]),
                    "higher_only": int(io.only[h, lo]),
                    "lower_only": int(io.only[lo, h]),
                    "p_holm": float(io.p_holm[h, lo]),
                    "identified": "higher" if io.above[h, lo] else "lower" if io.above[lo, h] else None,
                }
            )
        out["adjacent"] = adjacent
        out["contradictions"] = contradictions(io, scope)
        # every model's count (the edge list is cut at 10,000): the board's robust-items column
        out["above_count"] = {names[m]: int(c) for m, c in enumerate(io.above.sum(axis=1).tolist())}
        out["pairs_tested"] = int(len(names) * (len(names) - 1) // 2)
        return out

    def judge(self, scope: Scope, section: dict[str, Any]) -> list[dict[str, Any]]:
        averaged = scope.sections.get("averaged")
        if averaged is None and not scope.single_config:  # a reduced set of mix reruns only this check
            averaged = scope.sections["averaged"] = AVERAGED.compute(scope)
        return [ranking_verdict(scope.name, section, averaged)]

    def tables(self, name: str, s: dict[str, Any]) -> list[Table | Line]:
        ident = s.get("identified")
        if not ident or not ident.get("adjacent"):
            return []
        tier_of = {m: j + 1 for j, tier in enumerate(ident["tiers"]) for m in tier}
        board = s.get("leaderboard") or []
        refs = {r["model"]: r for r in board}
        adj = {p["higher"]: p for p in ident["adjacent"]}
        rows = []
        printed = [ident["adjacent"][0]["higher"]] + [p["lower"] for p in ident["adjacent"]]
        for j, m in enumerate(printed):
            r = refs.get(m, {})
            p = adj.get(m)
            nxt = (
                ""
                if p is None
                else Cell(f"identified > ({p['higher_only']} v {p['lower_only']})", "")
                if p["identified"] == "higher"
                else Cell(f"REVERSED: below ({p['higher_only']} v {p['lower_only']})", "strong")
                if p["identified"] == "lower"
                else f"not identified ({p['higher_only']} v {p['lower_only']}, Holm p {p['p_holm']:.2g})"
            )
            rank = f"{r['rank']}{'=' if r.get('tie') else ''}" if r else str(j + 1)
            rows.append([rank, m, r.get("reference"), tier_of.get(m), nxt])
        winner = ident.get("robust_winner")
        note = (
            f"Tiers of the order the jointly robust items identify: every pair of models compared on the "
            f"items both get right, or both get wrong, under every configuration (exact sign test, Holm over "
            f"{ident.get('pairs_tested', 0)} pairs at alpha {ident['alpha']:g}); tier 1 = models no other "
            f"model is identified above. Tiers are a partial order: models in one tier are not separated, "
            f"and printed neighbours with equal scores may sit in different tiers. 'vs next' compares each "
            f"model with the one printed below it (its only-right items v the other's)."
        )
        table = Table(
            "ranking",
            "Printed order and identified tiers",
            ["rank", "model", "reference", "tier", "vs next"],
            rows,
            note=note,
            detail="short",
            widths={1: 28},
        )
        tiers = tiers_text(ident["tiers"])
        line = Line(
            "ranking",
            f"identified order (tiers): {tiers}; robust winner: "
            f"{winner if winner else 'none (' + (ident.get('reason') or '') + ')'}",
        )
        return [table, line]


def ranking_verdict(scope: str, ident: dict[str, Any], averaged: dict[str, Any] | None = None) -> dict[str, Any]:
    """AUDITS v4: judged on the harness-averaged order when the grid has more than one
    configuration (the identified order stays beside it as evidence: on real grids with many
    option permutations it identifies almost nothing, so a verdict on it was a warn on every
    board), on the identified order otherwise (the two coincide). fail: an edge of that order
    (Holm over all pairs) runs against the printed order (a printed tie is not an order);
    warn: no contradiction, but some adjacent pair is a printed tie or not separated in the
    printed direction; pass: every adjacent pair is. value = share of adjacent pairs separated
    in the printed direction (printed ties excluded), threshold 1; margin = value - 1, or
    minus the number of contradicting edges on a fail (they need not be adjacent)."""
    use_avg = bool(averaged) and not averaged.get("coincides") and "contradictions" in averaged
    order = averaged if use_avg else ident
    basis = "the harness-averaged sign test (Holm; the ranking check's own test)" if use_avg else "the robust items"
    adj = order["adjacent"]
    printed_tie = {(p["higher"], p["lower"]): p["printed_tie"] for p in ident["adjacent"]}
    ok = [p for p in adj if p["identified"] == "higher" and not printed_tie.get((p["higher"], p["lower"]))]
    value = exact(len(ok) / len(adj)) if adj else 1.0
    bad = order["contradictions"]
    ties = [p for p in adj if printed_tie.get((p["higher"], p["lower"]))]
    missing = [p for p in adj if p["identified"] != "higher" and not printed_tie.get((p["higher"], p["lower"]))]

    def counts(p: dict[str, Any]) -> str:
        return f"{p['above']} v {p['below']}" if use_avg else f"{p['higher_only']} v {p['lower_only']}"

    margin = exact(value - 1.0) + 0.0
    if bad:
        shown = "; ".join(
            f"{c['printed_above']} is printed above {c['identified_above']} (reference "
            f"{c['reference_items'][0]} v {c['reference_items'][1]} items) but {basis} "
            f"puts {c['identified_above']} above ({c['only'][1]} v {c['only'][0]} items, Holm p {c['p_holm']:.2g})"
            for c in bad[:SHOWN]
        )
        more = f"; and {len(bad) - SHOWN} more" if len(bad) > SHOWN else ""
        status, why = FAIL, f"the printed order contradicts {basis}: {shown}{more}"
        margin = -float(len(bad))
    elif missing or ties:
        parts = []
        if missing:
            shown = ", ".join(f"{p['higher']} > {p['lower']} ({counts(p)})" for p in missing[:SHOWN])
            more = f" and {len(missing) - SHOWN} more" if len(missing) > SHOWN else ""
            parts.append(f"{len(missing)} of {len(adj)} adjacent pairs are not separated by {basis}: {shown}{more}")
        if ties:
            ordered = [p for p in ties if p["identified"] is not None]
            text = f"{len(ties)} of {len(adj)} adjacent pairs are printed ties (equal reference scores)"
            if ordered:
                shown = ", ".join(
                    f"{p['higher'] if p['identified'] == 'higher' else p['lower']} above "
                    f"{p['lower'] if p['identified'] == 'higher' else p['higher']}"
                    for p in ordered[:SHOWN]
                )
                text += f"; {basis} orders {len(ordered)} of them: {shown}"
            parts.append(text)
        status, why = WARN, "; ".join(parts)
    else:
        status, why = PASS, f"{basis} separates every one of the {len(adj)} adjacent pairs"
    winner = ident.get("robust_winner")
    msg = (
        f"{why}. Identified tiers (robust items): {tiers_text(ident['tiers'])}; robust winner: "
        f"{winner if winner else 'none (' + (ident.get('reason') or '') + ')'} "
        f"(Holm sign tests at alpha {ident['alpha']:g})"
    )
    if averaged and not averaged.get("coincides"):
        msg += f". Harness-averaged order: {tiers_text(averaged['tiers'])}; winner: {averaged['winner'] or 'none'}"
    return make_verdict(
        "ranking",
        f"ranking[{scope}]",
        status,
        value,
        1.0,
        margin,
        msg,
        {
            "basis": "averaged" if use_avg else "identified",
            "tier_sizes": [len(t) for t in order["tiers"]],
            "robust_winner": winner,
            "averaged_winner": None if not averaged else averaged.get("winner"),
            "contradictions": len(bad),
            "unidentified_adjacent": len(missing),
            "printed_ties": len(ties),
        },
    )


CHECK = Ranking()

__all__ = ["CHECK", "Ranking", "ranking_verdict"]
