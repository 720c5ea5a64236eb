"""Markdown report (GitHub-flavoured; fits a job's ``$GITHUB_STEP_SUMMARY``).

Every string that comes from the records (model names, config keys, item text,
legend values, verdict messages that quote them) goes through ``md``: HTML
special characters become entities (GitHub renders raw HTML) and Markdown
punctuation, ``|`` included, is backslash-escaped, so a name cannot open a tag,
a link or a table column.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from ..checks import scope_tables
from .submission_text import COMMENT_BYTES, MAX_ROWS, _cut, gate_tables
from .tables import kind_of, Table, counts_text, status_counts, evidence_heading, pair_label, verdicts_table
from .text import num

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~^$-])")
STATUS = {"pass": "pass", "warn": "**WARN**", "fail": "**FAIL**"}
BENCH_DETAILS = True


def md(s: Any, width: int | None = None) -> str:
    """Untrusted text -> inert Markdown (one line)."""
    text = "".join(ch if ch >= " " and ch != "\x7f" else " " for ch in str(s))
    if width is not None and len(text) > width:
        text = text[: width - 1] + "…"
    return html.escape(_MD_SPECIAL.sub(r"\\\1", text), quote=True)


def _table(headers: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out + [""]


def _status(v: dict[str, Any]) -> str:
    return STATUS.get(v["status"], md(v["status"]))


def cell_md(c: Any, digits: int = 3) -> str:
    if kind_of(c) == "cell":
        if c.style == "status":
            return STATUS.get(c.text, md(c.text))
        if c.style == "strong":
            return f"**{md(c.text)}**"
        return md(c.text)
    if isinstance(c, str):
        return md(c)
    return num(c, digits)


def table_md(t: Table, level: int) -> list[str]:
    out = [f"{'#' * level} {md(t.title)}", ""]
    if t.note:
        out += [md(t.note), ""]
    rows = [[cell_md(c, t.digits.get(j, 3)) for j, c in enumerate(r)] for r in t.rows]
    return out + _table([md(h) for h in t.headers], rows)


def verdict_rows(verdicts: list[dict[str, Any]]) -> list[list[Any]]:
    return [[cell_md(c) for c in r] for r in verdicts_table(verdicts).rows]


def evidence_md(s: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for p in s["pairs"]:
        ev = p.get("fragile_evidence")
        if not ev:
            continue
        out.append(
            f"**{md(pair_label(p['higher'], p['lower']))}** ({evidence_heading(p)}): {ev['higher_right']} "
            f"fragile items "
            f"favour the higher model and {ev['lower_right']} the lower under the reference (net "
            f"{ev['net_items']} of the {p['gap_items']}-item gap); showing {ev['shown']}."
        )
        out.append("")
        rows = [
            [
                md(i["item_id"]),
                "higher" if i["favours"] == "higher" else "lower",
                f"{i['higher_configs']}/{i['configs']}",
                f"{i['lower_configs']}/{i['configs']}",
                md(i["question"], 200) if i.get("question") else "-",
            ]
            for i in ev["items"]
        ]
        out += _table(["item", "right under reference for", "higher right in", "lower right in", "question"], rows)
    return out


def scope_md(name: str, s: dict[str, Any], level: int = 2) -> list[str]:
    h = "#" * level
    out = [
        f"{h} Scope {md(name)}: {s['n_models']} models x {s['n_items']} items x {s['n_configs']} configs "
        f"(reference {md(s['reference'])})",
        "",
    ]
    lines = []
    for t in scope_tables(name, s):
        if kind_of(t) == "line":
            lines.append(f"- {md(t.text)}")
        else:
            out += table_md(t, level + 1)
    if lines:
        out += lines + [""]
    ev = evidence_md(s)
    if ev:
        out += [f"{h}# Evidence: the items that carry manufactured gaps", ""] + ev
    out += [f"{h}# Verdicts", ""] + _table(
        ["status", "check", "value", "threshold", "margin", "message"], verdict_rows(s["verdicts"])
    )
    return out


def submission_md(report: dict[str, Any]) -> list[str]:
    """The gate's section: the same tables as the terminal and HTML (``gate_tables``)."""
    return gate_markdown(report).splitlines() + [""]


def gate_markdown(report: dict[str, Any], max_bytes: int = COMMENT_BYTES, level: int = 2) -> str:
    """The gate alone as Markdown (a pull-request comment): at most ``max_bytes`` bytes
    (rows are capped, halving until it fits; what was left out is counted)."""
    sub = report["submission_audit"]
    rows = MAX_ROWS
    while True:
        out = [f"{'#' * level} Submission gate", ""]
        for t in gate_tables(sub, rows):
            if kind_of(t) == "line":
                out += [md(t.text), ""]
            else:
                out += table_md(t, level + 1)
        text = "\n".join(out).rstrip() + "\n"
        if len(text.encode()) <= max_bytes or rows == 0:
            break
        rows //= 2
    if len(text.encode()) > max_bytes:  # names so long that even the headline does not fit
        head = md(_cut(gate_tables(sub, 0)[0].text, max_bytes // 8))
        text = f"{'#' * level} Submission gate\n\n{head}\n\n(tables left out to fit {max_bytes} bytes)\n"
    return text


def legend_md(legend: dict[str, Any]) -> list[str]:
    configs = legend.get("configs", [])
    core = ["key", "scoring", "template", "ordering", "permutation"]
    extra = sorted({k for c in configs for k in c} - set(core))
    rows = []
    for c in configs:
        cells = []
        for k in core + extra:
            v = c.get(k)
            if v is None:
                cells.append("-")
            elif isinstance(v, str):
                cells.append(md(v))
            else:
                cells.append(md(json.dumps(v, sort_keys=True, ensure_ascii=False)))
        if c.get("key") == legend.get("reference"):
            cells[0] = f"**{cells[0]}** (reference)"
        rows.append(cells)
    out = ["## Legend: every harness configuration", ""]
    grid_extra = {k: v for k, v in legend.items() if k not in ("configs", "format", "reference", "inferred")}
    if legend.get("inferred"):
        out += ["The legend was inferred from the config keys (no grid.json).", ""]
    for k, v in sorted(grid_extra.items()):
        out.append(f"- {md(k)}: {md(v if isinstance(v, str) else json.dumps(v, sort_keys=True, ensure_ascii=False))}")
    if grid_extra:
        out.append("")
    return out + _table([md(k) for k in core + extra], rows)


# GitHub refuses a step summary over 1 MiB: past this, benchmark scopes are left to the HTML/JSON.
MAX_BYTES = 900_000


def render_markdown(report: dict[str, Any], max_bytes: int | None = MAX_BYTES) -> str:
    """The report as GitHub-flavoured Markdown; over ``max_bytes`` the per-benchmark scopes
    are dropped (and the text says so) so it still fits a step summary."""
    text = _render(report, all_scopes=True)
    if max_bytes is not None and len(text.encode()) > max_bytes and len(report.get("scopes", {})) > 1:
        text = _render(report, all_scopes=False)
    return text


def _render(report: dict[str, Any], all_scopes: bool) -> str:
    rec = report.get("records", {})
    verdicts = [v for s in report.get("scopes", {}).values() for v in s.get("verdicts", [])]
    counts = status_counts(verdicts)
    sha = rec.get("sha256")
    out = [
        "# Leaderboard audit",
        "",
        f"Records {md(rec.get('path', ''))}{' (sha256 ' + md(sha[:12]) + ')' if sha else ''}: "
        f"{len(rec.get('models', []))} models, {rec.get('items')} items, {len(rec.get('configs', []))} configs, "
        f"benchmarks {', '.join(md(b) for b in rec.get('benchmarks', []))}; seed {report.get('seed')}, "
        f"{report.get('bootstrap')} bootstrap resamples.",
        "",
        f"{'The whole leaderboard, every check (the gate is below): ' if 'submission_audit' in report else ''}"
        f"**{counts['pass']} pass, {counts['warn']} warn, {counts['fail']} fail** "
        "(margin = signed distance from the value to the pass region: negative outside it).",
        "",
    ]
    if "submission_audit" in report:
        out += submission_md(report)
    bad = sorted(
        (v for v in verdicts if v["status"] in ("warn", "fail")), key=lambda v: (v["status"] != "fail", v["id"])
    )
    if bad:
        out += ["## Verdicts needing attention", ""]
        out += _table(["status", "check", "value", "threshold", "margin", "message"], verdict_rows(bad))
    scopes = report.get("scopes", {})
    for j, (name, s) in enumerate(scopes.items()):
        if j > 0 and not all_scopes:
            out += [
                f"Scope {md(name)}: {counts_of(s)} (details left out to fit a step summary: see the HTML or "
                "JSON report)",
                "",
            ]
            continue
        if j == 0 or not BENCH_DETAILS:
            out += scope_md(name, s)
        else:
            out += [f"<details><summary>Scope {html.escape(str(name))}: {counts_of(s)}</summary>", ""]
            out += scope_md(name, s, level=3) + ["</details>", ""]
    if "legend" in report:
        out += legend_md(report["legend"])
    return "\n".join(out).rstrip() + "\n"


def counts_of(s: dict[str, Any]) -> str:
    return counts_text(s.get("verdicts", []))


__all__ = ["gate_markdown", "md", "render_markdown"]
