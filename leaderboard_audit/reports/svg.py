"""The paper's Figures 1-4 as inline SVG, from one scope of a report-v1 dict.

Pure standard library: every string that comes from the records (model names,
config keys) goes through ``esc`` (XML escaping), long names are cut in the label
and given in full in a ``<title>`` tooltip.
"""

from __future__ import annotations

import html
from typing import Any

from .text import is_format_char

ORANGE = "#e66100"
BLUE = "#1f5fbf"
GREY = "#777777"
LIGHT = "#c9d7ea"
AXIS_COLORS = {"ordering": "#0072B2", "format": "#E69F00", "scoring": "#009E73", "joint": "#444444"}  # Okabe-Ito
AXES = ("ordering", "format", "scoring", "joint")
EXTRA_AXIS_COLORS = ("#b279a2", "#e45756", "#72b7b2", "#9d755d", "#eeca3b", "#bab0ac", "#ff9da6", "#79706e")


def axis_color(axis: str, n: int) -> str:
    """The paper's axes keep their colours; a declared axis takes the n-th colour of the palette."""
    return AXIS_COLORS.get(axis) or EXTRA_AXIS_COLORS[n % len(EXTRA_AXIS_COLORS)]


WIDTH = 820
LEFT = 300  # label column (230 clipped a pair's first letter at 12 px: UX review 2026-12-04 #24)
RIGHT = 175  # room for value labels
TOP = 34
ROW = 24
LABEL_CHARS = 34  # up to ~8.5 px a character at 12 px (capitals, digits): fits LEFT - 8 without clipping


def esc(s: Any) -> str:
    """XML/HTML-escape (quotes too) after dropping control characters."""
    text = "".join(
        (repr(ch)[1:-1] if is_format_char(ch) else ch) if (ch >= " " or ch in "\t") and ch != "\x7f" else "\ufffd"
        for ch in str(s)
    )
    return html.escape(text, quote=True)


def _cut(s: str, n: int = LABEL_CHARS) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def _cut_mid(s: str, n: int) -> str:
    """Cut in the middle, keeping the end (model names differ at the end: ``org0/mo…-04268``)."""
    if len(s) <= n:
        return s
    tail = (n - 1) // 2
    return s[: n - 1 - tail] + "…" + s[-tail:]


def pair_label(higher: str, lower: str, n: int = LABEL_CHARS) -> str:
    """``higher > lower`` in at most ``n`` characters: whole when it fits; otherwise the shorter
    name whole if it leaves the other at least 10, and each name cut in its middle to its share
    (the end, where generated names differ, kept)."""
    whole = f"{higher} > {lower}"
    if len(whole) <= n:
        return whole
    room = n - 3
    a, b = len(higher), len(lower)
    if min(a, b) <= room - 10:  # the shorter one whole, the longer one gets the rest
        ca, cb = (a, room - a) if a <= b else (room - b, b)
    else:
        ca = room // 2
        cb = room - ca
    return f"{_cut_mid(higher, ca)} > {_cut_mid(lower, cb)}"


def _f(x: float) -> str:
    return f"{x:.1f}"


class Scale:
    def __init__(self, lo: float, hi: float, x0: float = LEFT, x1: float = WIDTH - RIGHT):
        if hi <= lo:
            hi = lo + 1.0
        self.lo, self.hi, self.x0, self.x1 = lo, hi, x0, x1

    def __call__(self, v: float) -> float:
        return self.x0 + (v - self.lo) / (self.hi - self.lo) * (self.x1 - self.x0)


def _svg(fig_id: str, height: float, title: str, body: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" id="{fig_id}-svg" class="figure-svg" role="img" '
        f'aria-labelledby="{fig_id}-title" width="{WIDTH}" height="{_f(height)}" '
        f'viewBox="0 0 {WIDTH} {_f(height)}" font-family="system-ui, sans-serif" font-size="12">'
        f'<title id="{fig_id}-title">{esc(title)}</title>' + "".join(body) + "</svg>"
    )


NEW = "#8250df"  # a --audit-submission newcomer


def _label(y: float, text: str, extra: str = "", new: bool = False, shown: str | None = None) -> str:
    """A row label cut to fit the label column (``shown``: a cut of its own, e.g. both names of a
    pair); the full text in the tooltip."""
    short = shown if shown is not None and len(text) > LABEL_CHARS else text
    if new:  # the newcomer: marked and coloured
        extra += f' fill="{NEW}" font-weight="bold" class="newcomer"'
        text_shown = "\u25b6 " + _cut(short, LABEL_CHARS - 2)
    else:
        text_shown = _cut(short)
    return (
        f'<text x="{LEFT - 8}" y="{_f(y + 4)}" text-anchor="end"{extra}><title>{esc(text)}</title>'
        f"{esc(text_shown)}</text>"
    )


def _x_axis(sc: Scale, y: float, ticks: list[float], fmt: Any = lambda v: f"{v:g}", label: str = "") -> list[str]:
    out = [f'<line x1="{_f(sc.x0)}" y1="{_f(y)}" x2="{_f(sc.x1)}" y2="{_f(y)}" stroke="#333"/>']
    for t in ticks:
        x = sc(t)
        out.append(f'<line x1="{_f(x)}" y1="{_f(y)}" x2="{_f(x)}" y2="{_f(y + 4)}" stroke="#333"/>')
        out.append(f'<text x="{_f(x)}" y="{_f(y + 16)}" text-anchor="middle">{esc(fmt(t))}</text>')
    if label:
        out.append(f'<text x="{_f((sc.x0 + sc.x1) / 2)}" y="{_f(y + 30)}" text-anchor="middle">{esc(label)}</text>')
    return out


def _grid(sc: Scale, ticks: list[float], y0: float, y1: float) -> list[str]:
    return [f'<line x1="{_f(sc(t))}" y1="{_f(y0)}" x2="{_f(sc(t))}" y2="{_f(y1)}" stroke="#eee"/>' for t in ticks]


def _legend(items: list[tuple[str, str]], y: float = 14) -> list[str]:
    out, x = [], LEFT
    for color, text in items:
        out.append(f'<rect x="{_f(x)}" y="{_f(y - 9)}" width="12" height="10" fill="{color}"/>')
        out.append(f'<text x="{_f(x + 16)}" y="{_f(y)}">{esc(text)}</text>')
        x += 24 + 6.5 * len(text)
    return out


def figure_band(s: dict[str, Any], highlight: frozenset[str] = frozenset()) -> str:
    """Figure 1: robust - reference - optimistic band per model, reference order."""
    rows = s["leaderboard"]
    h = TOP + ROW * len(rows) + 44
    sc = Scale(0.0, 1.0)
    ticks = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    body = _legend([(GREY, "robust .. optimistic"), (LIGHT, "min .. max single config"), ("#000", "reference")])
    body += _grid(sc, ticks, TOP - 6, TOP + ROW * len(rows))
    for j, r in enumerate(rows):
        y = TOP + ROW * j + ROW / 2
        lo, hi = sc(r["robust"]), sc(r["optimistic"])
        body.append(
            f'<g class="band-row"><title>{esc(r["model"])}: robust {r["robust"]:.3f}, reference '
            f"{r['reference']:.3f}, optimistic {r['optimistic']:.3f}, single configs "
            f"{r['min']:.3f}..{r['max']:.3f}</title>"
        )
        body.append(
            f'<rect x="{_f(sc(r["min"]))}" y="{_f(y - 6)}" width="{_f(max(sc(r["max"]) - sc(r["min"]), 1))}" '
            f'height="12" fill="{LIGHT}"/>'
        )
        body.append(f'<line x1="{_f(lo)}" y1="{_f(y)}" x2="{_f(hi)}" y2="{_f(y)}" stroke="{GREY}" stroke-width="2"/>')
        for x in (lo, hi):
            body.append(
                f'<line x1="{_f(x)}" y1="{_f(y - 7)}" x2="{_f(x)}" y2="{_f(y + 7)}" stroke="{GREY}" stroke-width="2"/>'
            )
        body.append(f'<circle cx="{_f(sc(r["reference"]))}" cy="{_f(y)}" r="4.5" fill="#000"/></g>')
        body.append(_label(y, r["model"], new=r["model"] in highlight))
        body.append(
            f'<text x="{_f(sc.x1 + 8)}" y="{_f(y + 4)}">{r["robust"]:.2f} / {r["reference"]:.2f} / '
            f"{r['optimistic']:.2f}</text>"
        )
    body += _x_axis(sc, TOP + ROW * len(rows), ticks, label="accuracy")
    return _svg("fig1", h, "Figure 1: robust, reference and optimistic accuracy per model", body)


def figure_pairs(s: dict[str, Any], highlight: frozenset[str] = frozenset()) -> str:
    """Figure 2: reference gap (bar) vs robust-item gap with its 95% CI (marker), per pair."""
    pairs = s["pairs"]
    vals = [0.0]
    for p in pairs:
        vals.append(p["gap"])
        if p["ci"] is not None:
            vals += list(p["ci"])
        if p["robust_diff"] is not None:
            vals.append(p["robust_diff"])
    lo, hi = min(vals), max(vals)
    pad = 0.05 * (hi - lo or 1.0)
    sc = Scale(lo - pad, hi + pad)
    n = max(len(pairs), 1)
    h = TOP + ROW * n + 44
    step = _nice_step(sc.hi - sc.lo)
    ticks = _ticks(sc.lo, sc.hi, step)
    body = _legend([(ORANGE, "reference gap"), (BLUE, "robust-item gap, 95% CI")])
    body += _grid(sc, ticks, TOP - 6, TOP + ROW * n)
    body.append(f'<line x1="{_f(sc(0))}" y1="{TOP - 6}" x2="{_f(sc(0))}" y2="{_f(TOP + ROW * n)}" stroke="#333"/>')
    if not pairs:
        body.append(f'<text x="{LEFT}" y="{TOP + 14}">no adjacent pairs (one model)</text>')
    for j, p in enumerate(pairs):
        y = TOP + ROW * j + ROW / 2
        x0, x1 = sorted((sc(0), sc(p["gap"])))
        fs = p["fragile_share"]
        label = "no gap (tie)" if fs is None else f"fragile {fs:.0%}"
        if p["manufactured"]:
            label += " MANUF"
        body.append(
            f'<g class="pair-row"><title>{esc(p["higher"])} &gt; {esc(p["lower"])}: gap {p["gap"]:.3f} '
            f"({p['gap_items']} items), fragile share {'n/a' if fs is None else f'{fs:.3f}'}, robust items "
            f"{p['robust_items']}, higher_only {p['higher_only']}, lower_only {p['lower_only']}</title>"
        )
        if x1 - x0 < 3:  # a zero (or tiny) gap: a visible 3-px mark centred on it, not a hidden 1-px bar
            x0, x1 = (x0 + x1) / 2 - 1.5, (x0 + x1) / 2 + 1.5
        body.append(
            f'<rect x="{_f(x0)}" y="{_f(y - 7)}" width="{_f(x1 - x0)}" height="14" fill="{ORANGE}" opacity="0.85"/>'
        )
        if p["ci"] is not None:
            c0, c1 = sc(p["ci"][0]), sc(p["ci"][1])
            body.append(
                f'<line x1="{_f(c0)}" y1="{_f(y)}" x2="{_f(c1)}" y2="{_f(y)}" stroke="{BLUE}" stroke-width="2"/>'
            )
            for x in (c0, c1):
                body.append(
                    f'<line x1="{_f(x)}" y1="{_f(y - 5)}" x2="{_f(x)}" y2="{_f(y + 5)}" stroke="{BLUE}" '
                    f'stroke-width="2"/>'
                )
        if p["robust_diff"] is not None:
            body.append(f'<circle cx="{_f(sc(p["robust_diff"]))}" cy="{_f(y)}" r="4.5" fill="{BLUE}"/>')
        body.append("</g>")
        body.append(
            _label(
                y,
                f"{p['higher']} > {p['lower']}",
                new=bool({p["higher"], p["lower"]} & highlight),
                shown=pair_label(
                    p["higher"], p["lower"], LABEL_CHARS - (2 if {p["higher"], p["lower"]} & highlight else 0)
                ),
            )
        )
        bold = ' font-weight="bold"' if p["manufactured"] else ""
        body.append(f'<text x="{_f(sc.x1 + 8)}" y="{_f(y + 4)}"{bold}>{esc(label)}</text>')
    body += _x_axis(
        sc, TOP + ROW * n, ticks, fmt=lambda v: f"{v:+.2f}" if v else "0", label="accuracy gap (higher minus lower)"
    )
    return _svg("fig2", h, "Figure 2: reference gap vs robust-item gap per adjacent pair", body)


def figure_ranks(s: dict[str, Any], highlight: frozenset[str] = frozenset()) -> str:
    """Figure 3: rank range per model with its reference rank; champions highlighted."""
    rows = s["leaderboard"]
    ch = s.get("champions")
    if not ch:  # skipped (one configuration): its section is not computed
        return ""
    M = max(s.get("n_models", len(rows)), len(rows), 1)  # a trimmed view still spans every rank
    sc = Scale(0.5, M + 0.5)
    h = TOP + ROW * len(rows) + 44
    champs = set(ch["set"])
    body = _legend(
        [(ORANGE, "reaches rank 1 under some config (champion)"), (GREY, "other models"), ("#000", "reference rank")]
    )
    ticks = list(range(1, M + 1)) if M <= 20 else [1] + [int(v) for v in _ticks(0, M, _nice_step(M)) if v >= 2]
    body += _grid(sc, [float(t) for t in ticks], TOP - 6, TOP + ROW * len(rows))
    body.append(
        f'<line x1="{_f(sc(1))}" y1="{TOP - 6}" x2="{_f(sc(1))}" y2="{_f(TOP + ROW * len(rows))}" '
        f'stroke="{ORANGE}" stroke-dasharray="4 3"/>'
    )
    for j, r in enumerate(rows):
        m = r["model"]
        y = TOP + ROW * j + ROW / 2
        lo, hi = ch["rank_range"][m]
        ref_rank = ch.get("reference_rank", {}).get(m, r["rank"])
        color = ORANGE if m in champs else GREY
        body.append(
            f'<g class="rank-row{" champion" if m in champs else ""}"><title>{esc(m)}: ranks {lo}-{hi}, '
            f"reference rank {ref_rank}</title>"
        )
        body.append(
            f'<rect x="{_f(sc(lo - 0.2))}" y="{_f(y - 5)}" width="{_f(sc(hi + 0.2) - sc(lo - 0.2))}" '
            f'height="10" rx="5" fill="{color}" opacity="0.8"/>'
        )
        body.append(f'<circle cx="{_f(sc(ref_rank))}" cy="{_f(y)}" r="4.5" fill="#000"/></g>')
        body.append(
            _label(y, m, ' font-weight="bold"' if m in champs and m not in highlight else "", new=m in highlight)
        )
        body.append(f'<text x="{_f(sc.x1 + 8)}" y="{_f(y + 4)}">{lo}-{hi} (ref {ref_rank})</text>')
    body += _x_axis(
        sc,
        TOP + ROW * len(rows),
        [float(t) for t in ticks],
        fmt=lambda v: f"{int(v)}",
        label="rank across configurations (competition ranking)",
    )
    return _svg("fig3", h, "Figure 3: rank range per model across configurations", body)


def figure_axes(s: dict[str, Any], highlight: frozenset[str] = frozenset()) -> str:
    """Figure 4: axis-robust accuracy per model and axis (every declared axis, or ordering,
    format and scoring; then joint)."""
    ax = s.get("axes")
    if not ax:  # skipped: its section is not computed
        return ""
    axes = tuple(ax["groups"])
    colors = {a: axis_color(a, n) for n, a in enumerate(axes)}
    models = [r["model"] for r in s["leaderboard"]]
    sub = 9
    row = sub * len(axes) + 10
    h = TOP + row * len(models) + 44
    sc = Scale(0.0, 1.0)
    ticks = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    sizes = {a: len(ax["groups"].get(a, [])) for a in axes}
    body = _legend([(colors[a], f"{a} ({sizes[a]})") for a in axes])
    body += _grid(sc, ticks, TOP - 6, TOP + row * len(models))
    for j, m in enumerate(models):
        y0 = TOP + row * j + 5
        vals = ax["robust_accuracy"][m]
        body.append(
            f'<g class="axes-row"><title>{esc(m)}: ' + ", ".join(f"{esc(a)} {vals[a]:.3f}" for a in axes) + "</title>"
        )
        for n, a in enumerate(axes):
            body.append(
                f'<rect x="{_f(sc(0))}" y="{_f(y0 + sub * n)}" width="{_f(max(sc(vals[a]) - sc(0), 0.5))}" '
                f'height="{sub - 1}" fill="{colors[a]}"/>'
            )
        body.append("</g>")
        body.append(_label(y0 + 2 * sub - 2, m, new=m in highlight))
        body.append(
            f'<text x="{_f(sc.x1 + 8)}" y="{_f(y0 + 2 * sub + 2)}">most destructive: '
            f"{esc(ax['most_destructive'].get(m, '-'))}</text>"
        )
    body += _x_axis(sc, TOP + row * len(models), ticks, label="accuracy robust to the axis")
    return _svg("fig4", h, "Figure 4: axis-robust accuracy per model", body)


#: Figure 5's curves: the Okabe-Ito colour-blind-safe qualitative palette (its black is the pooled
#: curve); past 7 models the colours repeat with a dash pattern, so every curve stays distinct.
ROC_COLORS = ("#E69F00", "#56B4E9", "#009E73", "#D55E00", "#0072B2", "#CC79A7", "#F0E442")
ROC_DASHES = ("", "7 3", "2 2", "9 3 2 3")
POOLED_COLOR = "#000000"


def roc_style(j: int) -> tuple[str, str]:
    """The j-th model's (colour, dash pattern) in Figure 5."""
    n = len(ROC_COLORS)
    return ROC_COLORS[j % n], ROC_DASHES[(j // n) % len(ROC_DASHES)]


def figure_roc(s: dict[str, Any], highlight: frozenset[str] = frozenset()) -> str:
    """Figure 5 (beyond the paper): ROC curves of the flip predictor, one per model and
    pooled; "" when the scope has no flip section or no margins."""
    f = s.get("flip")
    if not f or "skipped" in f:
        return ""
    if all(st.get("auc") is None for st in [*f["per_model"].values(), f["pooled"]]):
        return ""  # v3: no class holds enough items for an AUC anywhere: nothing to draw
    x0, y0, side = 70.0, 30.0, 320.0
    h = y0 + side + 50

    def px(v: float) -> float:
        return x0 + v * side

    def py(v: float) -> float:
        return y0 + (1.0 - v) * side

    body = [
        f'<rect x="{_f(x0)}" y="{_f(y0)}" width="{_f(side)}" height="{_f(side)}" fill="none" stroke="#333"/>',
        f'<line x1="{_f(px(0))}" y1="{_f(py(0))}" x2="{_f(px(1))}" y2="{_f(py(1))}" stroke="{GREY}" '
        'stroke-dasharray="4 3"/>',
    ]
    for t in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0):
        body.append(
            f'<line x1="{_f(px(t))}" y1="{_f(py(0))}" x2="{_f(px(t))}" y2="{_f(py(0) + 4)}" stroke="#333"/>'
            f'<text x="{_f(px(t))}" y="{_f(py(0) + 16)}" text-anchor="middle">{t:g}</text>'
            f'<line x1="{_f(px(0) - 4)}" y1="{_f(py(t))}" x2="{_f(px(0))}" y2="{_f(py(t))}" stroke="#333"/>'
            f'<text x="{_f(px(0) - 7)}" y="{_f(py(t) + 4)}" text-anchor="end">{t:g}</text>'
        )
    body.append(
        f'<text x="{_f(px(0.5))}" y="{_f(py(0) + 34)}" text-anchor="middle">false positive rate '
        "(robust items flagged)</text>"
    )
    body.append(
        f'<text x="{_f(px(0) - 44)}" y="{_f(py(0.5))}" text-anchor="middle" transform="rotate(-90 '
        f'{_f(px(0) - 44)} {_f(py(0.5))})">true positive rate (fragile items flagged)</text>'
    )
    curves = [(m, st, *roc_style(j), 1.8) for j, (m, st) in enumerate(f["per_model"].items())]
    curves.append(("pooled", f["pooled"], POOLED_COLOR, "", 2.8))
    lx, ly = x0 + side + 40, y0 + 8
    for m, st, color, dash, width in curves:
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        roc = st.get("roc")
        auc = "n/a" if st.get("auc") is None else f"{st['auc']:.2f}"
        if roc and st.get("auc") is not None:  # one class only: no curve to draw
            pts = " ".join(f"{_f(px(a))},{_f(py(b))}" for a, b in zip(roc["fpr"], roc["tpr"]))
            body.append(
                f'<polyline class="roc" points="{pts}" fill="none" stroke="{color}"{dashed} '
                f'stroke-width="{width}"><title>{esc(m)}: AUC {auc}</title></polyline>'
            )
        bold = ' font-weight="bold"' if m == "pooled" or m in highlight else ""
        body.append(
            f'<line x1="{_f(lx)}" y1="{_f(ly - 4)}" x2="{_f(lx + 18)}" y2="{_f(ly - 4)}" stroke="{color}"{dashed} '
            f'stroke-width="{width}"/><text x="{_f(lx + 24)}" y="{_f(ly)}"{bold}><title>{esc(m)}</title>'
            f"{esc(_cut(m, 34))}: AUC {auc}</text>"
        )
        ly += 17
    h = max(h, ly + 10)
    return _svg("fig5", h, f"Figure 5: flip predictor ROC, margin at {f['config']}", body)


def _nice_step(span: float) -> float:
    import math

    raw = span / 6 or 0.1
    mag = 10 ** math.floor(math.log10(raw))
    for mult in (1, 2, 5, 10):
        if raw <= mult * mag:
            return mult * mag
    return 10 * mag


def _ticks(lo: float, hi: float, step: float) -> list[float]:
    import math

    start = math.ceil(lo / step) * step
    out, v = [], start
    while v <= hi + 1e-12:
        out.append(round(v, 10))
        v += step
    return out


FIGURES = (
    (
        "fig-1",
        "Figure 1",
        figure_band,
        "The same model, the same items, and many scores. Models in reference-leaderboard order, best at the top. "
        "Each row runs from robust accuracy (items right under every configuration, left tick) to optimistic "
        "accuracy (items right under at least one, right tick); the dot is the reference-configuration score, the "
        "shaded box the range of single-configuration accuracies.",
    ),
    (
        "fig-2",
        "Figure 2",
        figure_pairs,
        "Every leaderboard gap, decomposed. For each adjacent pair the orange bar is the reference-config accuracy "
        "gap (the order the leaderboard prints); the blue marker is the gap on the items both models answer "
        "stably (unchanged across all configurations), with its 95% bootstrap CI. The label gives the fragile share "
        "of the gap (1 - (higher only - lower only) / gap items: below 0% the jointly robust items favour the "
        "higher model by more than the printed gap, above 100% they favour the lower one); MANUF marks an order manufactured by the harness (the robust items do not order the pair and some configuration reverses it beyond item sampling). With no disagreement in one direction a "
        "CI bound sits at 0 by construction: read the counts in the pairs table.",
    ),
    (
        "fig-3",
        "Figure 3",
        figure_ranks,
        "The configuration selects the champion. Each bar spans the ranks a model attains across the "
        "configurations (competition ranking), with a dot at its reference rank; models that reach rank 1 under "
        "some configuration are drawn in orange, and the dashed line marks rank 1.",
    ),
    (
        "fig-4",
        "Figure 4",
        figure_axes,
        "Which axis does the damage. For each model, four bars give the accuracy that survives varying one harness "
        "axis with the others at the reference (option order, prompt format, scoring method) and the joint grid.",
    ),
    (
        "fig-5",
        "Figure 5",
        figure_roc,
        "Beyond the paper: can the margin between a model's top two options flag its config-fragile items before "
        "running the grid? One ROC curve per model (and pooled, black) for 'flag every item whose margin under the "
        "likelihood configuration is at most t'; the dashed diagonal is chance. AUC 0.5 = the margin says nothing.",
    ),
)


__all__ = ["FIGURES", "esc", "figure_axes", "figure_band", "figure_pairs", "figure_ranks", "figure_roc"]
