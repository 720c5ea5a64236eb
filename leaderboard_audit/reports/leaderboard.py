"""A publishable leaderboard (``--audit-leaderboard PATH``: ``.md``, ``.csv`` or ``.html``).

What the paper (section 4.6) asks a leaderboard to publish, from the audited scope
(``pooled`` when present), by the AUDITS v5 board rule (docs/audits.md, "The board"):
models ranked by the harness-averaged score, each with its simultaneous 95% rank interval and
the best rank of it (never a lower score above a higher one), the score's 95% CI over items
(Wilson-type, marginal), the reference score (Wilson CI), the band (min-max single
configuration accuracy), the robust accuracy, how many models each is separated above
("models below") by the board and by the paper's robust-item comparison, how
many configurations it wins, and a harness card
(the legend summarised, scoring first). Markdown stays under 64 KiB for up to 100 models; beyond,
the top rows and a note (the CSV always has every model).
"""

from __future__ import annotations

import csv
import re
import io
from pathlib import Path
from typing import Any

from .leaderboard_rows import BELOW, BELOW_ROBUST, RANKS, _above, rows_of, wilson  # noqa: F401 - re-exported
from .next_steps import first_scope
from .words import count

SUFFIXES = (".md", ".csv", ".html")
NUM = ' class="n"'
MD_ROWS = 100
MD_MAX_BYTES = 64_000
HEADERS = [
    "rank",
    "model",
    RANKS,
    "score",
    "95% CI",
    "reference",
    "band (min-max)",
    "robust",
    BELOW,
    BELOW_ROBUST,
    "configs won",
]


def harness_card(report: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, value) lines: scoring first, then the template, ordering and every constant setting."""
    legend = report.get("legend") or {}
    configs = legend.get("configs") or []
    card: list[tuple[str, str]] = []

    def values(key: str) -> list[str]:
        return sorted({str(c[key]) for c in configs if c.get(key) is not None})

    for key in ("scoring", "template", "ordering"):
        vals = values(key)
        if vals:
            card.append((key, ", ".join(vals) + f" ({count(len(vals), 'value')})"))
    card.append(("configurations", f"{len(configs)}; reference {legend.get('reference', '-')}"))
    keys = sorted({k for c in configs for k in c} - {"key", "scoring", "template", "ordering", "permutation"})
    for k in keys:
        vals = {repr(c.get(k)) for c in configs}
        if len(vals) == 1 and not isinstance(configs[0].get(k), (dict, list)):
            card.append((k, str(configs[0].get(k))))
        else:
            card.append((k, f"varies or structured: see the report's legend ({len(vals)} distinct)"))
    for k, v in sorted(legend.items()):
        if k in ("configs", "format", "reference", "inferred") or isinstance(v, (dict, list)):
            continue
        card.append((k, str(v)))
    if legend.get("inferred"):
        card.append(("note", "legend inferred from the config keys (no grid.json)"))
    return card


def render_csv(report: dict[str, Any]) -> str:
    got = first_scope(report)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_ALL)  # a CR or LF cannot end a row (C04)
    basis = None if got is None else incomplete_basis(got[1])
    w.writerow(HEADERS + (["basis"] if basis else []))
    if got is not None:
        for r in rows_of(got[1])[0]:
            w.writerow([_csv_cell(r[h]) for h in HEADERS] + ([_csv_cell(basis)] if basis else []))
    return buf.getvalue()


def incomplete_basis(s: dict[str, Any]) -> str | None:
    """The CSV's last column on an incomplete grid (a CSV has no notes, and a row read alone
    must not pass for a complete grid's): how the row's numbers were obtained; None when complete."""
    inc = s.get("incomplete")
    if not isinstance(inc, dict) or not inc.get("missing"):
        return None
    observed = f"incomplete grid, {inc['cells'] - inc['missing']:,} of {inc['cells']:,} cells observed"
    est = (s.get("averaged") or {}).get("estimated_from")
    if est:
        return (
            f"{observed}: ranked and scored on the uniform random sample of {est['items']:,} of {est['of']:,} items "
            "(score estimated); band and robust are ranges over the missing cells"
        )
    return (
        f"{observed}: no harness-averaged board (too few items observed under every configuration); reference "
        "order; score, band and robust are ranges over the missing cells"
    )


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # OWASP, "CSV Injection"


def _csv_cell(v: str) -> str:
    """No spreadsheet formulas (OWASP's rule: a cell that starts with ``= + - @``, a tab or a
    carriage return gets a leading ``'``; a number such as ``-0.5`` is left as it is) and no
    invisible characters: control and format characters are written escaped (``\\u202e``)."""
    from .text import clean

    v = clean(v)
    if v.startswith(FORMULA_STARTS) and v != "-" and not _is_number(v):
        return "'" + v
    return v


def _is_number(v: str) -> bool:
    """A plain decimal (``-0.500``): what the numeric columns hold; ``-inf`` or ``-1e9`` are not."""
    return re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", v) is not None


def provenance(report: dict[str, Any]) -> str:
    """One line saying where the board comes from (UX review #20): the tool's version, the
    benchmarks, the seed and the records' SHA-256."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        tool = f"leaderboard-audit {version('leaderboard-audit')}"
    except PackageNotFoundError:  # pragma: no cover - a source tree without an install
        tool = "leaderboard-audit"
    rec = report.get("records") or {}
    sha = rec.get("sha256")
    benches = ", ".join(rec.get("benchmarks") or []) or "-"
    return (
        f"Made by {tool} from records {public_path(rec.get('path'))} (benchmarks {benches}; "
        f"sha256 {sha[:16] + '...' if sha else 'not taken'}), seed {report.get('seed', '-')}."
    )


def public_path(path: str | None) -> str:
    """The records as a published board names them: a relative path as it was given, an absolute
    one by its last component only (a file meant for the public must not carry the maintainer's
    directory layout, e.g. /home/<user>/...); the SHA-256 beside it identifies the content."""
    if not path:
        return "-"
    p = Path(path)
    return p.name or str(p) if p.is_absolute() else str(path)


def render_md(report: dict[str, Any], max_rows: int = MD_ROWS) -> str:
    from .markdown import md

    got = first_scope(report)
    if got is None:
        return "# Leaderboard\n\nNo scopes in the report.\n"
    name, s = got
    rows, notes = rows_of(s)
    out = [f"# Leaderboard ({md(name)}: {count(s['n_models'], 'model')}, {count(s['n_items'], 'item')})", ""]
    out += [md(n) for n in notes] + ["", md(provenance(report)), ""]
    shown = rows[:max_rows]
    out += ["| " + " | ".join(HEADERS) + " |", "|" + "|".join("---" for _ in HEADERS) + "|"]
    out += ["| " + " | ".join(md(r[h]) for h in HEADERS) + " |" for r in shown]
    if len(rows) > len(shown):
        out += [
            "",
            f"Top {len(shown):,} of {len(rows):,} models; the CSV (--audit-leaderboard board.csv) has them all.",
        ]
    out += ["", "## Harness", ""] + [f"- {md(k)}: {md(v, 300)}" for k, v in harness_card(report)]
    text = "\n".join(out) + "\n"
    if len(text.encode()) > MD_MAX_BYTES and max_rows > 10:
        return render_md(report, max_rows // 2)
    return text


def render_leaderboard_html(report: dict[str, Any]) -> str:
    from .html import CSP, STYLE
    from .html_script import PAGE, SCRIPT
    from .svg import esc as e

    got = first_scope(report)
    rows, notes = rows_of(got[1]) if got else ([], [])
    head = "".join(f"<th>{e(h)}</th>" for h in HEADERS)
    body = "".join(
        "<tr>" + "".join(f"<td{'' if h == 'model' else NUM}>{e(r[h])}</td>" for h in HEADERS) + "</tr>" for r in rows
    )
    card = "".join(f"<li>{e(k)}: {e(v)}</li>" for k, v in harness_card(report))
    cls = ' class="dt"' if len(rows) > PAGE else ""
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f"<title>Leaderboard{e(' (' + ', '.join((report.get('records') or {}).get('benchmarks') or []) + ')') if (report.get('records') or {}).get('benchmarks') else ''}</title><style>{STYLE}</style></head><body><h1>Leaderboard</h1>"
        + "".join(f"<p>{e(n)}</p>" for n in notes)
        + f"<p>{e(provenance(report))}</p>"
        + f"<table{cls}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        f"<h2>Harness</h2><ul>{card}</ul><script>{SCRIPT}</script></body></html>\n"
    )


def render_leaderboard(report: dict[str, Any], path: str | Path) -> str:
    suffix = Path(path).suffix.lower()
    if suffix == ".csv":
        return render_csv(report)
    if suffix == ".html":
        return render_leaderboard_html(report)
    return render_md(report)


__all__ = ["SUFFIXES", "harness_card", "render_csv", "render_leaderboard", "render_md", "rows_of", "wilson"]
