"""The submission gate's one table model (``gate_tables``) and its terminal text.

The terminal, Markdown and HTML renderers all format the same ``Table``/``Line``
objects, so their wording and counts cannot drift apart; ``state_line`` is the
one line on the overall state (what the exit code says). ``gate_markdown`` is the
gate alone, sized for a pull-request comment (at most ``COMMENT_BYTES``; in
``reports.markdown``).
"""

from __future__ import annotations

from typing import Any

from ..engine.gate import CREATED, EXISTING, NEW_WARN, NOT_GATING, SKIP, WITHHELD
from ..checks.tables import Cell, Line, Table
from .text import clean
from .words import count

#: GitHub's limit on a comment body (and what the docs promise for the gate's Markdown)
COMMENT_BYTES = 65_536
MAX_ROWS = 60
MESSAGE_CHARS = 240

EFFECT_TEXT = {
    CREATED: "FAILS THE GATE: the newcomer creates this fail",
    WITHHELD: "FAILS THE GATE: undecided on cells the newcomer withheld (allow: --audit-allow-undecided)",
    EXISTING: "context: fails without the newcomer too",
    NOT_GATING: "context: this check does not gate (opt in: --audit-gate {check})",
    NEW_WARN: "warn the newcomer brings (gates only with --audit-strict)",
    SKIP: "skipped: {message}",
}


def board_place(n: dict[str, Any]) -> str:
    """A newcomer's place on the published board (AUDITS v5): its rank and rank interval."""
    rank, interval = n.get("board_rank"), n.get("rank_interval")
    if rank is None:
        return "-"
    if not interval or interval[0] == interval[1]:
        return str(rank)
    return f"{rank} ({interval[0]}-{interval[1]})"


def effect_text(r: dict[str, Any]) -> str:
    t = EFFECT_TEXT.get(r["effect"])
    if t is None:
        t = r["effect"]
    else:
        t = t.format(check=r["check"], message=r["message"])
    if r.get("undecided_withheld") and r["effect"] != WITHHELD:  # --audit-allow-undecided
        t += "; undecided on cells the newcomer withheld, allowed (--audit-allow-undecided)"
    return t


def _cut(s: str, n: int) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def state_line(sub: dict[str, Any]) -> str:
    """The one line on the overall state: the counts of the gate's rows and the exit code."""
    ov = sub["overall"]
    c, e = ov["counts"], ov["effects"]
    gate = "FAIL" if ov["exit_code"] else ov["status"].upper()
    skipped = f", {c[SKIP]} skipped" if c.get(SKIP) else ""
    blocking = f"; fails the gate: {', '.join(clean(b, 80) for b in ov['blocking'][:5])}" if ov["blocking"] else ""
    rows = [r for s in sub["scopes"].values() for r in s["rows"]]
    for effect in (CREATED, WITHHELD):  # the first reason of each kind that blocks
        why = [r["why"] for r in rows if r["effect"] == effect and r.get("why")]
        blocking += f" ({clean(why[0], 200)})" if why else ""
    more = f" and {len(ov['blocking']) - 5} more" if len(ov["blocking"]) > 5 else ""
    undecided = ""
    if ov.get("undecided"):  # gating verdicts left undecided by cells the newcomer withheld
        cells = max((s["withheld"]["count"] for s in sub["scopes"].values() if s.get("withheld")), default=0)
        allowed = "" if e.get(WITHHELD) else ", allowed by --audit-allow-undecided"
        undecided = f", {ov['undecided']} undecided on {count(cells, 'cell')} it withheld{allowed}"
    return (
        f"submission {', '.join(clean(m, 40) for m in sub['models'])}: {gate} - {c['pass']} pass, {c['warn']} warn, "
        f"{c['fail']} fail{skipped} in {ov['checks']} checks ({count(e[CREATED], 'fail')} created by the newcomer, "
        f"{e[EXISTING]} pre-existing, {e[NOT_GATING]} in checks that do not gate{undecided}){blocking}{more}; "
        f"exit {ov['exit_code']}{' (--audit-strict: a new warn fails)' if ov['strict'] else ''}"
    )


def gates_line(sub: dict[str, Any]) -> str:
    g = sub["gate"]
    ctx = f"; context only: {', '.join(g['context'])}" if g["context"] else ""
    return (
        f"gating checks: {', '.join(g['gating']) or '-'}{ctx} (exit 1 only for a fail the newcomer's arrival "
        "creates, or a gating verdict left undecided by cells the newcomer withheld"
        f"{' (allowed: --audit-allow-undecided)' if sub['overall'].get('allow_undecided') else ''}; "
        "opt a check in with --audit-gate NAME)"
    )


#: configs a newcomer wins named in its row (the rest counted; all of them in the JSON)
WINS_SHOWN = 3


def gate_tables(sub: dict[str, Any], max_rows: int | None = MAX_ROWS) -> list[Table | Line]:
    """The gate as renderer-neutral tables: the newcomers' place, the verdicts that concern
    them (with the verdict the board had without them), and the orderings they split.
    ``max_rows`` caps each table (the rows left out are counted in its note)."""
    place, verdicts, split = [], [], []
    repeated = [scope for scope, s in sub["scopes"].items() if s.get("repeats")]
    for scope, s in sub["scopes"].items():
        if s.get("repeats"):  # one benchmark: its rows are pooled's
            continue
        for n in s["newcomers"]:
            wins = "; ".join(
                f"{w['config']} (+{w['margin_items']} items over the rest"
                + (f", +{w['lead_items']} over the reference winner" if w.get("lead_items") is not None else "")
                + ")"
                for w in n["wins"][:WINS_SHOWN]
            ) + (
                f"; +{len(n['wins']) - WINS_SHOWN} more configs (report: submission_audit)"
                if len(n["wins"]) > WINS_SHOWN
                else ""
            )
            place.append(
                [
                    scope,
                    n["model"],
                    board_place(n),
                    f"{n['position']}/{n['of']}",
                    n["above"] or "- (top)",
                    n["below"] or "- (bottom)",
                    wins or "none",
                ]
            )
        for r in sorted(s["rows"], key=lambda r: _rank(r)):
            verdicts.append(
                [
                    scope,
                    r["id"],
                    Cell(r["status"], "status"),
                    "-" if r["without"] is None else Cell(r["without"], "status"),
                    "yes" if r["gates"] else "no",
                    Cell(effect_text(r), "strong") if r["effect"] in (CREATED, WITHHELD) else effect_text(r),
                    Cell("n/a" if r["margin"] is None else f"{r['margin']:+.3f}", "code"),
                    _cut((f"{r['why']}. " if r.get("why") else "") + r["message"], MESSAGE_CHARS),
                ]
            )
        for p in s["split"]:
            was = p["status_without"] or "n/a"
            split.append([scope, f"{p['higher']} > {p['lower']}", ", ".join(p["between"]), Cell(was, "status")])
    out: list[Table | Line] = [Line("gate", state_line(sub)), Line("gate", gates_line(sub))]
    if repeated:
        out.append(
            Line("gate", f"scope {', '.join(repeated)} is the only benchmark: its rows are pooled's, shown once")
        )
    out.append(
        _capped(
            Table(
                "gate-place",
                "Where the newcomer lands",
                ["scope", "model", "board rank", "printed position", "above", "below", "configs it wins"],
                place,
                widths={1: 30, 4: 30, 5: 30, 6: 1000},  # 6: cut only to fit the terminal
            ),
            max_rows,
        )
    )
    out.append(
        _capped(
            Table(
                "gate-verdicts",
                "Verdicts that concern the newcomer",
                ["scope", "verdict", "status", "without it", "gates", "effect", "margin", "message"],
                verdicts,
                note="'without it': the same verdict on the leaderboard before the newcomer arrived ('-': it did not "
                "exist). Only a fail the newcomer creates in a gating check fails the gate, or a gating verdict "
                "left undecided by cells the newcomer withheld.",
                widths={5: 48, 7: 60},  # 1, the verdict id: never cut (CI logs grep for it; UX review M6)
            ),
            max_rows,
        )
    )
    if split:
        out.append(
            _capped(
                Table(
                    "gate-split",
                    "Adjacent pairs the newcomer now sits between",
                    ["scope", "pair before", "now between them", "pair verdict without it"],
                    split,
                    note="Context, not a verdict: the pair was adjacent on the leaderboard without the newcomer.",
                    widths={1: 50, 2: 40},
                ),
                max_rows,
            )
        )
    return out


def _rank(r: dict[str, Any]) -> tuple[int, str]:
    order = {CREATED: 0, WITHHELD: 1, NOT_GATING: 2, EXISTING: 3, NEW_WARN: 4}
    return order.get(r["effect"], 5), r["id"]


def _capped(t: Table, max_rows: int | None) -> Table:
    if max_rows is None or len(t.rows) <= max_rows:
        return t
    left = len(t.rows) - max_rows
    note = (
        t.note + " " if t.note else ""
    ) + f"{left:,} of {len(t.rows):,} rows left out (the JSON report has them all)."
    return Table(t.key, t.title, t.headers, t.rows[:max_rows], note=note, detail=t.detail, widths=t.widths)


#: the narrowest a cut column gets when a gate table is fitted to the terminal
MIN_CUT = 12


def fit_to_width(t: Table, width: int) -> Table:
    """``t`` with its cut columns (``widths``: free text, names) narrowed, the last first,
    until its rows fit ``width`` characters (never below ``MIN_CUT``; the verdict ids keep
    their width: CI logs grep for them). UX review 2026-12-04 #15: 200 characters at 80."""
    from dataclasses import replace

    from .terminal import cell_text, render_table

    widths = dict(t.widths)

    def shown(j: int) -> int:  # the column's cells' width as rendered now
        return max([0] + [len(cell_text(r[j], widths.get(j))) for r in t.rows if j < len(r)])

    def floor(j: int) -> int:  # its header is shown whole
        return max(MIN_CUT, len(t.headers[j]))

    for _ in range(64):
        over = max(len(line) for line in render_table(replace(t, widths=widths)).splitlines()) - width
        cuttable = [j for j in sorted(widths, reverse=True) if shown(j) > floor(j) and t.headers[j] != "verdict"]
        if over <= 0 or not cuttable:
            break
        j = cuttable[0]
        widths[j] = max(floor(j), shown(j) - over)
    return replace(t, widths=widths)


def render_submission_text(report: dict[str, Any], *, width: int = 100, max_rows: int | None = MAX_ROWS) -> str:
    """The terminal summary in submission mode (the same tables as Markdown and HTML)."""
    from .terminal import render_table, wrap_line

    sub = report["submission_audit"]
    rec = report.get("records", {})
    lines = [
        wrap_line(
            f"submission audit of {', '.join(clean(m, 40) for m in sub['models'])}: what its arrival changes on "
            f"{clean(rec.get('path', ''))} (seed {report.get('seed')}, {report.get('bootstrap')} resamples)",
            width,
        ),
    ]
    tables = gate_tables(sub, max_rows)
    state = tables[0]
    for t in tables[1:]:
        if isinstance(t, Line):
            lines.append(wrap_line(clean(t.text), width))
        else:
            lines += ["", clean(t.title) + ":"]
            if t.note:
                lines.append(wrap_line(clean(t.note), width))
            lines.append(render_table(fit_to_width(t, width)))
    lines += ["", clean(state.text)]  # one line, never wrapped: CI logs grep for it
    return "\n".join(lines)


__all__ = ["COMMENT_BYTES", "effect_text", "gate_tables", "render_submission_text", "state_line"]
