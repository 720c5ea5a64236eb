"""Terminal summary (controller only): readable at any scale, honouring the terminal width.

``--audit-summary short`` (default): at most ~60 lines however many models: the
pooled leaderboard's top rows, counts per check and status, the worst offenders per
check by margin, the identified tiers when present, and where the full report is.
``full``: every registered check's tables per scope and every fail/warn.
"""

from __future__ import annotations

import textwrap
from typing import Any

import tabulate as _tabulate_module
from tabulate import tabulate as _tabulate

from ..checks import registry
from .tables import kind_of, STATUSES, Table, counts_text, status_counts
from .text import ci_text, clean, num, signed

WIDTH = 100
TOP_ROWS = 10
OFFENDERS = 10
SHORT_LINES = 60


def tabulate(rows: Any, headers: Any = (), tablefmt: str = "simple", **kw: Any) -> str:
    """tabulate without its 2-space minimum header padding (keeps tables narrow)."""
    saved = _tabulate_module.MIN_PADDING
    _tabulate_module.MIN_PADDING = 0
    try:
        return _tabulate(rows, headers=headers, tablefmt=tablefmt, **kw)
    finally:
        _tabulate_module.MIN_PADDING = saved


def cell_text(c: Any, width: int | None = None, digits: int = 3) -> str:
    if kind_of(c) == "cell":
        return clean(c.text.upper() if c.style == "status" and c.text in ("warn", "fail") else c.text, width)
    if isinstance(c, str):
        return clean(c, width)
    return num(c, digits)


def render_table(t: Table, max_rows: int | None = None) -> str:
    rows = t.rows if max_rows is None else t.rows[:max_rows]
    body = [[cell_text(c, t.widths.get(j), t.digits.get(j, 3)) for j, c in enumerate(r)] for r in rows]
    text = tabulate(body, headers=[clean(h) for h in t.headers], tablefmt="simple", disable_numparse=True)
    if max_rows is not None and len(t.rows) > max_rows:
        text += f"\n... {len(t.rows) - max_rows} more rows (--audit-summary full, or the HTML/JSON report)"
    return text


def evidence_block(v: dict[str, Any]) -> str:
    """A failed check's message: the verdict line, then the numbers behind it (all escaped)."""
    head = (
        f"{clean(v['id'])}: {v['status'].upper()}  value {num(v['value'])}  threshold "
        f"{num(v['threshold'])}  margin {signed(v['margin'])}"
    )
    rows = []
    for k, val in (v.get("evidence") or {}).items():
        if isinstance(val, list) and val and isinstance(val[0], (int, float)) and len(val) == 2:
            val = ci_text(val)
        elif isinstance(val, dict):
            val = ", ".join(
                f"{clean(a, 18)}={num(b) if not isinstance(b, (list, dict)) else clean(b)}" for a, b in val.items()
            )
        elif isinstance(val, list):
            val = ", ".join(
                clean(x)
                if not isinstance(x, dict)
                else f"{clean(x.get('config'))}: {clean('/'.join(x.get('winners', [])))} by {x.get('margin_items')}"
                for x in val
            )
        else:
            val = num(val) if isinstance(val, (int, float, type(None))) else clean(val)
        rows.append((clean(k), clean(val, 160)))
    table = tabulate(rows, tablefmt="plain", disable_numparse=True) if rows else ""
    return "\n".join([head, clean(v["message"]), table]).rstrip()


def scope_text(name: str, s: dict[str, Any]) -> list[str]:
    out = [
        f"--- {clean(name)}: {s['n_models']} models x {s['n_items']} items x {s['n_configs']} configs "
        f"(reference {clean(s['reference'])}) ---",
        "",
    ]
    lines = []
    for check in registry().values():
        for t in check.tables(name, s):
            if kind_of(t) == "line":
                lines.append(clean(t.text))
            elif t.detail == "short" or name == "pooled":
                out += [render_table(t), ""]
    return out + lines + [""]


def _header(report: dict[str, Any]) -> list[str]:
    rec = report["records"]
    lines = [
        f"records {clean(rec['path'])}: {len(rec['models'])} models, {rec['items']} items, "
        f"{len(rec['configs'])} configs, benchmarks {', '.join(clean(b) for b in rec['benchmarks'])}; "
        f"seed {report['seed']}, {report['bootstrap']} resamples"
    ]
    return lines + [clean(n) for n in [*rec.get("layout_notes", []), *rec.get("notes", [])]]


def _offender_line(v: dict[str, Any], width: int) -> str:
    head = f"{v['status'].upper():4} {clean(v['id'], 50)}  margin {signed(v['margin'])}  "
    return head + clean(v["message"], max(20, width - len(head)))


def _tiers_line(s: dict[str, Any], width: int) -> str | None:
    ident = s.get("identified")
    if not ident or not ident.get("tiers"):
        return None
    tiers = " > ".join("{" + ", ".join(clean(m, 24) for m in t) + "}" for t in ident["tiers"])
    winner = ident.get("robust_winner")
    text = f"identified order (tiers): {tiers}; robust winner: {clean(winner) if winner else 'none'}"
    return text if len(text) <= 3 * width else text[: 3 * width - 1] + "…"


def render_short(report: dict[str, Any], verdicts: list[dict[str, Any]], width: int = WIDTH) -> list[str]:
    lines = _header(report)
    scopes = report["scopes"]
    first = next(iter(scopes), None)
    if first is not None:
        s = scopes[first]
        lines += [
            "",
            f"--- {clean(first)}: {s['n_models']} models x {s['n_items']} items x {s['n_configs']} "
            f"configs (reference {clean(s['reference'])}) ---",
        ]
        board = (
            next((t for t in registry()["band"].tables(first, s) if kind_of(t) == "table"), None)
            if "leaderboard" in s
            else None
        )
        if board is not None:
            lines += render_table(board, max_rows=TOP_ROWS).splitlines()
        tiers = _tiers_line(s, width)
        if tiers:
            lines.append(tiers)
        lines += [
            clean(t.text)
            for check in registry().values()
            for t in check.tables(first, s)
            if kind_of(t) == "line" and t.detail == "summary"
        ]
    lines += ["", "checks (all scopes):"]
    by_check: dict[str, list[dict[str, Any]]] = {}
    for v in verdicts:
        by_check.setdefault(v["check"], []).append(v)
    order = list(registry()) + sorted(set(by_check) - set(registry()))
    for name in order:
        if name in by_check:
            lines.append(f"  {clean(name):13} {counts_text(by_check[name])}")
    bad_checks = [n for n in order if n in by_check and any(v["status"] in ("fail", "warn") for v in by_check[n])]
    if bad_checks:
        budget = max(OFFENDERS, SHORT_LINES - len(lines) - 4)
        per = max(1, min(OFFENDERS, budget // len(bad_checks)))
        lines += ["", f"worst offenders (up to {per} per check, by margin = signed distance to the pass region):"]
        for name in bad_checks:
            bad = sorted(
                (v for v in by_check[name] if v["status"] in ("fail", "warn")),
                key=lambda v: (v["status"] != "fail", v["margin"] if v["margin"] is not None else 0.0, v["id"]),
            )
            lines += [_offender_line(v, width) for v in bad[:per]]
            if len(bad) > per:
                lines.append(f"     ... {len(bad) - per} more {clean(name)} fail/warn")
    lines.append("full tables: --audit-summary full; everything: --audit-report/--audit-html/--audit-markdown")
    return lines


def render_summary(
    report: dict[str, Any], verdicts: list[dict[str, Any]], *, detail: str = "short", width: int = WIDTH
) -> str:
    width = max(60, width)
    if detail == "full":
        lines = _header(report) + [""]
        for name, s in report["scopes"].items():
            lines += scope_text(name, s)
        bad = sorted(
            (v for v in verdicts if v["status"] in ("fail", "warn")), key=lambda v: (v["status"] != "fail", v["id"])
        )
        if bad:
            lines.append("verdicts needing attention (margin = signed distance to the pass region):")
            for v in bad:
                lines.append(f"{v['status'].upper():4} {clean(v['id'], 60)}  margin {signed(v['margin'])}")
                lines.append("     " + clean(v["message"]))
    else:
        lines = render_short(report, verdicts, width)
    c = status_counts(verdicts)
    lines.append(
        "audit: "
        + ", ".join(f"{c[st]} {st if st != 'skip' else 'skipped'}" for st in STATUSES if st != "skip" or c[st])
    )
    return "\n".join(wrap_line(line, width) for line in lines)


def wrap_line(line: str, width: int) -> str:
    """Prose lines wrap at ``width`` with a hanging indent; table rows are left alone."""
    if len(line) <= width or "  " in line.strip():
        return line
    return textwrap.fill(line, width=width, subsequent_indent="    ", break_on_hyphens=False)


__all__ = ["evidence_block", "render_summary", "render_table", "tabulate"]
