"""`leaderboard-audit audit PATH`: the audit without pytest (same report, same verdicts).

Exit status: 0 every check passed (or warned, without --strict); 1 a check failed (or
warned, with --strict); 2 a usage error (bad option value: one line naming the option);
4 the records were refused, or a report file could not be written (the summary is
printed first, so the results are never lost).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..settings import DEFAULT_ALPHA, DEFAULT_BOOT, DEFAULT_SEED, MAX_BOOT, MIN_BOOT


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="leaderboard-audit audit", description="Audit records and print the tables and verdicts."
    )
    from ..formats import audit_format_arg, audit_format_metavar, format_names

    p.add_argument(
        "path", help=f"records-v1 directory, CSV/Parquet table, packed file, or {'/'.join(format_names())} source"
    )
    p.add_argument("--format", default="auto", type=audit_format_arg(), metavar=audit_format_metavar())
    p.add_argument(
        "--mapping",
        metavar="MAP.json",
        help=f"{'/'.join(format_names())}: which run is which model, benchmark and config "
        "(default SRC/audit_mapping.json; docs/importers.md)",
    )
    p.add_argument("--metric", metavar="NAME", help="importers: the per-sample metric that is the correctness bit")
    # values are checked by settings.resolve_settings, the plugin's own path (CLI > pyproject > defaults)
    p.add_argument("--seed", default=None, help=f"bootstrap seed (default {DEFAULT_SEED})")
    p.add_argument(
        "--boot",
        default=None,
        help=f"bootstrap resamples ({MIN_BOOT:,} to {MAX_BOOT:,}; default {DEFAULT_BOOT:,})",
    )
    p.add_argument("--alpha", default=None, help=f"significance level of the pair tests (default {DEFAULT_ALPHA})")
    p.add_argument("--intersect", action="store_true", default=None, help="audit only the items common to all models")
    p.add_argument(
        "--threshold",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a verdict threshold, repeatable (names: docs/audits.md, or the JSON report's 'thresholds')",
    )
    from ..reports.outputs import OUTPUTS

    for o in OUTPUTS:
        p.add_argument(o.flag, dest=o.key, metavar=o.metavar, help=o.help)
    p.add_argument(
        "--summary",
        choices=("short", "full"),
        default="short",
        help="short: what to do next, the board's top rows, counts, worst offenders (default); "
        "full: every scope's tables and every fail/warn (pytest: --audit-summary full)",
    )
    p.add_argument(
        "--submission",
        action="append",
        default=[],
        metavar="MODEL",
        help="the CI gate (docs/ci-gate.md): audit the board with and without MODEL (repeatable); exit 1 only "
        "for a fail its arrival creates in a gating check; --markdown then writes the gate alone (a PR comment)",
    )
    p.add_argument(
        "--gate",
        action="append",
        default=[],
        metavar="CHECK",
        help="with --submission: also gate on this check (e.g. band; repeatable)",
    )
    p.add_argument("--strict", action="store_true", default=None, help="exit 1 on a warn too")
    p.add_argument(
        "--allow-undecided",
        action="store_true",
        default=None,
        help="with --submission: a gating verdict left undecided by cells the newcomer withheld warns "
        "instead of failing the gate (exit 1 by default; docs/ci-gate.md)",
    )
    p.add_argument(
        "--jobs",
        type=_jobs,
        default=1,
        metavar="N",
        help="compute the scopes in N processes (default 1; 'auto': one per CPU); the report is the same bytes",
    )
    return p


def _jobs(text: str) -> int:
    """``--jobs``: a whole number >= 1, or ``auto`` (the CPUs this process may use)."""
    import os

    if text.strip() == "auto":
        return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: a whole number of processes >= 1, or auto")
    return n


def write_reports(report: dict[str, Any], args: argparse.Namespace) -> list[str]:
    """Write the requested report files; returns one line per file that could not be written."""
    from ..records.writer import atomic_write_bytes
    from ..reports.outputs import render_outputs, written_line

    failed = []
    for flag, path, render in render_outputs(report, vars(args), flags=True):
        try:
            data = render().encode()
            atomic_write_bytes(path, data)
            print(written_line(flag, path, len(data)))
        except OSError as exc:
            failed.append(f"{flag} {path}: cannot write ({exc.strerror or exc})")
    return failed


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # usage errors (2) and --help (0) as a return value
        return exc.code if isinstance(exc.code, int) else 2
    from ..reports.outputs import OUTPUTS, output_problem

    for o in OUTPUTS:
        path = getattr(args, o.key)
        problem = output_problem(o.flag, path, o.suffixes) if path else None
        if problem:  # before the audit runs
            print(f"leaderboard-audit audit: {problem}", file=sys.stderr)
            return 2
    from ..engine.sources import load_for_audit
    from ..records import RecordsError
    from ..engine.run import audit
    from ..reports.terminal import cli_hint, render_summary
    from ..settings import SettingsError, resolve_settings
    from ..checks import Thresholds
    from ..checks import RegistryError, registry

    try:
        registry()
    except RegistryError as exc:  # B32: the check registry, not --threshold
        print(f"leaderboard-audit audit: registered checks: {exc}", file=sys.stderr)
        return 2
    try:  # the same resolution as pytest --audit: [tool.leaderboard_audit] applies here too
        settings = resolve_settings(
            cli={k: getattr(args, k) for k in ("seed", "boot", "alpha", "strict", "allow_undecided", "intersect")},
            cli_thresholds=list(args.threshold),
            invocation_dir=Path.cwd(),
            flag_prefix="--",
        )
    except SettingsError as exc:
        print(f"leaderboard-audit audit: {exc}", file=sys.stderr)
        return 2
    try:
        records = load_for_audit(
            args.path, args.format, intersect=settings["intersect"], mapping=args.mapping, metric=args.metric
        )
    except RecordsError as exc:
        print(f"leaderboard-audit audit: {exc}", file=sys.stderr)
        return 4
    from ..records.missing import IncompleteRecordsError, refuse_incomplete

    try:
        refuse_incomplete(records, args.path)  # only reference cells missing: the rest is audited
    except IncompleteRecordsError as exc:
        print(f"leaderboard-audit audit: {exc}", file=sys.stderr)
        return 4
    report = audit(
        records,
        seed=settings["seed"],
        n_boot=settings["boot"],
        thresholds=Thresholds.from_mapping(settings["thresholds"]),
        alpha=settings["alpha"],
        path=args.path,
        workers=args.jobs,
    )
    verdicts = [v for s in report["scopes"].values() for v in s["verdicts"]]
    from ..reports.outputs import OUTPUTS

    given = {o.flag: bool(getattr(args, o.key)) for o in OUTPUTS}
    if args.submission:
        from ..engine.gate import GateError, with_gate
        from ..reports.submission_text import render_submission_text

        try:
            with_gate(
                report,
                records,
                args.submission,
                thresholds=Thresholds.from_mapping(settings["thresholds"]),
                alpha=settings["alpha"],
                strict=bool(settings["strict"]),
                allow_undecided=bool(settings["allow_undecided"]),
                gate=args.gate,
            )
        except GateError as exc:
            msg = str(exc).replace("--audit-gate", "--gate").replace("--audit-submission", "--submission")
            print(f"leaderboard-audit audit: {msg}", file=sys.stderr)
            return 2
        print(render_submission_text(report, width=terminal_width()))
    else:
        print(render_summary(report, verdicts, detail=args.summary, width=terminal_width(), hint=cli_hint(given)))
    failed = write_reports(report, args)
    for line in failed:
        print(f"leaderboard-audit audit: {line}", file=sys.stderr)
    if failed:
        return 4
    if args.submission:
        return int(report["submission_audit"]["overall"]["exit_code"])
    statuses = {v["status"] for v in verdicts}
    return 1 if "fail" in statuses or (settings["strict"] and "warn" in statuses) else 0


def terminal_width() -> int:
    """The terminal's width as pytest's plugin reads it (UX review M6: the CLI printed 104-column
    lines in an 80-column pty): ``COLUMNS`` first, then the terminal; 100 when output is not a terminal."""
    import shutil

    from ..reports.terminal import WIDTH

    return shutil.get_terminal_size((WIDTH, 24)).columns


if __name__ == "__main__":
    sys.exit(main())
