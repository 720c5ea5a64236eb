"""``leaderboard-audit import {lm-eval,helm,lighteval} SRC -o records/`` (issue 6).

Exit status: 0 written; 4 the input or the output was refused (one clear message on
stderr, nothing written); 2 a usage error (argparse).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..records.errors import RecordsError

PROG = "leaderboard-audit import"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Turn lm-evaluation-harness --log_samples runs, a HELM "
        "benchmark_output/runs/<suite> tree or lighteval --save-details runs into a records-v1 directory.",
    )
    p.add_argument("format", choices=["lm-eval", "helm", "lighteval"])
    p.add_argument("src", help="lm-eval, lighteval: the folder of runs; helm: benchmark_output/runs/<suite>")
    p.add_argument(
        "-o",
        "--output",
        required=True,
        help="records directory to write (new, empty, or an earlier import: replaced as a whole)",
    )
    p.add_argument(
        "--metric",
        help="per-sample 0/1 metric: lm-eval acc (default), acc_norm, "
        "exact_match; helm exact_match (default) or another per-instance stat",
    )
    p.add_argument("--mapping", help="JSON file naming model/benchmark/config per run or task (docs/importers.md)")
    p.add_argument(
        "--match-by",
        default="auto",
        help="lm-eval: how documents are matched across runs: auto (default), "
        "doc_hash, doc_id or field:NAME (a field of the logged doc); lighteval: auto, doc_id, "
        "query or specific:KEY",
    )
    p.add_argument("--filter", help="lm-eval: the filter to import when a task logs several")
    p.add_argument(
        "--intersect",
        action="store_true",
        help="import only the items every run covers (and say how many were dropped)",
    )
    p.add_argument("--reference", help="config key of the reference configuration")
    p.add_argument(
        "--axis-groups",
        metavar="JSON",
        help='declared axes written to grid.json: a JSON file {"<axis>": ["<config key>", ...]} '
        "(the reference in every group; docs/records.md, Declared axes)",
    )
    p.add_argument("--model", help="model name for every run (overrides the runs' own)")
    p.add_argument("--benchmark", help="benchmark name for every run (default: task/scenario)")
    return p


def fail(message: str) -> int:
    print(f"{PROG}: {message}", file=sys.stderr)
    return 4


def name_problem(args: argparse.Namespace) -> str | None:
    """--benchmark / --model that could not become a records path (checked before any reading)."""
    from ..records.reader import filename_for_model
    from ..records.writer import dirname_for_benchmark

    for flag, value, check in (
        ("--benchmark", args.benchmark, dirname_for_benchmark),
        ("--model", args.model, filename_for_model),
    ):
        if value is None:
            continue
        try:
            check(value)
        except RecordsError as exc:
            return f"{flag} {value!r}: {exc.problems[0].message}"
    return None


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    from . import load
    from ._output import OutputError, check_output, write_import

    problem = name_problem(args)
    if problem:
        return fail(problem)
    try:
        check_output(Path(args.output))
    except OutputError as exc:
        return fail(str(exc))
    opts = {
        "metric": args.metric,
        "mapping": args.mapping,
        "intersect": args.intersect,
        "reference": args.reference,
        "model": args.model,
        "benchmark": args.benchmark,
    }
    if args.format == "lm-eval":
        opts.update(match_by=args.match_by, filter=args.filter)
    if args.format == "lighteval":
        opts.update(match_by=args.match_by)
    try:
        rec = load(args.src, args.format, **opts)
    except (RecordsError, ValueError) as exc:
        return fail(str(exc))
    if args.axis_groups:
        try:
            rec = with_declared_axes(rec, args.axis_groups)
        except (RecordsError, ValueError, OSError) as exc:
            return fail(str(exc))
    try:
        write_import(rec, args.output)
    except (OutputError, RecordsError) as exc:
        return fail(str(exc))
    except OSError as exc:
        return fail(
            f"cannot write {args.output}: {exc.strerror or exc}" + (f" ({exc.filename})" if exc.filename else "")
        )
    for note in rec.notes:
        print(f"note: {note}", file=sys.stderr)
    n_models, n_items, n_cfg = rec.shape
    print(
        f"imported {args.format} {args.src}: {n_models} model(s) x {n_items} item(s) x "
        f"{n_cfg} config(s) [{', '.join(rec.benchmarks)}] -> {args.output}"
    )
    return 0


def with_declared_axes(rec: Any, path: str) -> Any:
    """``rec`` whose legend carries the axis groups of the JSON file ``path``, validated
    against its config keys and reference (named errors: records/axis_groups.py)."""
    import dataclasses
    import json

    from ..records.axis_groups import AXIS_GROUPS, check_axis_groups

    try:
        obj = json.loads(Path(path).read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ValueError(f"--axis-groups {path}: not JSON ({exc})") from None
    check_axis_groups(obj, rec.grid.keys, rec.grid.reference, path)
    grid = dataclasses.replace(rec.grid, extra={**rec.grid.extra, AXIS_GROUPS: obj})
    return dataclasses.replace(rec, grid=grid)


if __name__ == "__main__":
    sys.exit(main())
