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
from ..checks.tables import kind_of, narrow_board, STATUSES, Table, counts_text, status_counts
from .next_steps import next_steps, twin_scopes
from .twins import shown as shown_verdicts
from .twins import steps_scope
from .text import ci_text, clean, num, signed
from .words import count

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
        more = len(t.rows) - max_rows
        text += f"\n... {count(more, 'more row')} (every row is in the reports; the closing line says how)"
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
                f"{clean(a, 18)}={num(b) if isinstance(b, (int, float, type(None))) else clean(b)}"
                for a, b in val.items()
            )
        elif isinstance(val, list):
            val = ", ".join(_list_entry(x) for x in val) or "-"
        else:
            val = num(val) if isinstance(val, (int, float, type(None))) else clean(val)
        rows.append((clean(k), clean(val, 160)))
    table = plain_pairs(rows) if rows else ""
    return "\n".join([head, clean(v["message"]), table]).rstrip()


def plain_pairs(rows: list[tuple[str, str]]) -> str:
    """``tabulate(rows, tablefmt="plain")`` of (key, value) rows, without tabulate for ASCII
    text (each failing audit test builds one: ~1.6 ms through tabulate, 7,400 times on a
    1,000-model board): cells stripped, the keys padded, each line right-stripped."""
    if not all(a.isascii() and a.isprintable() and b.isascii() and b.isprintable() for a, b in rows):
        return tabulate(rows, tablefmt="plain", disable_numparse=True)
    cells = [(a.strip(), b.strip()) for a, b in rows]
    width = max(len(a) for a, _ in cells)
    return "\n".join(f"{a.ljust(width)}  {b}".rstrip() for a, b in cells)


def _list_entry(x: Any) -> str:
    """One entry of an evidence list: a champion win as "config: winners by N", any other
    dict as its fields (never "None: by None"), a value as itself."""
    if not isinstance(x, dict):
        return clean(x)
    if "config" in x and "winners" in x:
        # the lead over the reference winner the verdict reads (review T14), else the margin over the runner-up
        lead = x.get("lead_items")
        if lead is not None:
            return f"{clean(x['config'])}: {clean('/'.join(x['winners']))} +{lead} over the reference winner"
        return f"{clean(x['config'])}: {clean('/'.join(x['winners']))} (ties the reference winner; by {x.get('margin_items')} over the runner-up)"
    if "config" in x and "model" in x and "lead_items" in x:  # a significant challenge (v4)
        return (
            f"{clean(x['config'])}: {clean(x['model'])} +{x['lead_items']} over {clean(x.get('reference_winner', ''))}"
            f" ({x.get('wins')} v {x.get('losses')}, Holm p "
            f"{'n/a' if x.get('p_holm') is None else format(x['p_holm'], '.2g')})"
        )
    if {"id", "before", "after"} <= set(x):
        return f"{clean(x['id'])} {clean(x['before'])} -> {clean(x['after'])}"
    return " ".join(f"{clean(k)}={clean(v if not isinstance(v, float) else num(v))}" for k, v in x.items())


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
        f"records {clean(rec['path'])}: {count(len(rec['models']), 'model')}, {count(rec['items'], 'item')}, "
        f"{count(len(rec['configs']), 'config')}, benchmarks {', '.join(clean(b) for b in rec['benchmarks'])}; "
        f"seed {report['seed']}, {report['bootstrap']} resamples"
    ]
    return lines + [clean(n) for n in [*rec.get("layout_notes", []), *rec.get("notes", [])]]


def _offender_line(v: dict[str, Any], width: int) -> str:
    """One fail/warn: the check id whole, then as much of the message as the width leaves."""
    head = f"{v['status'].upper():4} {clean(v['id'])}  margin {signed(v['margin'])}"
    room = width - len(head) - 2
    return head if room < 12 else head + "  " + clean(v["message"], room)


def fit_columns(t: Table, width: int, keep: int = 3) -> tuple[Table, list[str]]:
    """``t`` less its rightmost columns (never the first ``keep``: rank, model, score) until its
    rows fit ``width`` characters (UX review M6), and the headers it left out."""
    from dataclasses import replace

    n = len(t.headers)
    while n > keep:
        cut = replace(
            t,
            headers=t.headers[:n],
            rows=[r[:n] for r in t.rows],
            widths={j: w for j, w in t.widths.items() if j < n},
            digits={j: d for j, d in t.digits.items() if j < n},
        )
        if max(len(line) for line in render_table(cut).splitlines()) <= width:
            return cut, t.headers[n:]
        n -= 1
    cut = replace(t, headers=t.headers[:keep], rows=[r[:keep] for r in t.rows])
    return cut, t.headers[keep:]


def _board_lines(report: dict[str, Any], rows: int, width: int | None = None) -> list[str]:
    scopes = report["scopes"]
    first = "pooled" if "pooled" in scopes else next(iter(scopes), None)
    if first is None:
        return []
    s = scopes[first]
    lines = [
        f"--- {clean(first)}: {count(s['n_models'], 'model')} x {count(s['n_items'], 'item')} x "
        f"{count(s['n_configs'], 'config')} (reference {clean(s['reference'])}) ---",
    ]
    board = (
        next((t for t in registry()["band"].tables(first, s) if kind_of(t) == "table"), None)
        if "leaderboard" in s
        else None
    )
    if board is not None and rows > 0:
        board = narrow_board(board, s["n_configs"])
        left: list[str] = []
        if width is not None:
            board, left = fit_columns(
                Table(
                    board.key,
                    board.title,
                    board.headers,
                    board.rows[:rows],
                    board.note,
                    board.detail,
                    board.widths,
                    board.digits,
                ),
                width,
            )
        lines += render_table(board, max_rows=rows).splitlines()
        if left:
            lines.append(
                f"(columns left out at this width: {', '.join(left)}; --summary full or the reports have them)"
            )
    elif board is not None:  # never silently (UX review 2026-12-04 #8); in the heading's place, no extra line
        lines[0] = (
            f"--- {clean(first)}: {count(s['n_models'], 'model')} x {count(s['n_items'], 'item')} x "
            f"{count(s['n_configs'], 'config')}; the board's rows are left out at this width (full tables, reports) ---"
        )
    lines += [
        clean(t.text)
        for check in registry().values()
        for t in check.tables(first, s)
        if kind_of(t) == "line" and t.detail == "summary"
    ]
    return lines


def _wrapped(lines: list[str], width: int) -> list[str]:
    return [w for line in lines for w in wrap_line(line, width).splitlines()]


def render_short(
    report: dict[str, Any],
    verdicts: list[dict[str, Any]],
    width: int = WIDTH,
    hint: str | None = None,
    reserve: int = 0,
) -> list[str]:
    """At most ``SHORT_LINES`` lines (after wrapping at ``width``): what to do next first, then the
    board's top rows, the counts per check and the worst offenders, each id whole."""
    head = _wrapped(_header(report), width)
    steps = next_steps(report)
    title = f"what to do next{clean(steps_scope(report))}:"
    todo = _wrapped([title, *(f"  - {clean(x)}" for x in steps)], width) if steps else []
    twins = twin_scopes(report)
    shown = shown_verdicts(report, verdicts)  # a twin scope's own verdicts (a user check's) kept
    by_check: dict[str, list[dict[str, Any]]] = {}
    for v in shown:
        by_check.setdefault(v["check"], []).append(v)
    order = list(registry()) + sorted(set(by_check) - set(registry()))
    checks = ["", "checks (" + ("pooled = " + ", ".join(twins) + ", one benchmark" if twins else "all scopes") + "):"]
    checks += [f"  {clean(name):13} {counts_text(by_check[name])}" for name in order if name in by_check]
    bad_checks = [n for n in order if n in by_check and any(v["status"] in ("fail", "warn") for v in by_check[n])]
    tail = _wrapped([FULL_HINT if hint is None else hint], width)
    # +1: the closing "audit:" line; reserve: lines the caller prints after it (pytest's counts line)
    fixed = len(head) + len(todo) + len(checks) + len(tail) + 1 + reserve
    for board_rows, per in ((TOP_ROWS, OFFENDERS), (5, 3), (5, 1), (3, 1), (0, 1), (0, 0)):
        board = _wrapped(_board_lines(report, board_rows, width), width)  # rows 0: the summary lines alone
        offenders = _offenders(by_check, bad_checks, per, width) if per else []
        if fixed + len(board) + 1 + len(offenders) <= SHORT_LINES:
            break
    lines = head + todo + ([""] + board if board else []) + checks + offenders
    if len(lines) + len(tail) + 1 + reserve > SHORT_LINES:  # very long names or notes: cut, never past the budget
        lines = lines[: SHORT_LINES - len(tail) - 2 - reserve] + [
            "... (cut to fit; the JSON/HTML report holds everything)"
        ]
    return lines + tail


def _offenders(by_check: dict[str, list[dict[str, Any]]], bad_checks: list[str], per: int, width: int) -> list[str]:
    out = _wrapped(
        ["", f"worst offenders (up to {per} per check, by margin = signed distance to the pass region):"], width
    )
    for name in bad_checks:
        bad = sorted(
            (v for v in by_check[name] if v["status"] in ("fail", "warn")),
            key=lambda v: (v["status"] != "fail", v["margin"] if v["margin"] is not None else 0.0, v["id"]),
        )
        out += [_offender_line(v, width) for v in bad[:per]]
        if len(bad) > per:
            out.append(f"     ... {len(bad) - per:,} more {clean(name)} fail/warn")
    return out


FULL_HINT = (
    "full tables: --audit-summary full; everything: --audit-report/--audit-html/--audit-markdown, "
    "a publishable board: --audit-leaderboard"
)
CLI_HINT = "everything: --json/--html/--markdown; a publishable board: --leaderboard PATH (.md, .csv, .html)"


def cli_hint(given: dict[str, bool]) -> str:
    """The CLI's closing line: only the outputs not asked for (``given``: flag -> asked)."""
    missing = [f for f in ("--json", "--html", "--markdown") if not given.get(f)]
    parts = [f"everything: {'/'.join(missing)}"] if missing else []
    if not given.get("--leaderboard"):
        parts.append("a publishable board: --leaderboard PATH (.md, .csv, .html)")
    return "; ".join(parts) or "every report was asked for: the 'wrote' lines below name the files"


def render_summary(
    report: dict[str, Any],
    verdicts: list[dict[str, Any]],
    *,
    detail: str = "short",
    width: int = WIDTH,
    hint: str | None = None,
    trailer: list[str] | None = None,
) -> str:
    """The summary; ``hint``: the closing line on where the rest is (default: pytest's options);
    ``trailer``: lines after the "audit:" line (pytest's counts line), inside the short budget."""
    width = max(60, width)
    after = _wrapped(list(trailer or []), width)
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
                lines.append(f"{v['status'].upper():4} {clean(v['id'])}  margin {signed(v['margin'])}")
                lines.append("     " + clean(v["message"]))
    else:
        lines = render_short(report, verdicts, width, hint, reserve=len(after))
    c = status_counts(verdicts)
    lines.append(
        "audit: "
        + ", ".join(f"{c[st]:,} {st if st != 'skip' else 'skipped'}" for st in STATUSES if st != "skip" or c[st])
    )
    return "\n".join([*(wrap_line(line, width) for line in lines), *after])


def counts_line(
    report: dict[str, Any], tests: dict[str, int], multi: int, judged: list[dict[str, Any]], unjudged: str = "-k/-m"
) -> str:
    """One line relating pytest's counts (tests by outcome), the audit line's (the verdicts those
    tests judged) and the HTML/Markdown headers' (every verdict of the report, a one-benchmark
    twin scope once)."""
    twins = twin_scopes(report)
    n_tests = sum(tests.values())
    outcomes = ", ".join(
        f"{tests[k]:,} {k}" for k in ("failed", "passed", "warn", "xfailed", "skipped") if tests.get(k)
    )
    text = f"counts: pytest's {count(n_tests, 'audit test')} ({outcomes}"
    glossary = ["warn = passed with a warning"] if tests.get("warn") else []
    if tests.get("xfailed"):
        glossary.append("xfailed = a fail the newcomer did not create (gate context)")
    text += f"; {'; '.join(glossary)})" if glossary else ")"
    if multi:
        pairs = "; ".join(f"each {b} test also judges {a}'s identical verdict" for b, a in twins.items())
        text += f" judge the audit line's {count(len(judged), 'verdict')} ({count(multi, 'test')} judge two"
        text += f": {pairs})" if pairs else ")"
    else:
        text += f" are the audit line's {count(len(judged), 'verdict')}, one each"
    kept = [n for n in report.get("scopes", {}) if n not in twins]
    every = shown_verdicts(report, (v for s in report.get("scopes", {}).values() for v in s.get("verdicts", [])))
    text += (
        f"; the HTML and Markdown headers count the report's {count(len(every), 'verdict')} over "
        f"{count(len(kept), 'scope')}"
    )
    notes = [f"{', '.join(twins)} repeats pooled: counted once"] if twins else []
    judged_ids = {v["id"] for v in judged}
    not_run = sum(v["id"] not in judged_ids for v in every)
    if not_run:
        notes.append(f"{not_run:,} judged by no test run here ({unjudged})")
    notes.append("each scope heading its own")
    return text + f" ({'; '.join(notes)})."


def wrap_line(line: str, width: int) -> str:
    """Prose lines wrap at ``width`` with a hanging indent; table rows are left alone."""
    if len(line) <= width or "  " in line.strip():
        return line
    return textwrap.fill(line, width=width, subsequent_indent="    ", break_on_hyphens=False)


__all__ = ["evidence_block", "render_summary", "render_table", "tabulate"]
