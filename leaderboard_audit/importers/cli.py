"""``leaderboard-audit import FORMAT SRC -o records/`` (issue 6).

The formats, their options and their help come from the importers' registry
(``FORMAT_INFO`` in each importer module): the options every importer shares are
below; an option only some importers declare gets its flag from their declarations.

Exit status: 0 written; 4 the input or the output was refused (one clear message on
stderr, nothing written); 2 a usage error (argparse).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..records.errors import RecordsError
from ..formats import IMPORTERS
from ..records.words import count

PROG = "leaderboard-audit import"
# options with a flag of their own below; any other option an importer declares gets
# ``--<name>`` with the help its declaration gives
SHARED_OPTIONS = ("metric", "mapping", "intersect", "reference", "model", "benchmark")


def _per_format(option: str) -> str:
    return "; ".join(f"{s.name}: {s.options[option]}" for s in IMPORTERS.values() if s.options.get(option))


def parser() -> argparse.ArgumentParser:
    from ..arena.formats import format_names as aggregate_names

    p = argparse.ArgumentParser(
        prog=PROG,
        description="Turn another harness's runs into a records-v1 directory. Formats: "
        + "; ".join(f"{s.name} ({s.description})" for s in IMPORTERS.values())
        + ". Arena, published tables and judge outputs (not records; issue 47): "
        + ", ".join(aggregate_names())
        + " (e.g. leaderboard-audit import arena-counts -h).",
    )
    p.add_argument("format", type=IMPORTERS.arg_type(), metavar=IMPORTERS.metavar())
    p.add_argument("src", help=_per_format_src())
    p.add_argument(
        "-o",
        "--output",
        required=True,
        help="records directory to write (new, empty, or an earlier import: replaced as a whole)",
    )
    p.add_argument("--metric", help=f"per-sample 0/1 metric: {_per_format('metric')}")
    p.add_argument("--mapping", help="JSON file naming model/benchmark/config per run or task (docs/importers.md)")
    for option, helps in _own_options().items():
        p.add_argument("--" + option.replace("_", "-"), dest=option, help="; ".join(helps))
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


def _per_format_src() -> str:
    return "; ".join(f"{s.name}: {s.source}" for s in IMPORTERS.values() if s.source) or "the source to import"


def _own_options() -> dict[str, list[str]]:
    """Options beyond ``SHARED_OPTIONS`` -> "<format>: <help>" of each importer declaring them."""
    out: dict[str, list[str]] = {}
    for s in IMPORTERS.values():
        for option, help_ in s.options.items():
            if option not in SHARED_OPTIONS:
                out.setdefault(option, []).append(f"{s.name}: {help_ or option}")
    return out


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
    from ..arena import import_cli as aggregate  # arena counts/battles, published tables (issue 47)

    if aggregate.handles(argv if argv is not None else sys.argv[1:]):
        return aggregate.main(list(argv if argv is not None else sys.argv[1:]))
    args = parser().parse_args(argv)
    from ._output import OutputError, check_output, write_import
    from .decisions import load_or_decide

    problem = name_problem(args)
    if problem:
        return fail(problem)
    try:
        check_output(Path(args.output))
    except OutputError as exc:
        return fail(str(exc))
    spec = IMPORTERS[args.format]
    given = {o: getattr(args, o) for o in (*SHARED_OPTIONS, *_own_options())}
    refused = [o for o, v in given.items() if o not in spec.options and v not in (None, False)]
    if refused:
        flags = ", ".join("--" + o.replace("_", "-") for o in refused)
        return fail(f"{flags}: not an option of {spec.name} (its options: {', '.join(sorted(spec.options))})")
    opts = {o: v for o, v in given.items() if o in spec.options and v is not None}
    try:
        # on a failure, every decision the runs need is named at once, with the command that works
        rec = load_or_decide(args.src, args.format, opts, _command_words(argv))
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
        f"imported {args.format} {args.src}: {count(n_models, 'model')} x {count(n_items, 'item')} x "
        f"{count(n_cfg, 'config')} [{', '.join(rec.benchmarks)}] -> {args.output}"
    )
    return 0


def _command_words(argv: list[str] | None) -> list[str]:
    """The user's command line, shell-quoted, as ``leaderboard-audit import ...``."""
    import shlex

    words = list(sys.argv[1:] if argv is None else argv)
    if argv is None and words[:1] == ["import"]:  # run as ``leaderboard-audit import ...``
        words = words[1:]
    return ["leaderboard-audit", "import", *(shlex.quote(w) for w in words)]


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
