"""Figures at leaderboard scale: the top and bottom rows plus distributions.

One row per model is readable up to a few dozen models; at 4,278 it is a
100,000-pixel strip. Over ``FIG_ROWS`` models the per-model figures draw a
*view* of the scope (``trimmed``): the top ``EDGE`` and bottom ``EDGE`` models of
the reference order and the adjacent pairs among them, and ``figure_distribution``
adds histograms of what the trimmed rows leave out (reference and robust accuracy,
spread, the identified tier sizes). ``skipped_figures`` names the figures whose
check was skipped (one configuration: no band, no champions, no axes) so the page
says why they are absent instead of drawing a false claim.
"""

from __future__ import annotations

from typing import Any

from .svg import BLUE, GREY, ORANGE, WIDTH, _f, _svg, esc

FIG_ROWS = 40
EDGE = 15
#: figure id -> the check whose section it draws
FIGURE_CHECK = {"fig-1": "band", "fig-3": "champions", "fig-4": "axes", "fig-5": "flip"}


def trimmed(s: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The scope as the per-model figures draw it, and a caption note ("" when whole)."""
    rows = s.get("leaderboard") or []
    if len(rows) <= FIG_ROWS:
        return s, ""
    keep_rows = rows[:EDGE] + rows[-EDGE:]
    keep = {r["model"] for r in keep_rows}
    pairs = s.get("pairs") or []
    view = dict(s, leaderboard=keep_rows, pairs=pairs[:EDGE] + pairs[-EDGE:])
    flip = s.get("flip")
    if isinstance(flip, dict) and isinstance(flip.get("per_model"), dict):
        view["flip"] = dict(flip, per_model={m: v for m, v in flip["per_model"].items() if m in keep})
    note = (
        f" At this scale the figure shows the top {EDGE} and bottom {EDGE} of {len(rows):,} models "
        f"(and the first and last {EDGE} of {len(pairs):,} adjacent pairs); the distributions figure "
        "covers every model, and the tables below list them all."
    )
    return view, note


def skipped_figures(s: dict[str, Any]) -> dict[str, str]:
    """figure id -> why it is left out (its check was skipped for this scope, or the scope is an
    incomplete grid: the figures draw values that read a missing cell as wrong)."""
    out = {}
    withheld = (s.get("incomplete") or {}).get("withheld")
    if isinstance(withheld, dict):
        why = (
            "an incomplete grid: the figure would draw values that read every missing cell as a wrong answer "
            "(the tables give their exact ranges)"
        )
        out.update({fid: why for fid in ("fig-0", "fig-1", "fig-2", "fig-3", "fig-4", "fig-5")})
    for v in s.get("verdicts") or []:
        if v.get("status") != "skip":
            continue
        for fid, check in FIGURE_CHECK.items():
            if v.get("check") == check and fid not in out:
                out[fid] = f"the {check} check was skipped: {v.get('message', '')}"
    return out


def _hist(values: list[float], lo: float, hi: float, bins: int) -> list[int]:
    counts = [0] * bins
    span = (hi - lo) or 1.0
    for v in values:
        j = int((v - lo) / span * bins)
        counts[min(max(j, 0), bins - 1)] += 1
    return counts


PANEL_H = 120
PANEL_GAP = 48


def _panel(y: float, title: str, counts: list[int], lo: float, hi: float, color: str, fmt: str) -> list[str]:
    x0, x1 = 70.0, WIDTH - 40.0
    top = max(counts) or 1
    bw = (x1 - x0) / len(counts)
    out = [f'<text x="{_f(x0)}" y="{_f(y - 8)}" font-weight="bold">{esc(title)}</text>']
    for j, c in enumerate(counts):
        if not c:
            continue
        h = max(1.0, c / top * PANEL_H)
        a, b = lo + (hi - lo) * j / len(counts), lo + (hi - lo) * (j + 1) / len(counts)
        out.append(
            f'<rect x="{_f(x0 + j * bw + 0.5)}" y="{_f(y + PANEL_H - h)}" width="{_f(max(bw - 1, 1))}" '
            f'height="{_f(h)}" fill="{color}"><title>{format(a, fmt)}..{format(b, fmt)}: {c:,}</title></rect>'
        )
    base = y + PANEL_H
    out.append(f'<line x1="{_f(x0)}" y1="{_f(base)}" x2="{_f(x1)}" y2="{_f(base)}" stroke="#333"/>')
    for k in range(5):
        v = lo + (hi - lo) * k / 4
        x = x0 + (x1 - x0) * k / 4
        out.append(f'<text x="{_f(x)}" y="{_f(base + 14)}" text-anchor="middle">{format(v, fmt)}</text>')
    out.append(f'<text x="{_f(x0 - 6)}" y="{_f(y + 10)}" text-anchor="end">{top:,}</text>')
    return out


def figure_distribution(s: dict[str, Any]) -> str:
    """Histograms over every model: reference and robust accuracy, spread, tier sizes."""
    rows = s.get("leaderboard") or []
    if not rows:
        return ""
    panels: list[tuple[str, list[int], float, float, str, str]] = []
    ref = [r["reference"] for r in rows]
    panels.append((f"reference accuracy ({len(rows):,} models)", _hist(ref, 0.0, 1.0, 50), 0.0, 1.0, GREY, ".2f"))
    if s.get("n_configs", 1) > 1:
        rob = [r["robust"] for r in rows]
        panels.append(
            ("robust accuracy (right under every configuration)", _hist(rob, 0.0, 1.0, 50), 0.0, 1.0, BLUE, ".2f")
        )
        spread = [r["spread"] for r in rows]
        hi = max(spread) or 0.01
        panels.append(
            ("spread (max - min single-configuration accuracy)", _hist(spread, 0.0, hi, 40), 0.0, hi, ORANGE, ".3f")
        )
    tiers = (s.get("identified") or {}).get("tiers") or []
    body: list[str] = []
    y = 30.0
    for title, counts, lo, hi, color, fmt in panels:
        body += _panel(y, title, counts, lo, hi, color, fmt)
        y += PANEL_H + PANEL_GAP
    if tiers:
        body.append(
            f'<text x="70" y="{_f(y - 8)}" font-weight="bold">identified tiers ({len(tiers):,}), best first: models per tier</text>'
        )
        total = sum(len(t) for t in tiers) or 1
        x, x1 = 70.0, WIDTH - 40.0
        for j, t in enumerate(tiers):
            w = (x1 - 70.0) * len(t) / total
            color = BLUE if j % 2 == 0 else "#9db7e0"
            body.append(
                f'<rect x="{_f(x)}" y="{_f(y)}" width="{_f(max(w, 0.5))}" height="22" fill="{color}">'
                f"<title>tier {j + 1}: {len(t):,} models</title></rect>"
            )
            if w > 36:
                body.append(f'<text x="{_f(x + 3)}" y="{_f(y + 15)}" fill="#fff">{len(t):,}</text>')
            x += w
        y += 40
    return _svg("fig0", y + 10, "Distributions over every model", body)


__all__ = ["EDGE", "FIG_ROWS", "figure_distribution", "skipped_figures", "trimmed"]
