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

from .submission_text import COMMENT_BYTES, MAX_ROWS, _cut, gate_tables
from .sections import scope_parts
from .next_steps import counts_note, next_steps, twin_scopes
from .twins import reported_verdicts, steps_scope, twin_only
from .words import count
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
from .text import is_format_char, num

# Markdown punctuation that acts anywhere in a line (UX review M11: nothing else is escaped, so
# the raw file reads as text): code spans, emphasis, links and images, tables, strikethrough,
# GitHub math, and '#' before a word (GitHub's issue references, '#12')
_MD_INLINE = re.compile(r"([\\`*\[\]|~$])|#(?=[0-9A-Za-z])")
# '_' opens or closes emphasis only at a word's edge: 'bt_ties_dropped' stays as it is
_MD_UNDERSCORES = re.compile(r"_+")
# what starts a block at a line's start: a list item, a heading, a quote, a setext underline
_MD_LINE_START = re.compile(r"^(\s*)(?:([-+]|#+)(?=\s|$)|(=+)\s*$|(\d{1,9})([.)])(?=\s|$))")
STATUS = {"pass": "pass", "warn": "**WARN**", "fail": "**FAIL**"}
BENCH_DETAILS = True


def md(s: Any, width: int | None = None) -> str:
    """Untrusted text -> inert Markdown (one line).

    Only what Markdown (GitHub's) would act on is escaped, where it would act (UX review M11):
    ``\\ ` * [ ] | ~ $`` anywhere, ``_`` at a word's edge, ``#`` before a word, and a leading
    ``-``/``+``/``=``/``#``/``1.`` that would start a block; ``<``, ``>`` and ``&`` become
    entities (GitHub renders raw HTML) and ``@`` too (mentions), never an apostrophe or a quote."""
    raw = str(s) if width is None else str(s)[: width + 1]  # cut first: a message can be 100,000+ characters
    text = "".join((repr(ch)[1:-1] if is_format_char(ch) else ch) if ch >= " " and ch != "\x7f" else " " for ch in raw)
    if width is not None and len(text) > width:
        text = text[: width - 1] + "…"
    text = _MD_INLINE.sub(lambda m: "\\" + m.group(0), text)
    text = _MD_UNDERSCORES.sub(lambda m: _underscores(text, m), text)
    text = _MD_LINE_START.sub(_escape_block_start, text, count=1)
    # '@' as an entity: GitHub turns '@user' and '@org/team' into mentions (notifications from a
    # bot's comment), and an entity renders as '@' without one (C09)
    return html.escape(text, quote=False).replace("@", "&#64;")


def _escape_block_start(m: re.Match[str]) -> str:
    if m.group(2) or m.group(3):
        return m.group(1) + "".join("\\" + ch for ch in m.group(2) or m.group(3))
    return f"{m.group(1)}{m.group(4)}\\{m.group(5)}"


def _underscores(text: str, m: re.Match[str]) -> str:
    """A run of ``_`` between two letters or digits cannot open or close emphasis; any other is escaped."""
    before = text[m.start() - 1] if m.start() else " "
    after = text[m.end()] if m.end() < len(text) else " "
    if before.isalnum() and after.isalnum():
        return m.group(0)
    return "\\_" * len(m.group(0))


def md_html(s: Any, width: int | None = None) -> str:
    """Untrusted text inside a raw HTML block (``<summary>``): entities only, Markdown is not parsed there."""
    raw = str(s) if width is None else clean_cut(str(s), width)
    text = "".join((repr(ch)[1:-1] if is_format_char(ch) else ch) if ch >= " " and ch != "\x7f" else " " for ch in raw)
    return html.escape(text, quote=False).replace("@", "&#64;")


def md_code(s: Any) -> str:
    """``s`` as a code span (inert: Markdown and HTML are not parsed inside one); a span that
    holds a backtick, ``|`` (a table cell), ``@``, ``<``, ``>``, ``&`` or a control character falls
    back to ``md`` (entities: the raw text never holds a tag or a mention)."""
    text = str(s)
    if (
        any(ch in "`|@<>&" for ch in text)
        or any(ch < " " or ch == "\x7f" or is_format_char(ch) for ch in text)
        or not text.strip()
    ):
        return md(text)
    return f"`{text}`"


def md_with_code(s: Any, width: int | None = None) -> str:
    """``md`` of a sentence whose backticked spans (`leaderboard-audit collect SPEC.toml`) stay code spans (M12)."""
    text = str(s) if width is None else clean_cut(str(s), width)
    parts = re.split(r"`([^`\n]+)`", text)
    return "".join(_span(p) if j % 2 else (md(p) if j == 0 else _md_mid(p)) for j, p in enumerate(parts))


def _span(s: str) -> str:
    """A backticked span: a code span, or (``md_code`` refused it) its text between escaped backticks."""
    code = md_code(s)
    return code if code.startswith("`") else f"\\`{_md_mid(s)}\\`"


def _md_mid(s: str) -> str:
    """``md`` of text that does not start a line (nothing at its start can open a block)."""
    return md("." + s)[1:] if s else ""


def clean_cut(s: str, width: int) -> str:
    return s if len(s) <= width else s[: width - 1] + "…"


def _table(headers: list[str], rows: list[list[Any]], max_rows: int | None = None) -> list[str]:
    shown = rows if max_rows is None else rows[:max_rows]
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(_in_cell(str(c)) for c in r) + " |" for r in shown]
    if len(shown) < len(rows):
        out += ["", f"{len(rows) - len(shown):,} more rows left out to fit the size budget: {ELSEWHERE}."]
    return out + [""]


def _in_cell(c: str) -> str:
    """A table cell cannot start a block: a lone '-' (a missing value) needs no escape there."""
    return "-" if c == "\\-" else c


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


def table_md(t: Table, level: int, max_rows: int | None = None) -> list[str]:
    out = [f"{'#' * level} {md(t.title)}", ""]
    if t.note:
        out += [md(t.note), ""]
    shown = t.rows if max_rows is None else t.rows[:max_rows]
    rows = [[cell_md(c, t.digits.get(j, 3)) for j, c in enumerate(r)] for r in shown]
    body = _table([md(h) for h in t.headers], rows)
    if len(shown) < len(t.rows):
        body.insert(-1, "")
        body.insert(-1, f"{len(t.rows) - len(shown):,} more rows left out to fit the size budget: {ELSEWHERE}.")
    return out + body


MESSAGE_CHARS = 400
LINE_CHARS = 1000


def verdict_rows(verdicts: list[dict[str, Any]], max_rows: int | None = None) -> list[list[Any]]:
    """Rows of the verdicts table; a message over ``MESSAGE_CHARS`` is cut (the JSON has it whole).
    Only the rows shown are formatted; the rest are counted by ``_table`` (empty placeholders)."""
    shown = verdicts if max_rows is None else verdicts[:max_rows]
    rows: list[list[Any]] = []
    for r in verdicts_table(shown).rows:
        cells = [cell_md(c) for c in r[:5]]
        msg = str(r[5])
        cells.append(md(msg, MESSAGE_CHARS) + (" (cut: the JSON has it whole)" if len(msg) > MESSAGE_CHARS else ""))
        rows.append(cells)
    return rows + [[]] * (len(verdicts) - len(shown))


def evidence_md(s: dict[str, Any], max_pairs: int | None = None) -> list[str]:
    out: list[str] = []
    with_ev = [p for p in s.get("pairs") or [] if p.get("fragile_evidence")]
    for p in with_ev if max_pairs is None else with_ev[:max_pairs]:
        ev = p["fragile_evidence"]
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
    if max_pairs is not None and len(with_ev) > max_pairs:
        out += [
            f"Evidence of {len(with_ev) - max_pairs:,} more pairs left out to fit the size budget: {ELSEWHERE}.",
            "",
        ]
    return out


def scope_md(name: str, s: dict[str, Any], level: int = 2, max_rows: int | None = None) -> list[str]:
    h = "#" * level
    out = [
        f"{h} Scope {md(name)}: {count(s['n_models'], 'model')} x {count(s['n_items'], 'item')} x "
        f"{count(s['n_configs'], 'config')} (reference {md(s['reference'])})",
        "",
    ]
    lines = []
    for t in _tables_of(name, s):
        if kind_of(t) == "line":
            lines.append(f"- {md(t.text, LINE_CHARS)}")
        else:
            out += table_md(narrow_board(t, s["n_configs"]), level + 1, max_rows)
    if lines:
        out += lines + [""]
    ev = evidence_md(s, None if max_rows is None else max(1, max_rows // 10))
    if ev:
        out += [f"{h}# Evidence: the items that carry the gaps the robust items do not order", ""] + ev
    out += [f"{h}# Verdicts", ""] + _table(
        ["status", "check", "value", "threshold", "margin", "message"],
        verdict_rows(_by_importance(s["verdicts"]), max_rows),
        max_rows,
    )
    return out


_TABLES: dict[int, tuple[dict[str, Any], list[Any]]] = {}


def _tables_of(name: str, s: dict[str, Any]) -> list[Any]:
    """``scope_tables`` once per scope dict while one ``render_markdown`` call tries its row budgets."""
    hit = _TABLES.get(id(s))
    if hit is None or hit[0] is not s:
        hit = (s, scope_parts(name, s))
        _TABLES[id(s)] = hit
    return hit[1]


def _by_importance(verdicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """fail, warn, skip, pass; within a status the largest miss first (margin), then the id."""
    rank = {"fail": 0, "warn": 1, "skip": 2, "pass": 3}
    return sorted(
        verdicts,
        key=lambda v: (rank.get(v["status"], 4), v["margin"] if v["margin"] is not None else 0.0, v["id"]),
    )


def submission_md(report: dict[str, Any], max_rows: int | None = None) -> list[str]:
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
                out += [md_options(t.text), ""]
            elif t.key == "gate-verdicts":
                out += gate_verdicts_md(t, level + 1)
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


#: a short effect per gate row for the comment's narrow verdict table (the whole effect is in the list below it)
SHORT_EFFECT = (
    ("FAILS THE GATE: undecided", "FAILS THE GATE (withheld cells)"),
    ("FAILS THE GATE", "FAILS THE GATE"),
    ("context: fails without", "context: pre-existing"),
    ("context: this check does not gate", "context: not gating"),
    ("warn the newcomer brings", "new warn"),
    ("skipped", "skipped"),
)
_OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9]*(?:-[a-z0-9]+)*)")


def md_options(s: Any) -> str:
    """``md`` with every option name (``--audit-strict``) a code span: never broken at its hyphens
    nor escaped (UX review M10)."""
    return md_with_code(_OPTION.sub(r"`\1`", str(s)))


def short_effect(text: str) -> str:
    return next((short for head, short in SHORT_EFFECT if text.startswith(head)), text[:30])


def gate_verdicts_md(t: Table, level: int) -> list[str]:
    """The gate's verdicts for a pull-request comment (760 px wide on GitHub, UX review M10): a table of
    short columns (verdict, status, without it, effect, margin), then each verdict's effect and
    message as a list item below it, where a long line wraps as prose."""
    out = [f"{'#' * level} {md(t.title)}", ""]
    if t.note:
        out += [md(t.note), ""]
    rows, notes = [], []
    for r in t.rows:
        scope, vid, status, without, _gates, effect, margin, message = r
        eff = effect.text if kind_of(effect) == "cell" else str(effect)
        short = short_effect(eff)
        rows.append(
            [
                md_code(vid),
                cell_md(status),
                cell_md(without),
                f"**{md(short)}**" if short.startswith("FAILS") else md(short),
                cell_md(margin),
            ]
        )
        notes.append(f"- {md_code(vid)} ({md(scope)}): {md_options(eff)}. {md_options(message)}")
    out += _table(["verdict", "status", "without it", "effect", "margin"], rows)
    return out + notes + [""]


def legend_md(legend: dict[str, Any], max_rows: int | None = None) -> list[str]:
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
    return out + _table([md(k) for k in core + extra], rows, max_rows)


# GitHub refuses a step summary over 1 MiB and a PR comment over 65,536 characters.
MAX_BYTES = 1_000_000
SUBMISSION_MAX_BYTES = 64_000
ELSEWHERE = "the JSON report (--audit-report) and the HTML report (--audit-html) hold every row"
#: (every scope in full?, rows per table), tried in turn until the report fits its budget
ROW_STEPS: tuple[tuple[bool, int], ...] = (
    (True, 200),
    (True, 100),
    (True, 50),
    (False, 50),
    (True, 30),
    (False, 30),
    (False, 20),
    (False, 10),
    (False, 5),
)


def render_markdown(report: dict[str, Any], max_bytes: int | None = None) -> str:
    """The report as GitHub-flavoured Markdown within ``max_bytes`` (default: 1,000,000 bytes, or
    64,000 with a submission audit, a PR comment). Sections come in order of importance (what to do
    next, the submission gate, the verdicts needing attention, the pooled scope, the benchmarks, the
    legend); to fit, tables keep their first rows (each says how many it left out), then the
    benchmark scopes shrink to one line each, and as a last resort the text is cut at a line."""
    if max_bytes is None:
        max_bytes = SUBMISSION_MAX_BYTES if "submission_audit" in report else MAX_BYTES
    text = ""
    try:
        for all_scopes, rows in ROW_STEPS:
            text = _render(report, all_scopes=all_scopes, max_rows=rows)
            if len(text.encode()) <= max_bytes:
                return text
        return cut_to(text, max_bytes)
    finally:
        _TABLES.clear()


def cut_to(text: str, max_bytes: int) -> str:
    """Cut at the last whole line that leaves room for the note saying so."""
    note = f"\n\n**Cut here to fit {max_bytes:,} bytes**: {ELSEWHERE}.\n"
    room = max(0, max_bytes - len(note.encode()))
    head = text.encode()[:room].decode("utf-8", "ignore")
    head = head[: head.rfind("\n")] if "\n" in head else ""
    return head + note


def next_md(report: dict[str, Any]) -> list[str]:
    steps = next_steps(report)
    return (
        [f"## What to do next{md(steps_scope(report))}", "", *(f"- {md_with_code(x)}" for x in steps), ""]
        if steps
        else []
    )


def _render(report: dict[str, Any], all_scopes: bool, max_rows: int | None = None) -> str:
    rec = report.get("records", {})
    twins = twin_scopes(report)
    verdicts = reported_verdicts(report)  # a twin scope's own verdicts (a user check's) included
    counts = status_counts(verdicts)
    sha = rec.get("sha256")
    out = [
        "# Leaderboard audit",
        "",
        f"Records {md(rec.get('path', ''))}{' (sha256 ' + md(sha[:12]) + ')' if sha else ''}: "
        f"{count(len(rec.get('models', [])), 'model')}, {count(rec.get('items') or 0, 'item')}, "
        f"{count(len(rec.get('configs', [])), 'config')}, "
        f"benchmarks {', '.join(md(b) for b in rec.get('benchmarks', []))}; seed {report.get('seed')}, "
        f"{report.get('bootstrap')} bootstrap resamples.",
        "",
        f"{'The whole leaderboard, every check (the gate is below): ' if 'submission_audit' in report else ''}"
        f"**{counts['pass']:,} pass, {counts['warn']:,} warn, {counts['fail']:,} fail**"
        + (f", {counts['skip']:,} skipped" if counts["skip"] else "")
        + (
            f"; scope {', '.join(md(n) for n in twins)} repeats pooled (one benchmark) and is counted once"
            if twins
            else ""
        )
        + ". (margin = signed distance from the value to the pass region: negative outside it).",
        "",
        md(counts_note(report)),
        "",
    ]
    out += next_md(report)
    if "submission_audit" in report:
        out += submission_md(report, max_rows)
    bad = _by_importance([v for v in verdicts if v["status"] in ("warn", "fail")])
    if bad:
        out += ["## Verdicts needing attention", ""]
        out += _table(
            ["status", "check", "value", "threshold", "margin", "message"], verdict_rows(bad, max_rows), max_rows
        )
    scopes = report.get("scopes", {})
    first = "pooled" if "pooled" in scopes else next(iter(scopes), None)
    ordered = ([first] if first is not None else []) + [n for n in scopes if n != first]
    for j, name in enumerate(ordered):
        s = scopes[name]
        if name in twins:
            out += [f"Scope {md(name)}: the only benchmark; its tables are those of the pooled scope.", ""]
            own = twin_only(report, name)
            if own:
                out += [
                    f"Verdicts only scope {md(name)} holds (checks of your own): {counts_of({'verdicts': own})}",
                    "",
                ]
                out += _table(
                    ["status", "check", "value", "threshold", "margin", "message"],
                    verdict_rows(own, max_rows),
                    max_rows,
                )
            continue
        if j > 0 and not all_scopes:
            out += [
                f"Scope {md(name)}: {counts_of(s)} (details left out to fit a step summary: see the HTML or "
                "JSON report)",
                "",
            ]
            continue
        if j == 0 or not BENCH_DETAILS:
            out += scope_md(name, s, max_rows=max_rows)
        else:
            out += [f"<details><summary>Scope {md_html(name)}: {counts_of(s)}</summary>", ""]
            out += scope_md(name, s, level=3, max_rows=max_rows) + ["</details>", ""]
    if "legend" in report:
        out += legend_md(report["legend"], max_rows)
    return "\n".join(out).rstrip() + "\n"


def counts_of(s: dict[str, Any]) -> str:
    return counts_text(s.get("verdicts", []))


__all__ = ["gate_markdown", "md", "render_markdown"]
