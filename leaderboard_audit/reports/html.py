"""Self-contained HTML report: one file, no network, one inline script.

The paper's figures are inline SVG (``reports.svg``; at scale the top and bottom
rows plus distributions, ``reports.svg_scale``), the styles are inline, and a
Content-Security-Policy (``default-src 'none'``) forbids every fetch and allows
exactly one script, by its hash (``reports.html_script``: search, sort and page the
tables). Every string from the records (model names, config keys, item text,
legend values, messages) is HTML-escaped with ``e``. The file fills a byte budget
(``MAX_BYTES``): tables keep their first rows (saying how many they left out) until
it fits; long messages show their start, the rest in a collapsed ``<details>``.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from .html_script import PAGE, SCRIPT, SCRIPT_HASH
from .next_steps import counts_note, next_steps, twin_scopes
from .twins import reported_verdicts, steps_scope, twin_only
from .svg import FIGURES, esc as e
from .submission_text import gate_tables
from .svg_scale import figure_distribution, skipped_figures, trimmed
from .words import count
from .sections import scope_parts
from ..checks.tables import (
    kind_of,
    narrow_board,
    Table,
    counts_text,
    status_counts,
    evidence_heading,
    pair_label,
    verdicts_table,
)
from .text import num
from .leaderboard_rows import BELOW

CSP = (
    f"default-src 'none'; script-src '{SCRIPT_HASH}'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'"
)
MAX_BYTES = 3_000_000
#: rows per table, tried in turn until the file fits ``MAX_BYTES``
ROW_STEPS: tuple[int | None, ...] = (1000, 300, 100, 25)
MESSAGE_CHARS = 160
EVIDENCE_PAIRS = 10  # unordered pairs whose evidence items are listed (the JSON has every one)
ELSEWHERE = "the JSON report (--audit-report) holds every row"

STYLE = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1200px;padding:0 1em;color:#222;line-height:1.4}
h1{margin-bottom:.2em} h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:13px;display:block;overflow-x:auto;max-width:100%}
th,td{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f4f4f4} td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.pass{color:#1a7f37} .warn{color:#9a6700;font-weight:bold} .fail{color:#cf222e;font-weight:bold}
.st{white-space:nowrap;text-transform:uppercase;font-size:12px}
figure{margin:1.5em 0;border:1px solid #eee;padding:.6em;overflow-x:auto}
figcaption{font-size:13px;color:#444;max-width:820px}
.msg{font-size:12px;max-width:560px} .q{font-size:12px;max-width:520px;white-space:pre-wrap}
.legend-text{white-space:pre-wrap;font-family:ui-monospace,monospace;font-size:12px;max-width:420px}
details{margin:.8em 0} summary{cursor:pointer;font-weight:bold}
.state{font-size:15px;padding:.5em .8em;border-left:4px solid #999;background:#fafafa}
.next{font-size:15px;padding:.4em 1em .4em 2em;border-left:4px solid #1f5fbf;background:#f3f7fd}
.dt-bar{font-size:13px;margin:.4em 0} .dt-bar input{margin-right:.5em} .more{font-size:12px;color:#555}
.skipped{font-size:13px;color:#555}
a.m{color:inherit;text-decoration:underline dotted} tr:target{background:#fff3c4}
code{font-family:ui-monospace,monospace;font-size:.9em;background:#eef1f5;padding:0 .25em;border-radius:3px}
"""


def _status(st: str) -> str:
    return f'<span class="st {e(st)}">{e(st)}</span>'


def _n(x: Any, nd: int = 3) -> str:
    return f'<td class="n">{e(num(x, nd))}</td>'


def _td(html_cell: str, cls: str = "") -> str:
    return f"<td{f' class={chr(34)}{cls}{chr(34)}' if cls else ''}>{html_cell}</td>"


_ROWS: list[int | None] = [None]  # the row cap of the render in progress (render_html sets it)
#: the models with a row in "What is known per model" in the render in progress (their names link there)
_LINKED: list[frozenset[str]] = [frozenset()]


def model_id(name: str) -> str:
    """The in-page id of a model's row: ``model-`` + a lowercase ``[a-z0-9-]`` slug + 8 hex digits of
    the name's SHA-256 (names that slug alike stay apart; nothing of the name reaches the id unescaped)."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40].strip("-")
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"model-{slug}-{digest}" if slug else f"model-{digest}"


def model_link(name: str) -> str:
    """The escaped name, a link to its row in "What is known per model" when it has one."""
    if name not in _LINKED[0]:
        return e(name)
    return f'<a class="m" href="#{model_id(name)}">{e(name)}</a>'


def _table(
    headers: list[str], rows: list[str], cls: str = "", left_out: int = 0, row_ids: list[str] | None = None
) -> str:
    cap = _ROWS[0]
    if cap is not None and len(rows) > cap:
        left_out += len(rows) - cap
        rows = rows[:cap]
    cls = " ".join(x for x in (cls, "dt" if len(rows) > PAGE else "") if x)
    head = "".join(f"<th>{e(h)}</th>" for h in headers)
    ids = row_ids or []
    body = "".join(f'<tr id="{ids[j]}">{r}</tr>' if j < len(ids) else f"<tr>{r}</tr>" for j, r in enumerate(rows))
    more = (
        f'<p class="more">{left_out:,} more rows left out to fit the size budget: {ELSEWHERE}.</p>' if left_out else ""
    )
    return f"<table{f' class={chr(34)}{cls}{chr(34)}' if cls else ''}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}"


def long_text(text: str, chars: int = MESSAGE_CHARS, lines: bool = False) -> str:
    """Escaped text; past ``chars`` the rest sits in a collapsed ``<details>``. ``lines``: keep the
    text's line breaks (a ``white-space: pre-wrap`` cell) instead of marking them as control characters."""
    esc_ = (lambda t: "\n".join(e(x) for x in t.split("\n"))) if lines else e
    if len(text) <= chars:
        return esc_(text)
    return (
        f"{esc_(text[:chars])}…<details><summary>the rest ({len(text) - chars:,} characters)</summary>"
        f"{esc_(text[chars:])}</details>"
    )


def cell_html(c: Any, digits: int = 3) -> str:
    if kind_of(c) == "cell":
        if c.style == "status":
            return _td(_status(c.text))
        if c.style == "strong":
            return _td(f"<b>{e(c.text)}</b>")
        return _td(e(c.text))
    if isinstance(c, str):
        return _td(e(c))
    return _n(c, digits)


def table_html(t: Table, level: int = 3) -> str:
    cap = _ROWS[0]
    shown = t.rows if cap is None else t.rows[:cap]
    link = {j for j, h in enumerate(t.headers) if h == "model"} if _LINKED[0] else set()
    rows = [
        "".join(
            _td(model_link(c)) if j in link and isinstance(c, str) else cell_html(c, t.digits.get(j, 3))
            for j, c in enumerate(r)
        )
        for r in shown
    ]
    left = len(t.rows) - len(shown)
    note = f"<p>{e(t.note)}</p>" if t.note else ""
    return f"<h{level}>{e(t.title)}</h{level}>{note}" + _table(list(t.headers), rows, e(t.key), left)


def verdicts_html(verdicts: list[dict[str, Any]]) -> str:
    cap = _ROWS[0]
    shown = verdicts if cap is None else verdicts[:cap]
    t = verdicts_table(shown)
    rows = ["".join(cell_html(c) if j != 5 else _td(long_text(str(c)), "msg") for j, c in enumerate(r)) for r in t.rows]
    return _table(list(t.headers), rows, "verdicts", len(verdicts) - len(shown))


def evidence_block(s: dict[str, Any]) -> str:
    parts = []
    with_ev = [p for p in s.get("pairs") or [] if p.get("fragile_evidence")]
    cap = _ROWS[0]
    shown = with_ev[: EVIDENCE_PAIRS if cap is None else max(1, min(EVIDENCE_PAIRS, cap // 10))]
    for p in shown:
        ev = p["fragile_evidence"]
        rows = [
            _td(e(i["item_id"]))
            + _td(e(i["favours"]))
            + _td(f"{i['higher_configs']}/{i['configs']}")
            + _td(f"{i['lower_configs']}/{i['configs']}")
            + _td(e(i["question"]) if i.get("question") else "-", "q")
            for i in ev["items"]
        ]
        parts.append(
            f"<h4>{e(pair_label(p['higher'], p['lower']))} ({e(evidence_heading(p))})</h4>"
            f"<p>{ev['higher_right']} fragile "
            f"items favour the higher model and {ev['lower_right']} the lower under the reference (net "
            f"{ev['net_items']} of the {p['gap_items']}-item gap); showing {ev['shown']} "
            f"(cap {ev['cap']}). {e(ev['rule'])}.</p>"
            + _table(
                ["item", "right under reference for", "higher right in", "lower right in", "question"], rows, "evidence"
            )
        )
    if not parts:
        return ""
    if len(shown) < len(with_ev):
        parts.append(f'<p class="more">Evidence of {len(with_ev) - len(shown):,} more pairs left out: {ELSEWHERE}.</p>')
    return (
        f"<details><summary>Evidence: the items that carry the gaps the robust items do not order "
        f"({count(len(with_ev), 'pair')}, "
        f"{len(shown):,} shown)</summary>" + "".join(parts) + "</details>"
    )


def scope_section(name: str, s: dict[str, Any]) -> str:
    parts = [
        f"<p>{count(s['n_models'], 'model')} x {count(s['n_items'], 'item')} x {count(s['n_configs'], 'config')}; "
        f"reference {e(s['reference'])}.</p>"
    ]
    lines = []
    for t in scope_parts(name, s):
        if kind_of(t) == "line":
            lines.append(f"<li>{long_text(t.text)}</li>")
        else:
            parts.append(table_html(narrow_board(t, s["n_configs"])))
    if lines:
        parts.append("<ul>" + "".join(lines) + "</ul>")
    parts.append(evidence_block(s))
    parts.append(f"<h3>Verdicts</h3>{verdicts_html(_by_importance(s['verdicts']))}")
    return "".join(parts)


MODEL_HEADERS = [
    "model",
    "rank",
    "score",
    "band (min-max)",
    "robust",
    "board rank",
    BELOW,
    "configs won",
    "pair above",
    "pair below",
]


def pair_word(p: dict[str, Any], n_configs: int) -> str:
    """An adjacent pair's status in a few words (as "What to do next" counts them)."""
    if p["gap_items"] == 0:
        return "printed tie"
    if not p["robust_tie"]:
        return "identified"
    cause = p.get("cause")  # v5: every printed gap the robust items do not order has one; manufactured = harness
    if cause == "harness":
        n = p.get("reversing_significant", p["reversing"])
        return f"manufactured by the harness ({n}/{n_configs} configs reverse it beyond item sampling)"
    if cause == "undecidable":
        return "not decidable on robust items"
    if cause == "sampling":
        return "too few robust items (sampling)"
    return "not identified"


def models_section(s: dict[str, Any]) -> str:
    """One row per model (in the printed order, the same rows as Table 1): what the audit knows about
    it: band, robust accuracy, its rank on the published board, how many it is identified above (models below), configs won, and its two
    adjacent pairs. Each row has an in-page id; the model names of the scope's tables link to it."""
    from .leaderboard_rows import rows_of

    board = s.get("leaderboard") or []
    if not board:
        return ""
    facts = {r["model"]: r for r in rows_of(s)[0]}
    above_pair = {p["lower"]: p for p in s.get("pairs") or []}
    below_pair = {p["higher"]: p for p in s.get("pairs") or []}
    k = s.get("n_configs", 1)
    # one configuration: no band, no robust accuracy, nothing to win (the leaderboard's own narrowing)
    drop = {3, 4, 7} if k <= 1 else set()
    rows, ids = [], []
    for r in board:
        m = r["model"]
        f = facts.get(m, {})
        up, down = above_pair.get(m), below_pair.get(m)
        cells = [
            _td(f"<b>{e(m)}</b>"),
            _td(e(str(r.get("rank", ""))), "n"),
            _td(e(f.get("score", "")), "n"),
            _td(e(f.get("band (min-max)", "-"))),
            _td(e(f.get("robust", "-")), "n"),
            _td(e(f.get("rank", "")), "n"),
            _td(e(f.get(BELOW, "")), "n"),
            _td(e(f.get("configs won", "")), "n"),
            _td(f"{model_link(up['higher'])}: {e(pair_word(up, k))}" if up else "-"),
            _td(f"{model_link(down['lower'])}: {e(pair_word(down, k))}" if down else "-"),
        ]
        rows.append("".join(c for j, c in enumerate(cells) if j not in drop))
        ids.append(model_id(m))
    return (
        '<section id="models"><h2>What is known per model</h2><p>One row per model of scope '
        "pooled, in the printed order; a model's name in the tables above links here. Score (harness-averaged), "
        "board rank, models below (how many it is identified above) and configs won as in the publishable "
        "leaderboard (--audit-leaderboard); "
        "each adjacent pair as What to do next counts it.</p>"
        + _table([h for j, h in enumerate(MODEL_HEADERS) if j not in drop], rows, "models", row_ids=ids)
        + "</section>"
    )


def _by_importance(verdicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rank = {"fail": 0, "warn": 1, "skip": 2, "pass": 3}
    return sorted(
        verdicts, key=lambda v: (rank.get(v["status"], 4), v["margin"] if v["margin"] is not None else 0.0, v["id"])
    )


def figures_section(name: str, s: dict[str, Any], highlight: frozenset[str] = frozenset()) -> str:
    out = [f"<h2>Figures (scope {e(name)})</h2>"]
    note = (" Submitted model(s) (\u25b6, purple): " + ", ".join(sorted(highlight)) + ".") if highlight else ""
    view, scale_note = trimmed(s)
    skipped = skipped_figures(s)
    if scale_note and "fig-0" not in skipped:
        out.append(
            '<figure id="fig-0" class="audit-figure">' + figure_distribution(s) + "<figcaption><b>Distributions.</b> "
            f"Every one of the {len(s['leaderboard']):,} models: histograms of the reference accuracy"
            + (", the robust accuracy and the spread" if s.get("n_configs", 1) > 1 else "")
            + ", and the identified tiers' sizes (best tier first).</figcaption></figure>"
        )
    for fid, label, fn, caption in FIGURES:
        if fid in skipped:
            out.append(f'<p class="skipped" id="{fid}-skipped"><b>{e(label)}</b> is left out: {e(skipped[fid])}</p>')
            continue
        svg = fn(view, highlight)
        if not svg:  # a figure whose section the scope does not have (e.g. no margins)
            continue
        out.append(
            f'<figure id="{fid}" class="audit-figure">{svg}<figcaption><b>{e(label)}.</b> '
            f"{e(caption + scale_note + note)}</figcaption></figure>"
        )
    return "".join(out)


def submission_section(report: dict[str, Any]) -> str:
    """The gate's section: the same tables as the terminal and Markdown (``gate_tables``)."""
    parts = []
    for t in gate_tables(report["submission_audit"]):
        if kind_of(t) == "line":
            parts.append(f'<p class="state">{e(t.text)}</p>')
        else:
            parts.append(table_html(t))
    return f'<section id="submission"><h2>Submission gate</h2>{"".join(parts)}</section>'


def legend_value(v: Any) -> str:
    """A legend field as readable text: a dict one "key: value" per line, long text folded."""
    if v is None:
        return "-"
    if isinstance(v, dict):
        txt = "\n".join(
            f"{k}: {x if isinstance(x, str) else json.dumps(x, sort_keys=True, ensure_ascii=False)}"
            for k, x in sorted(v.items())
        )
    else:
        txt = v if isinstance(v, str) else json.dumps(v, sort_keys=True, ensure_ascii=False)
    return long_text(txt, 160, lines=True)


def legend_section(legend: dict[str, Any]) -> str:
    configs = legend.get("configs", [])
    core = ["key", "scoring", "template", "ordering", "permutation"]
    extra = sorted({k for c in configs for k in c} - set(core))
    rows = []
    for c in configs:
        cells = []
        for k in core + extra:
            v = c.get(k)
            cell = legend_value(v)
            if k == "key" and v == legend.get("reference"):
                cell = f"<b>{cell}</b> (reference)"
            cells.append(_td(cell, "legend-text" if k not in ("key", "scoring", "ordering") else ""))
        rows.append("".join(cells))
    grid_extra = {k: v for k, v in legend.items() if k not in ("configs", "format", "reference", "inferred")}
    items = "".join(
        f'<li>{e(k)}: <span class="legend-text">'
        f"{e(v if isinstance(v, str) else json.dumps(v, sort_keys=True, ensure_ascii=False))}</span></li>"
        for k, v in sorted(grid_extra.items())
    )
    note = "<p>The legend was inferred from the config keys (no grid.json).</p>" if legend.get("inferred") else ""
    return (
        f'<section id="legend"><h2>Legend: every harness configuration</h2>{note}'
        f"{'<ul>' + items + '</ul>' if items else ''}{_table(core + extra, rows, 'legend')}</section>"
    )


def render_html(report: dict[str, Any], max_bytes: int = MAX_BYTES) -> str:
    """The report as one HTML file within ``max_bytes`` where row caps can make it fit."""
    text = ""
    try:
        for cap in ROW_STEPS:
            _ROWS[0] = cap
            text = _render(report)
            if len(text.encode()) <= max_bytes:
                break
    finally:
        _ROWS[0] = None
        _LINKED[0] = frozenset()
    return text


_CODE_SPAN = re.compile(r"`([^`<>\n]+)`")


def code_spans(escaped: str) -> str:
    """Backticked spans of already escaped text as ``<code>`` (UX review M12: not literal backticks);
    what the span holds was escaped with the rest."""
    return _CODE_SPAN.sub(r"<code>\1</code>", escaped)


def next_section(report: dict[str, Any]) -> str:
    steps = next_steps(report)
    if not steps:
        return ""
    return (
        f'<section id="next"><h2>What to do next{e(steps_scope(report))}</h2><ul class="next">'
        + "".join(f"<li>{code_spans(long_text(x, 600))}</li>" for x in steps)
        + "</ul></section>"
    )


def _render(report: dict[str, Any]) -> str:
    rec = report.get("records", {})
    scopes = report.get("scopes", {})
    twins = twin_scopes(report)
    verdicts = reported_verdicts(report)  # a twin scope's own verdicts (a user check's) included
    counts = status_counts(verdicts)
    sha = rec.get("sha256")
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>Leaderboard audit</title>",
        f"<style>{STYLE}</style></head><body>",
        "<header><h1>Leaderboard audit</h1>",
        f"<p>Records {e(rec.get('path', ''))}{' (sha256 ' + e(sha[:12]) + ')' if sha else ''}: "
        f"{count(len(rec.get('models', [])), 'model')}, {count(rec.get('items') or 0, 'item')}, "
        f"{count(len(rec.get('configs', [])), 'config')}, "
        f"benchmarks {', '.join(e(b) for b in rec.get('benchmarks', []))}; seed {e(report.get('seed'))}, "
        f"{e(report.get('bootstrap'))} bootstrap resamples.</p>",
        f'<p class="state">{"The whole leaderboard, every check (the gate is below): " if "submission_audit" in report else ""}'
        f'<span class="pass">{counts["pass"]:,} pass</span>, <span class="warn">{counts["warn"]:,} '
        f'warn</span>, <span class="fail">{counts["fail"]:,} fail</span>'
        + (f", {counts['skip']:,} skipped" if counts["skip"] else "")
        + (f" (scope {e(', '.join(twins))} repeats pooled: one benchmark, counted once)" if twins else "")
        + ". Margin = signed distance from the value to the pass region (negative outside it).</p>"
        f'<p class="more" id="counts">{e(counts_note(report))}</p></header>',
        next_section(report),
    ]
    if "submission_audit" in report:
        out.append(submission_section(report))
    if scopes:
        first = "pooled" if "pooled" in scopes else next(iter(scopes))
        new = frozenset(report.get("submission_audit", {}).get("models", []))
        out.append(f'<section id="figures">{figures_section(first, scopes[first], new)}</section>')
    bad = _by_importance([v for v in verdicts if v["status"] in ("warn", "fail")])
    if bad:
        out.append(
            f'<section id="attention"><details open><summary>Verdicts needing attention ({len(bad):,}, every '
            f"scope)</summary>{verdicts_html(bad)}</details></section>"
        )
    first = "pooled" if "pooled" in scopes else next(iter(scopes), None)
    ordered = ([first] if first is not None else []) + [n for n in scopes if n != first]
    for j, name in enumerate(ordered):
        s = scopes[name]
        cap = _ROWS[0]
        board = [r["model"] for r in s.get("leaderboard") or []]
        _LINKED[0] = frozenset(board if cap is None else board[:cap]) if j == 0 else frozenset()
        head = f"Scope {e(name)}: {counts_text(s['verdicts'])}"
        if name in twins:
            own = twin_only(report, name)
            extra = (
                f"<p>Verdicts only this scope holds (checks of your own): {e(counts_text(own))}</p>{verdicts_html(own)}"
                if own
                else ""
            )
            out.append(
                f'<section class="scope" id="scope-{j}"><h2>{head}</h2><p>The only benchmark: its tables are '
                f"those of the {e(twins[name])} scope above.</p>{extra}</section>"
            )
        elif j == 0:
            out.append(f'<section class="scope" id="scope-{j}"><h2>{head}</h2>{scope_section(name, s)}</section>')
            out.append(models_section(s))
        else:
            out.append(
                f'<section class="scope" id="scope-{j}"><details><summary>{head}</summary>'
                f"{scope_section(name, s)}</details></section>"
            )
    if "legend" in report:
        out.append(legend_section(report["legend"]))
    out.append(f"<script>{SCRIPT}</script>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


__all__ = ["CSP", "render_html"]
