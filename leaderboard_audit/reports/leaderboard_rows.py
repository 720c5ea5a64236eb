"""The publishable leaderboard's rows (``rows_of``), without the renderers: the HTML report's
"What is known per model" uses them too (``reports.html`` imports this, not ``reports.leaderboard``,
which imports ``reports.html`` for its own page)."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any


def wilson(right: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    if n <= 0:
        return (0.0, 1.0)
    p = right / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, centre - half), min(1.0, centre + half))


def rows_of(s: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """One dict per model, in published order, and notes on how to read them."""
    board = s.get("leaderboard") or []
    ident = s.get("identified") or {}
    tiers = ident.get("tiers") or [[r["model"] for r in board]]
    tier_of = {m: j + 1 for j, t in enumerate(tiers) for m in t}
    above = Counter(e[0] for e in ident.get("edges") or [])
    won = Counter(w for c in (s.get("champions") or {}).get("per_config") or [] for w in c.get("winners", []))
    one = s.get("n_configs", 1) <= 1
    n = s.get("n_items", 0)
    truncated = bool(ident.get("edges_truncated"))
    ordered = sorted(board, key=lambda r: (tier_of.get(r["model"], len(tiers) + 1), -r["reference"], r["model"]))
    sizes = Counter(tier_of.get(r["model"]) for r in board)
    out = []
    before = 0
    last_tier = None
    for r in ordered:
        t = tier_of.get(r["model"], len(tiers) + 1)
        if t != last_tier:
            rank_start, last_tier = before + 1, t
        before += 1
        lo, hi = wilson(int(r.get("reference_items", round(r["reference"] * n))), n)
        out.append(
            {
                "rank": f"{rank_start}=" if sizes[t] > 1 else str(rank_start),
                "model": r["model"],
                "score": f"{r['reference']:.3f}",
                "95% CI": f"{lo:.3f}-{hi:.3f}",
                "band (min-max)": "-" if one else f"{r['min']:.3f}-{r['max']:.3f}",
                "robust": "-" if one else f"{r['robust']:.3f}",
                "tier": str(t),
                "identified above": _above(above.get(r["model"], 0), truncated),
                "configs won": str(won.get(r["model"], 0)),
            }
        )
    notes = [
        "Ranked by identified tier (the exact sign test on the items both models answer alike under every "
        "configuration, Holm-adjusted), then by reference score; models in one tier are not separated "
        "(rank shown with =). score = reference-configuration accuracy, 95% CI over items (Wilson)."
    ]
    if one:
        notes.append("One configuration: the harness was not varied, so there is no band and no robust accuracy.")
    if ident.get("edges_truncated"):
        notes.append(
            f"'identified above' counts the first {len(ident.get('edges') or []):,} of "
            f"{ident.get('edges_total', 0):,} identified pairs (the report keeps the first by name): ≥N is a "
            "lower bound, n/a a model none of them names; the JSON report's edges are the source."
        )
    return out, notes


def _above(n: int, truncated: bool) -> str:
    if not truncated:
        return str(n)
    return f"≥{n}" if n else "n/a"
