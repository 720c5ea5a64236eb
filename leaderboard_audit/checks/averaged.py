"""The harness-averaged order (docs/spec/AUDITS.md v3, "The harness-averaged order").

Section ``averaged`` (no verdict of its own: since AUDITS v4 the ``ranking`` verdict is
judged on this order when the grid has more than one configuration, and its ``board`` is
the published leaderboard's ranking): every pair of models compared item
by item on its accuracy averaged over the grid, exact sign test, Holm over all pairs.
With one configuration it coincides with the identified order (``coincides``)."""

from __future__ import annotations

from typing import Any


from ..metrics.averaged import METHOD, averaged_order, configs_won
from ..metrics.identified import identified_report
from .tables import Line
from .base import Check, Scope, num


class Averaged(Check):
    name = "averaged"
    position = 40  # in the report: after the checks with a lower position
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
        parts = None if scope.graded else scope.parts  # graded: the outcomes' item means (scope.S)
        ao = averaged_order(scope.S, models=names, alpha=scope.alpha, display=scope.order, parts=parts)
        out = identified_report(ao, names, method=METHOD)
        out["winner"] = out.pop("robust_winner")
        out["coincides"] = bool(scope.single_config)
        hi_lo = scope.order[:-1], scope.order[1:]
        if not scope.verdicts_only:
            won_down, won_up = configs_won(scope.S, hi_lo).tolist(), configs_won(scope.S, hi_lo[::-1]).tolist()
        adjacent = []
        for j, (h, lo) in enumerate(zip(hi_lo[0].tolist(), hi_lo[1].tolist())):
            entry = {
                "higher": names[h],
                "lower": names[lo],
                "above": int(ao.only[h, lo]),
                "below": int(ao.only[lo, h]),
                "p_holm": float(ao.p_holm[h, lo]),
                "identified": "higher" if ao.above[h, lo] else "lower" if ao.above[lo, h] else None,
            }
            if not scope.verdicts_only:
                entry["configs_won"] = [won_down[j], won_up[j]]
            adjacent.append(entry)
        out["adjacent"] = adjacent
        out["pairs_tested"] = int(len(names) * (len(names) - 1) // 2)
        out["contradictions"] = contradictions(ao, scope)
        if not scope.verdicts_only:
            out["board"] = board_section(ao, scope)
        return out

    def tables(self, name: str, s: dict[str, Any]) -> list[Line]:
        a = s.get("averaged")
        if a and "estimated_from" in a:  # an incomplete grid's board (checks/incomplete_sections.py)
            return [Line("averaged", estimated_line(a))]
        if not a or a.get("coincides"):
            return []
        return [Line("averaged", averaged_line(a))]


def board_section(ao: Any, scope: Scope) -> dict[str, Any]:
    """AUDITS v5, the published board (docs/audits.md "The board"): every model's
    harness-averaged accuracy with its 95% CI over items (Wilson-type, marginal), its rank
    interval ``[best, worst]`` with simultaneous 95% coverage (``metrics/rank_intervals.py``:
    every pairwise difference of the scores at once), and its printed rank, the best rank of
    its interval raised so no lower score is printed above a higher one; in published order
    (rank, then score, then name). Per row ``models_above`` = the models separated above it
    (``best = 1 + models_above``) and ``models_below`` = the models it is separated above.
    ``ao`` (the sign tests' order) is not read: the board compares the scores themselves."""
    from ..metrics.board import CI_KIND, RULE, mean_ci
    from ..metrics.per_model import right_counts
    from ..metrics.rank_intervals import board_intervals, item_scores, point_ranks

    names = scope.names
    M = len(names)
    a = item_scores(scope.S)
    theta = a.mean(axis=1)
    best, worst, above = board_intervals(a, scope.alpha, scope.seed, key=f"rank-intervals/{scope.name}")
    rank = point_ranks(theta, best)
    mean, ci = mean_ci(right_counts(scope.S), scope.shape[2])
    order = sorted(range(M), key=lambda m: (int(rank[m]), -float(mean[m]), names[m]))
    printed = above(scope.order[:-1], scope.order[1:])
    return {
        "rule": RULE,
        "alpha": scope.alpha,
        "ci_kind": CI_KIND,
        "edges_total": int((best - 1).sum()),
        # each adjacent pair of the printed (reference) order: does the board separate it, in the
        # printed direction? (what "what to do next" says of a pair)
        "printed_pairs_separated": [bool(x) for x in printed],
        "rows": [
            {
                "model": names[m],
                "rank": int(rank[m]),
                "rank_interval": [int(best[m]), int(worst[m])],
                "models_above": int(best[m] - 1),
                "models_below": int(M - worst[m]),
                "averaged": float(mean[m]),
                "ci": [float(ci[m, 0]), float(ci[m, 1])],
            }
            for m in order
        ],
    }


def contradictions(io: Any, scope: Scope) -> list[dict[str, Any]]:
    """Edges of an order (Holm over all pairs) against the printed order: x above y although
    y's reference score is higher (a printed tie is not an order: never a contradiction)."""
    names = scope.names
    ref_counts = scope.counts[:, scope.ref]
    e = io.edges
    bad = e[ref_counts[e[:, 1]] > ref_counts[e[:, 0]]] if e.size else e
    against = sorted(bad.tolist(), key=lambda x: (-(ref_counts[x[1]] - ref_counts[x[0]]), names[x[1]], names[x[0]]))
    return [
        {
            "printed_above": names[y],
            "identified_above": names[x],
            "reference_items": [num(ref_counts[y]), num(ref_counts[x])],
            "only": [int(io.only[y, x]), int(io.only[x, y])],
            "p_holm": float(io.p_holm[x, y]),
        }
        for x, y in against
    ]


def tiers_text(tiers: list[list[str]], limit: int = 4, names: int = 3) -> str:
    """Tiers as ``{a, b} > {c, ...+5}``: at most ``limit`` tiers and ``names`` names each
    (the full tiers live in the report's section)."""
    parts = []
    for tier in tiers[:limit]:
        shown = ", ".join(tier[:names]) + (f", ... +{len(tier) - names}" if len(tier) > names else "")
        parts.append("{" + shown + "}")
    more = f" > ... ({len(tiers) - limit} more tiers)" if len(tiers) > limit else ""
    return " > ".join(parts) + more


def estimated_line(a: dict[str, Any]) -> str:
    rows = a["board"]["rows"]
    top = [r["model"] for r in rows if r["rank"] == 1]
    basis = a["estimated_from"]
    return (
        f"harness-averaged board on the design's random sample ({basis['items']:,} of {basis['of']:,} items, every "
        f"cell observed; scores estimated): {len({r['rank'] for r in rows})} ranks for {len(rows)} models; rank 1: "
        + ", ".join(top[:3])
        + (f", ... +{len(top) - 3}" if len(top) > 3 else "")
    )


def averaged_line(a: dict[str, Any]) -> str:
    board = a.get("board") or {}
    rows = board.get("rows") or []
    if any("rank_interval" in r for r in rows):  # AUDITS v5: the board answers "who is first"
        top = [r["model"] for r in rows if r["rank"] == 1]
        shown = ", ".join(top[:3]) + (f", ... +{len(top) - 3}" if len(top) > 3 else "")
        return (
            f"harness-averaged board (simultaneous 95% rank intervals): {len({r['rank'] for r in rows})} ranks for "
            f"{len(rows)} models; rank 1{' shared by' if len(top) > 1 else ''}: {shown}. The ranking check's own "
            f"test (exact sign tests, Holm) orders {a['edges_total']} of {a['pairs_tested']} pairs"
        )
    sizes = [len(t) for t in a["tiers"]]
    return (
        f"harness-averaged order (tiers): {tiers_text(a['tiers'])} ({len(sizes)} tier"
        f"{'s' if len(sizes) != 1 else ''}, sizes {', '.join(map(str, sizes[:8]))}"
        f"{', ...' if len(sizes) > 8 else ''}; {a['edges_total']} of {a['pairs_tested']} pairs ordered); "
        f"winner: {a['winner'] or 'none (' + (a.get('reason') or '') + ')'}"
    )


CHECK = Averaged()

__all__ = ["Averaged", "CHECK", "averaged_line", "estimated_line", "tiers_text"]
