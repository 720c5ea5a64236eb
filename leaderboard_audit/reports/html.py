"""Self-contained HTML report: one file, no network, no script.

The paper's four figures are inline SVG (``reports.svg``), the styles are inline,
and a Content-Security-Policy (``default-src 'none'``) forbids every fetch, so the
file renders the same offline. Every string from the records (model names, config
keys, item text, legend values, messages) is HTML-escaped with ``e``.
"""

from __future__ import annotations

import json
from typing import Any

from .svg import FIGURES, esc as e
from ..checks import scope_tables
from .submission_text import gate_tables
from .tables import (
    kind_of,
    Table,
    counts_text,
    status_counts,
    evidence_heading,
    pair_label,
    verdicts_table,
)
from .text import num

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

STYLE = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1200px;padding:0 1em;color:#222;line-height:1.4}
h1{margin-bottom:.2em} h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:13px}
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
"""


def _status(st: str) -> str:
    return f'<span class="st {e(st)}">{e(st)}</span>'


def _n(x: Any, nd: int = 3) -> str:
    return f'<td class="n">{e(num(x, nd))}</td>'


def _td(html_cell: str, cls: str = "") -> str:
    return f"<td{f' class={chr(34)}{cls}{chr(34)}' if cls else ''}>{html_cell}</td>"


def _table(headers: list[str], rows: list[str], cls: str = "") -> str:
    head = "".join(f"<th>{e(h)}</th>" for h in headers)
    body = "".join(f"<tr>{r}</tr>" for r in rows)
    return f"<table{f' class={chr(34)}{cls}{chr(34)}' if cls else ''}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


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
    rows = ["".join(cell_html(c, t.digits.get(j, 3)) for j, c in enumerate(r)) for r in t.rows]
    note = f"<p>{e(t.note)}</p>" if t.note else ""
    return f"<h{level}>{e(t.title)}</h{level}>{note}" + _table(list(t.headers), rows, e(t.key))


def verdicts_html(verdicts: list[dict[str, Any]]) -> str:
    t = verdicts_table(verdicts)
    rows = ["".join(cell_html(c) if j != 5 else _td(e(c), "msg") for j, c in enumerate(r)) for r in t.rows]
    return _table(list(t.headers), rows, "verdicts")


def evidence_block(s: dict[str, Any]) -> str:
    parts = []
    for p in s["pairs"]:
        ev = p.get("fragile_evidence")
        if not ev:
            continue
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
    return "<h3>Evidence: the items that carry manufactured gaps</h3>" + "".join(parts)


def scope_section(name: str, s: dict[str, Any]) -> str:
    parts = [
        f"<p>{s['n_models']} models x {s['n_items']} items x {s['n_configs']} configs; reference "
        f"{e(s['reference'])}.</p>"
    ]
    lines = []
    for t in scope_tables(name, s):
        if kind_of(t) == "line":
            lines.append(f"<li>{e(t.text)}</li>")
        else:
            parts.append(table_html(t))
    if lines:
        parts.append("<ul>" + "".join(lines) + "</ul>")
    parts.append(evidence_block(s))
    parts.append(f"<h3>Verdicts</h3>{verdicts_html(s['verdicts'])}")
    return "".join(parts)


def figures_section(name: str, s: dict[str, Any], highlight: frozenset[str] = frozenset()) -> str:
    out = [f"<h2>Figures (scope {e(name)})</h2>"]
    note = (" Submitted model(s) (\u25b6, purple): " + ", ".join(sorted(highlight)) + ".") if highlight else ""
    for fid, label, fn, caption in FIGURES:
        svg = fn(s, highlight)
        if not svg:  # a figure whose section the scope does not have (e.g. no margins)
            continue
        out.append(
            f'<figure id="{fid}" class="audit-figure">{svg}<figcaption><b>{e(label)}.</b> '
            f"{e(caption + note)}</figcaption></figure>"
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


def legend_section(legend: dict[str, Any]) -> str:
    configs = legend.get("configs", [])
    core = ["key", "scoring", "template", "ordering", "permutation"]
    extra = sorted({k for c in configs for k in c} - set(core))
    rows = []
    for c in configs:
        cells = []
        for k in core + extra:
            v = c.get(k)
            txt = "-" if v is None else (v if isinstance(v, str) else json.dumps(v, sort_keys=True, ensure_ascii=False))
            cell = e(txt)
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


def render_html(report: dict[str, Any]) -> str:
    rec = report.get("records", {})
    scopes = report.get("scopes", {})
    verdicts = [v for s in scopes.values() for v in s.get("verdicts", [])]
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
        f"{len(rec.get('models', []))} models, {e(rec.get('items'))} items, {len(rec.get('configs', []))} configs, "
        f"benchmarks {', '.join(e(b) for b in rec.get('benchmarks', []))}; seed {e(report.get('seed'))}, "
        f"{e(report.get('bootstrap'))} bootstrap resamples.</p>",
        f'<p class="state">{"The whole leaderboard, every check (the gate is below): " if "submission_audit" in report else ""}'
        f'<span class="pass">{counts["pass"]} pass</span>, <span class="warn">{counts["warn"]} '
        f'warn</span>, <span class="fail">{counts["fail"]} fail</span>. Margin = signed distance from the value to '
        "the pass region (negative outside it).</p></header>",
    ]
    if "submission_audit" in report:
        out.append(submission_section(report))
    if scopes:
        first = "pooled" if "pooled" in scopes else next(iter(scopes))
        new = frozenset(report.get("submission_audit", {}).get("models", []))
        out.append(f'<section id="figures">{figures_section(first, scopes[first], new)}</section>')
    bad = sorted(
        (v for v in verdicts if v["status"] in ("warn", "fail")), key=lambda v: (v["status"] != "fail", v["id"])
    )
    if bad:
        out.append(
            f'<section id="attention"><details open><summary>Verdicts needing attention ({len(bad)}, every '
            f"scope)</summary>{verdicts_html(bad)}</details></section>"
        )
    for j, (name, s) in enumerate(scopes.items()):
        head = f"Scope {e(name)}: {counts_text(s['verdicts'])}"
        if j == 0:
            out.append(f'<section class="scope" id="scope-{j}"><h2>{head}</h2>{scope_section(name, s)}</section>')
        else:
            out.append(
                f'<section class="scope" id="scope-{j}"><details><summary>{head}</summary>'
                f"{scope_section(name, s)}</details></section>"
            )
    if "legend" in report:
        out.append(legend_section(report["legend"]))
    out.append("</body></html>")
    return "\n".join(out) + "\n"


__all__ = ["CSP", "render_html"]
