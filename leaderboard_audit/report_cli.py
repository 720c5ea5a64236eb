"""`leaderboard-audit audit PATH`: the audit without pytest (same report, same verdicts).

Exit status: 0 every check passed (or warned, without --strict); 1 a check failed (or
warned, with --strict); 2 a usage error (bad option value: one line naming the option);
4 the records were refused, or a report file could not be written (the summary is
printed first, so the results are never lost).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .settings import DEFAULT_BOOT, DEFAULT_SEED, MAX_BOOT, MIN_BOOT


def boot_count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of resamples") from None
    if not MIN_BOOT <= n <= MAX_BOOT:
        raise argparse.ArgumentTypeError(f"{n}: use between {MIN_BOOT:,} and {MAX_BOOT:,} resamples")
    return n


def seed_value(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"{n}: the seed must be 0 or more")
    return n


def threshold_pair(text: str) -> tuple[str, str]:
    """``NAME=VALUE`` with a known name and a finite number (a whole one for integer thresholds)."""
    from .verdicts import Thresholds

    names = Thresholds.names()
    if "=" not in text:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected NAME=VALUE, e.g. band_pass=0.02 (names: {', '.join(names)})"
        )
    name, value = (part.strip() for part in text.split("=", 1))
    if name not in names:
        raise argparse.ArgumentTypeError(f"unknown threshold {name!r} (names: {', '.join(names)})")
    try:
        Thresholds({name: value})
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return name, value


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="leaderboard-audit audit", description="Audit records and print the tables and verdicts."
    )
    p.add_argument("path", help="records-v1 directory, CSV/Parquet table, packed file, or lm-eval/helm source")
    p.add_argument("--format", default="auto", choices=("auto", "records", "table", "lm-eval", "helm"))
    p.add_argument("--seed", type=seed_value, default=DEFAULT_SEED)
    p.add_argument(
        "--boot",
        type=boot_count,
        default=DEFAULT_BOOT,
        help=f"bootstrap resamples ({MIN_BOOT:,} to {MAX_BOOT:,}; default {DEFAULT_BOOT:,})",
    )
    p.add_argument("--intersect", action="store_true", help="audit only the items common to all models")
    p.add_argument("--threshold", action="append", default=[], metavar="NAME=VALUE", type=threshold_pair)
    p.add_argument("--json", metavar="PATH", help="write the report-v1 JSON")
    p.add_argument("--markdown", metavar="PATH")
    p.add_argument("--html", metavar="PATH")
    p.add_argument(
        "--leaderboard",
        metavar="PATH",
        help="write a publishable leaderboard (rank by tier, score with 95%% CI, band, robust, tier, identified "
        "above, configs won, harness card): .md, .csv or .html by suffix",
    )
    p.add_argument("--strict", action="store_true", help="exit 1 on a warn too")
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
    from .reports.terminal import CLI_HINT, render_summary
    from .verdicts import Thresholds
    from .checks import RegistryError, registry

    try:
        registry()
    except RegistryError as exc:  # B32: the check registry, not --threshold
        print(f"leaderboard-audit audit: registered checks: {exc}", file=sys.stderr)
        return 2
    try:
        thresholds = Thresholds.from_mapping(dict(args.threshold))
    except (ValueError, TypeError) as exc:
        print(f"leaderboard-audit audit: --threshold: {exc}", file=sys.stderr)
        return 2
    try:
        records = load_for_audit(args.path, args.format, intersect=args.intersect)
    except RecordsError as exc:
        print(f"leaderboard-audit audit: {exc}", file=sys.stderr)
        return 4
    report = audit(records, seed=args.seed, n_boot=args.boot, thresholds=thresholds, path=args.path)
    verdicts = [v for s in report["scopes"].values() for v in s["verdicts"]]
    print(render_summary(report, verdicts, hint=CLI_HINT))
    failed = write_reports(report, args)
    for line in failed:
        print(f"leaderboard-audit audit: {line}", file=sys.stderr)
    if failed:
        return 4
    statuses = {v["status"] for v in verdicts}
    return 1 if "fail" in statuses or (args.strict and "warn" in statuses) else 0


if __name__ == "__main__":
    sys.exit(main())
