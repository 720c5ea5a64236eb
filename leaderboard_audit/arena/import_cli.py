"""``leaderboard-audit import arena-counts|arena-battles|score-table SRC -o DIR``.

Writes the input's normalised form into DIR (new or empty; an earlier import of the same
kind is replaced), which ``pytest --audit DIR/<file>`` reads by content:

* ``arena-counts`` -> ``DIR/arena_counts.json`` (leaderbot's count document);
* ``arena-battles`` -> ``DIR/arena_battles.json`` (FastChat battles, the fields the audit
  reads, the kept battles only) and ``DIR/arena_counts.json``;
* ``score-table`` and the judge formats (``alpaca-eval-annotations``, ``arena-hard``,
  ``mt-bench``) -> ``DIR/score_table.json`` (``leaderboard-audit/score-table-v1``, with
  the declared judge axes).

Exit status: 0 written; 4 the input or the output was refused (one message on stderr,
nothing written); 2 a usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .formats import AGGREGATE_FORMATS, canonical

PROG = "leaderboard-audit import"
OUTPUT_FILES = ("arena_counts.json", "arena_battles.json", "score_table.json")


def handles(argv: list[str] | None) -> bool:
    """Whether ``import`` was called with an aggregate format."""
    return bool(argv) and canonical(argv[0]) is not None  # type: ignore[index]


def parser(fmt: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"{PROG} {fmt}", description=AGGREGATE_FORMATS[fmt][1])
    p.add_argument("src", help="the input file (arena-hard, mt-bench, alpaca-eval-annotations: or a folder)")
    p.add_argument("-o", "--output", required=True, help="directory to write (new, empty, or an earlier import)")
    if fmt == "score-table":
        p.add_argument("--columns", help="comma-separated score columns (default: AlpacaEval's two, else all)")
        p.add_argument("--reference", help="the reference column (default: the first)")
    return p


def _documents(fmt: str, args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    if fmt == "arena-counts":
        from .data import counts_document, read_counts

        pc = read_counts(args.src)
        return {"arena_counts.json": counts_document(pc)}, f"{len(pc.models)} models, {pc.n_battles} battles"
    if fmt == "arena-battles":
        from .data import battles_document, counts_document, read_battles

        bt = read_battles(args.src)
        docs = {"arena_battles.json": battles_document(bt), "arena_counts.json": counts_document(bt.pair_counts())}
        return docs, f"{len(bt.models)} models, {len(bt.a)} battles"
    from .session import read_input
    from .table import read_table, table_document

    if fmt == "score-table":
        t = read_table(args.src, columns=args.columns, reference=args.reference)
    else:  # a judge format: its table of judge configurations
        t = read_input(args.src, fmt)
    return {"score_table.json": table_document(t)}, f"{len(t.models)} models x {len(t.configs)} configurations"


def main(argv: list[str]) -> int:
    fmt = canonical(argv[0])
    assert fmt is not None
    args = parser(fmt).parse_args(argv[1:])
    from .data import ArenaInputError
    from .session import write_atomic

    out = Path(args.output)
    if out.exists() and (not out.is_dir() or any(p.name not in OUTPUT_FILES for p in out.iterdir())):
        print(f"{PROG}: {out}: not a new or empty directory nor an earlier import; choose another -o", file=sys.stderr)
        return 4
    try:
        docs, what = _documents(fmt, args)
    except ArenaInputError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 4
    out.mkdir(parents=True, exist_ok=True)
    for name in OUTPUT_FILES:
        if name not in docs:
            (out / name).unlink(missing_ok=True)
    for name, doc in docs.items():
        write_atomic(str(out / name), json.dumps(doc, ensure_ascii=False) + "\n")
    print(f"imported {fmt} {args.src}: {what} -> {out}")
    return 0


__all__ = ["handles", "main"]
