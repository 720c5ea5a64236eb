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

from .settings import DEFAULT_ALPHA, DEFAULT_BOOT, DEFAULT_SEED, MAX_BOOT, MIN_BOOT


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="leaderboard-audit audit", description="Audit records and print the tables and verdicts."
    )
    from .formats import audit_formats, format_names

    p.add_argument(
        "path", help=f"records-v1 directory, CSV/Parquet table, packed file, or {'/'.join(format_names())} source"
    )
    p.add_argument("--format", default="auto", choices=audit_formats())
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
    p.add_argument("--json", metavar="PATH", help="write the report-v1 JSON")
    p.add_argument("--markdown", metavar="PATH", help="write the Markdown report (at most 1 MB)")
    p.add_argument("--html", metavar="PATH", help="write the self-contained HTML report (at most 3 MB)")
    p.add_argument(
        "--leaderboard",
        metavar="PATH",
        help="write a publishable leaderboard (rank by tier, score with 95%% CI, band, robust, tier, identified "
        "above, configs won, harness card): .md, .csv or .html by suffix",
    )
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
    return p


def write_reports(report: dict[str, Any], args: argparse.Namespace) -> list[str]:
    """Write the requested report files; returns one line per file that could not be written."""
    from .records.writer import atomic_write_bytes
    from .auditor import dumps_report
    from .reports.outputs import written_line

    failed = []
    for flag, path in (
        ("--json", args.json),
        ("--markdown", args.markdown),
        ("--html", args.html),
        ("--leaderboard", args.leaderboard),
    ):
        if not path:
            continue
        try:
            if flag == "--json":
                text = dumps_report(report)
            elif flag == "--markdown" and "submission_audit" in report:  # the gate alone: a PR comment
                from .reports.markdown import gate_markdown

                text = gate_markdown(report)
            elif flag == "--markdown":
                from .reports.markdown import render_markdown

                text = render_markdown(report)
            elif flag == "--leaderboard":
                from .reports.leaderboard import render_leaderboard

                text = render_leaderboard(report, path)
            else:
                from .reports.html import render_html

                text = render_html(report)
            atomic_write_bytes(path, text.encode())
            print(written_line(flag, path, len(text.encode())))
        except OSError as exc:
            failed.append(f"{flag} {path}: cannot write ({exc.strerror or exc})")
    return failed


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # usage errors (2) and --help (0) as a return value
        return exc.code if isinstance(exc.code, int) else 2
    from .reports.outputs import output_problem

    for flag, path, suffixes in (
        ("--json", args.json, None),
        ("--markdown", args.markdown, None),
        ("--html", args.html, None),
        ("--leaderboard", args.leaderboard, (".md", ".csv", ".html")),
    ):
        problem = output_problem(flag, path, suffixes) if path else None
        if problem:  # before the audit runs
            print(f"leaderboard-audit audit: {problem}", file=sys.stderr)
            return 2
    from .sources import load_for_audit
    from .records import RecordsError
    from .auditor import audit
    from .reports.terminal import cli_hint, render_summary
    from .settings import SettingsError, resolve_settings
    from .checks import Thresholds
    from .checks import RegistryError, registry

    try:
        registry()
    except RegistryError as exc:  # B32: the check registry, not --threshold
        print(f"leaderboard-audit audit: registered checks: {exc}", file=sys.stderr)
        return 2
    try:  # the same resolution as pytest --audit: [tool.leaderboard_audit] applies here too
        settings = resolve_settings(
            cli={k: getattr(args, k) for k in ("seed", "boot", "alpha", "strict", "intersect")},
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
    from .records.missing import IncompleteRecordsError, refuse_incomplete

    try:
        refuse_incomplete(records, args.path)  # issue 44: no verdict on an incomplete grid yet
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
    )
    verdicts = [v for s in report["scopes"].values() for v in s["verdicts"]]
    given = {f"--{k}": bool(getattr(args, k)) for k in ("json", "html", "markdown", "leaderboard")}
    if args.submission:
        from .reports.submission_text import render_submission_text
        from .submission import GateError, with_gate

        try:
            with_gate(
                report,
                records,
                args.submission,
                thresholds=Thresholds.from_mapping(settings["thresholds"]),
                alpha=settings["alpha"],
                strict=bool(settings["strict"]),
                gate=args.gate,
            )
        except GateError as exc:
            msg = str(exc).replace("--audit-gate", "--gate").replace("--audit-submission", "--submission")
            print(f"leaderboard-audit audit: {msg}", file=sys.stderr)
            return 2
        print(render_submission_text(report))
    else:
        print(render_summary(report, verdicts, detail=args.summary, hint=cli_hint(given)))
    failed = write_reports(report, args)
    for line in failed:
        print(f"leaderboard-audit audit: {line}", file=sys.stderr)
    if failed:
        return 4
    if args.submission:
        return int(report["submission_audit"]["overall"]["exit_code"])
    statuses = {v["status"] for v in verdicts}
    return 1 if "fail" in statuses or (settings["strict"] and "warn" in statuses) else 0


if __name__ == "__main__":
    sys.exit(main())
