"""The aggregate input formats and their recognition by content (import-light: the
pytest plugin reads this at start-up; standard library only).

These inputs are not records (no item set per model), so they are not importers of
``leaderboard_audit.formats``: ``pytest --audit FILE`` recognises them by content (or
``--audit-format NAME``) and audits them with ``arena.audit``; ``leaderboard-audit import
NAME SRC -o DIR`` writes their normalised form (``arena.import_cli``).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

#: name -> (aliases, description)
AGGREGATE_FORMATS: dict[str, tuple[tuple[str, ...], str]] = {
    "arena-counts": (
        ("leaderbot",),
        "Chatbot Arena per-pair counts, leaderbot's JSON {models, X: [[i, j]], Y: [[wins, losses, ties, both_bad]]}",
    ),
    "arena-battles": (
        ("fastchat", "clean-battle"),
        "Chatbot Arena battles, FastChat's clean_battle_*.json (a list of {model_a, model_b, winner, tstamp})",
    ),
    "score-table": (
        ("published-table", "alpaca-eval-table"),
        "a published table of model x configuration -> score (optional <config>_se, <config>_n); "
        "AlpacaEval leaderboard CSVs",
    ),
    "alpaca-eval-annotations": (
        ("alpacaeval-annotations",),
        "AlpacaEval annotations.json (a list of {generator_2, output_1, output_2, annotator, preference}); "
        "judge and length-control axes",
    ),
    "arena-hard": (
        ("arenahard",),
        "Arena-Hard model_judgment/<judge>/<model>.jsonl (games: both positions, A>>B..B>>A); "
        "judge, position and verdict-scale axes",
    ),
    "mt-bench": (
        ("mtbench",),
        "MT-Bench <judge>_single.jsonl (1-10 scores) or <judge>_pair.jsonl (g1_winner/g2_winner)",
    ),
}
#: the formats read into a score table (``arena.table.ScoreTable``)
TABLE_KINDS = ("score-table", "alpaca-eval-annotations", "arena-hard", "mt-bench")
TABLE_FORMAT = "leaderboard-audit/score-table-v1"
SNIFF_BYTES = 1 << 16
PARSE_LIMIT = 64 << 20  # a '{' document is parsed to be recognised only below this size


def _norm(name: str) -> str:
    return re.sub(r"[-_]", "", name.lower())


def _is_number(cell: str) -> bool:
    try:
        float(cell.strip().strip('"'))
    except ValueError:
        return False
    return True


def canonical(fmt: str | None) -> str | None:
    """The aggregate format ``fmt`` names (case and ``_``/``-`` ignored), else ``None``."""
    if not fmt:
        return None
    for name, (aliases, _) in AGGREGATE_FORMATS.items():
        if _norm(fmt) in {_norm(name), *(_norm(a) for a in aliases)}:
            return name
    return None


def format_names() -> tuple[str, ...]:
    return tuple(AGGREGATE_FORMATS)


def all_names() -> tuple[str, ...]:
    """Every name and alias (the plugin's ``--audit-format`` choices)."""
    out: list[str] = []
    for name, (aliases, _) in AGGREGATE_FORMATS.items():
        out += [name, *aliases]
    return tuple(out)


def sniff(path: str | os.PathLike[str]) -> str | None:
    """The aggregate format of the file ``path`` by its content, or ``None`` (records,
    a directory, an importer's input or anything else)."""
    p = Path(path)
    try:
        if p.is_dir():
            return _sniff_dir(p)
        if not p.is_file():
            return None
        with open(p, "rb") as f:
            head = f.read(SNIFF_BYTES)
        size = p.stat().st_size
    except OSError:
        return None
    text = head.decode("utf-8-sig", errors="replace").lstrip()
    if p.suffix.lower() in (".csv", ".tsv"):
        first = text.splitlines()[0] if text else ""
        cols = [c.strip().strip('"') for c in first.split("\t" if p.suffix.lower() == ".tsv" else ",")]
        if any(c in cols for c in ("item_id", "correct")):
            return None  # the records layer's long table (its reader names what is missing)
        rows = text.splitlines()[1:2]
        cells = rows[0].split("\t" if p.suffix.lower() == ".tsv" else ",") if rows else []
        return "score-table" if len(cols) >= 2 and any(_is_number(c) for c in cells[1:]) else None
    if text.startswith("["):
        m = re.match(r"\[\s*\{", text)
        if m and '"model_a"' in text and '"winner"' in text:
            return "arena-battles"
        if m and '"generator_2"' in text and '"preference"' in text:
            return "alpaca-eval-annotations"
        return None
    if p.suffix.lower() == ".jsonl" and text.startswith("{"):
        first = text.splitlines()[0]
        if '"games"' in first:
            return "arena-hard"
        if '"g1_winner"' in first or ('"judge"' in first and '"score"' in first):
            return "mt-bench"
        return None
    if text.startswith("{"):
        if TABLE_FORMAT in text[:4096]:
            return "score-table"
        if size > PARSE_LIMIT:
            return None
        try:
            obj = json.loads(p.read_bytes().decode("utf-8-sig"))
        except (OSError, ValueError, RecursionError):
            return None
        if isinstance(obj, dict) and {"models", "X", "Y"} <= set(obj):
            return "arena-counts"
    return None


def _first(d: Path, depth: int, want: Any) -> Path | None:
    """The first file under ``d`` (at most ``depth`` levels down) that ``want`` accepts;
    reads directory entries lazily and stops at the first hit (records folders are large)."""
    try:
        entries = sorted(os.scandir(d), key=lambda e: e.name)
    except OSError:
        return None
    for e in entries:
        if e.is_file() and want(e.name):
            return Path(e.path)
    if depth > 0:
        for e in entries:
            if e.is_dir() and not e.name.startswith("."):
                found = _first(Path(e.path), depth - 1, want)
                if found is not None:
                    return found
                break  # one sub-folder is enough to tell a layout
    return None


def _sniff_dir(d: Path) -> str | None:
    """A folder of judge outputs: Arena-Hard's ``model_judgment/<judge>/<model>.jsonl``,
    MT-Bench's ``*_single.jsonl``/``*_pair.jsonl``, AlpacaEval's ``annotations.json``, or
    of AlpacaEval boards (``*_leaderboard.csv``, one per judge)."""
    jsonl = _first(d, 2, lambda n: n.endswith(".jsonl"))
    if jsonl is not None:
        kind = sniff(jsonl)
        if kind in ("arena-hard", "mt-bench"):
            return kind
    ann = _first(d, 2, lambda n: n == "annotations.json")
    if ann is not None and sniff(ann) == "alpaca-eval-annotations":
        return "alpaca-eval-annotations"
    board = _first(d, 0, lambda n: n.endswith("_leaderboard.csv"))  # a folder of AlpacaEval boards
    if board is not None and sniff(board) == "score-table":
        return "score-table"
    return None


def aggregate_kind(path: str | None, fmt: str | None) -> str | None:
    """Which aggregate format ``pytest --audit PATH --audit-format FMT`` reads, or ``None``
    when the records layer or an importer does."""
    if not path:
        return None
    if fmt and fmt != "auto":
        return canonical(fmt)
    return sniff(path)


__all__ = ["AGGREGATE_FORMATS", "aggregate_kind", "all_names", "canonical", "format_names", "sniff"]
