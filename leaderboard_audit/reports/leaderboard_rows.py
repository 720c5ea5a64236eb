"""The publishable leaderboard's rows (``rows_of``), without the renderers: the HTML report's
"What is known per model" uses them too (``reports.html`` imports this, not ``reports.leaderboard``,
which imports ``reports.html`` for its own page)."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from ..checks.tables import bounds_text


def wilson(right: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    if n <= 0:
        return (0.0, 1.0)
    p = right / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, centre - half), min(1.0, centre + half))


#: the two count columns (AUDITS v5): each counts the models *below* the row, by the board's
#: rule and by the paper's robust-item comparison; the rank counts those above it
BELOW = "models below"
BELOW_ROBUST = "models below (robust items)"
MARGINAL = (
    "marginal: one interval per model, not simultaneous over the board, so two disjoint intervals do not "
    "separate a pair; the rank interval does"
)
RANKS = "rank interval"


def interval_cell(r: dict[str, Any]) -> str:
    """A board row's simultaneous rank interval as ``best-worst`` (``-`` on a pre-v5 report)."""
    got = r.get("rank_interval")
    if not got:
        return "-"
    return str(got[0]) if got[0] == got[1] else f"{got[0]}-{got[1]}"


def rule_note(v5: dict[str, Any], K: int) -> str:
    """How the v5 board ranks (AUDITS v5, docs/audits.md "The board"), in one paragraph."""
    M = len(v5["rows"])
    what = (
        f"Ranked by the score, the accuracy averaged over the {K} configurations"
        if K > 1
        else "One configuration: ranked by the score, the accuracy (the harness was not varied, so there is no band "
        "and no robust accuracy)"
    )
    return (
        f"{what}. rank interval = the ranks each model can hold, with 95% simultaneous "
        f"coverage for all {M:,} models at once: every pairwise difference of the scores is bounded at once (item "
        f"resampling, studentized, alpha {v5['alpha']:g}), and a model is separated above another only when its score "
        f"is higher beyond that bound. rank = the best rank of its interval (1 + the models separated above it), "
        f"raised where needed so that a lower score is never printed above a higher one; '=' marks a shared rank. "
        f"95% CI = the score's own interval over items (Wilson-type, {MARGINAL}); reference = the reference "
        f"configuration's accuracy (Wilson CI)."
    )


def board_row(
    r: dict[str, Any],
    ranks: Counter[int],
    reference: str,
    band: str,
    robust: str,
    below: str,
    below_robust: str,
    won: str,
) -> dict[str, str]:
    """One published row from a board row ``r`` (its rank, interval, score and CI) and the columns
    the caller knows (complete and incomplete grids fill them differently)."""
    return {
        "rank": f"{r['rank']}=" if ranks[r["rank"]] > 1 else str(r["rank"]),
        RANKS: interval_cell(r),
        "model": r["model"],
        "score": f"{r['averaged']:.3f}",
        "95% CI": f"{r['ci'][0]:.3f}-{r['ci'][1]:.3f}",
        "reference": reference,
        "band (min-max)": band,
        "robust": robust,
        BELOW: below,
        BELOW_ROBUST: below_robust,
        "configs won": won,
    }


def rows_of(s: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """One dict per model, in published order, and notes on how to read them (AUDITS v5,
    docs/audits.md "The board"): ranked by the harness-averaged score with simultaneous rank
    intervals (a report written before v5: by its BH rule), the paper's robust-item comparison
    beside it. A report without a board (before v4) falls back to the identified tiers."""
    board = s.get("leaderboard") or []
    if any("bounds" in r for r in board):
        return _rows_incomplete(s)
    by_model = {r["model"]: r for r in board}
    avg = s.get("averaged") or {}
    ident = s.get("identified") or {}
    v4 = avg.get("board")
    one = s.get("n_configs", 1) <= 1
    n = s.get("n_items", 0)
    robust_below = ident.get("above_count")  # per model: the models it is identified above
    won = Counter(w for c in (s.get("champions") or {}).get("per_config") or [] for w in c.get("winners", []))
    if one and board:  # one configuration: its winners are the models with the top reference score
        top = max(r["reference_items"] if "reference_items" in r else r["reference"] for r in board)
        won = Counter(
            r["model"] for r in board if (r["reference_items"] if "reference_items" in r else r["reference"]) == top
        )
    if not v4:
        return _rows_by_tier(s)
    ranks = Counter(r["rank"] for r in v4["rows"])
    out = []
    for r in v4["rows"]:
        m = r["model"]
        b = by_model.get(m, {})
        lo, hi = wilson(int(b.get("reference_items", round(b.get("reference", 0.0) * n))), n)
        out.append(
            board_row(
                r,
                ranks,
                f"{b['reference']:.3f} ({lo:.3f}-{hi:.3f})" if b else "-",
                "-" if one or not b else f"{b['min']:.3f}-{b['max']:.3f}",
                "-" if one or not b else f"{b['robust']:.3f}",
                str(r["models_below"] if "models_below" in r else r["identified_above"]),  # pre-v5 reports
                "-" if one or robust_below is None else str(robust_below.get(m, 0)),
                str(won.get(m, 0)),
            )
        )
    K = s.get("n_configs", 1)
    if v4.get("rank_interval") is not None or any("rank_interval" in r for r in v4["rows"]):
        notes = [rule_note(v4, K)]
    else:  # a report written before AUDITS v5: its BH rule
        M = len(v4["rows"])
        notes = [
            f"Ranked by the harness-averaged comparison (exact sign tests, Benjamini-Hochberg over all "
            f"{M * (M - 1) // 2:,} pairs at alpha {v4['alpha']:g}); rank = 1 + the number of models identified above "
            f"it. score = accuracy averaged over the configurations; 95% CI over items."
        ]
    notes += [
        f"{BELOW} = how many models this one is separated above (its best rank counts those separated above it).",
    ]
    if not one:
        total = ident.get("edges_total")
        notes.append(
            f"{BELOW_ROBUST} = how many models the paper's comparison (items both models answer alike under "
            "every configuration, Holm over all pairs) identifies this one above"
            + (
                f": here it identifies no pair at all ({total} edges), so it cannot rank this board; with "
                f"many option permutations almost no item is answered alike under every configuration"
                if total == 0
                else f" ({total:,} pairs identified in all)."
            )
        )
    return out, notes


def _rows_incomplete(s: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """The board of an incomplete grid (checks/incomplete_sections.py): estimated from the
    design's random item sample when that sample is large enough, else the printed (reference)
    order with each model's exact ranges; nothing reads a missing cell as a wrong answer."""
    board = s.get("leaderboard") or []
    inc = s.get("incomplete") or {}
    n = s.get("n_items", 0)
    by_model = {r["model"]: r for r in board}
    est = (inc.get("estimates") or {}).get("robust_accuracy") or {}
    avg = s.get("averaged") or {}
    v4 = avg.get("board")
    cells, missing = inc.get("cells", 0), inc.get("missing", 0)
    observed = cells - missing
    head = (
        f"Incomplete grid: {observed:,} of {cells:,} cells observed ({observed / cells:.1%}); a missing cell is "
        "never read as a wrong answer. rank and reference are exact (the reference configuration is observed on "
        "every item); band and robust are the ranges their values take over all completions of the missing cells"
        if cells
        else "Incomplete grid."
    )

    def robust_cell(m: str, b: dict[str, Any]) -> str:
        lo, hi = b["bounds"]["robust"]
        e = est.get(m)
        if round(lo, 12) == round(hi, 12) or not e or e[0] is None:
            return bounds_text(lo, hi)  # known exactly, or no design to estimate it from: its range
        point = min(max(e[0], e[1]), e[2])  # the interval is cut to the exact range: so is the point
        return f"{point:.3f} ({e[1]:.3f}-{e[2]:.3f}, estimated)"

    def band_cell(b: dict[str, Any]) -> str:
        lo, hi = b["bounds"]["min"], b["bounds"]["max"]
        return f"{bounds_text(*lo)} to {bounds_text(*hi)}"

    out = []
    if v4:
        basis = avg.get("estimated_from") or {}
        ranks = Counter(r["rank"] for r in v4["rows"])
        for r in v4["rows"]:
            m = r["model"]
            b = by_model.get(m) or {"bounds": {"min": [0, 1], "max": [0, 1], "robust": [0, 1]}, "reference": 0.0}
            lo, hi = wilson(int(b.get("reference_items", round(b.get("reference", 0.0) * n))), n)
            reference = f"{b['reference']:.3f} ({lo:.3f}-{hi:.3f})"
            out.append(
                board_row(r, ranks, reference, band_cell(b), robust_cell(m, b), str(r["models_below"]), "-", "-")
            )
        notes = [
            head + ".",
            f"Ranked on the design's uniform random item sample ({basis.get('items', 0):,} of "
            f"{basis.get('of', n):,} items, every cell observed), by the board's rule: "
            + rule_note(v4, s.get("n_configs", 1))
            + " On this incomplete grid: score = the accuracy averaged over the configurations, estimated from "
            "that sample; 95% CI = its design-based interval (Wilson, finite-population corrected, cut to the "
            f"score's exact range). {BELOW_ROBUST} and configs won need the missing cells.",
        ]
        return out, notes
    for r in board:
        lo, hi = wilson(int(r.get("reference_items", round(r["reference"] * n))), n)
        a_lo, a_hi = r["bounds"]["averaged"]
        out.append(
            {
                "rank": f"{r['rank']}{'=' if r.get('tie') else ''}",
                RANKS: "-",
                "model": r["model"],
                "score": bounds_text(a_lo, a_hi),
                "95% CI": "-",
                "reference": f"{r['reference']:.3f} ({lo:.3f}-{hi:.3f})",
                "band (min-max)": band_cell(r),
                "robust": robust_cell(r["model"], r),
                BELOW: "-",
                BELOW_ROBUST: "-",
                "configs won": "-",
            }
        )
    why = (inc.get("withheld") or {}).get("averaged", "no harness-averaged board on this incomplete grid")
    notes = [
        head + ".",
        "Not ranked by the harness-averaged comparison: " + why + ". The rows are in the printed (reference) "
        "order; rank = the reference rank; score = the range of the harness-averaged accuracy over all "
        "completions of the missing cells (no estimate).",
    ]
    return out, notes


def _rows_by_tier(s: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """A pre-v4 report (no averaged board): ranked by identified tier, then reference score."""
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
                RANKS: "-",
                "model": r["model"],
                "score": f"{r['reference']:.3f}",
                "95% CI": f"{lo:.3f}-{hi:.3f}",
                "reference": f"{r['reference']:.3f}",
                "band (min-max)": "-" if one else f"{r['min']:.3f}-{r['max']:.3f}",
                "robust": "-" if one else f"{r['robust']:.3f}",
                BELOW: _above(above.get(r["model"], 0), truncated),
                BELOW_ROBUST: _above(above.get(r["model"], 0), truncated),
                "configs won": str(won.get(r["model"], 0)),
            }
        )
    notes = [
        "Ranked by identified tier (the exact sign test on the items both models answer alike under every "
        "configuration, Holm-adjusted), then by reference score (a report written before AUDITS v4); "
        f"{BELOW} = how many models the robust items identify this one above."
    ]
    return out, notes


def _above(n: int, truncated: bool) -> str:
    if not truncated:
        return str(n)
    return f"≥{n}" if n else "n/a"
