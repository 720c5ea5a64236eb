"""`leaderboard-audit audit PATH`: the audit without pytest (same report, same verdicts)."""
from __future__ import annotations

import argparse
import sys

from .auditor import DEFAULT_BOOT, DEFAULT_SEED


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="leaderboard-audit audit",
                                description="Audit records and print the tables and verdicts.")
    p.add_argument("path", help="records-v1 directory, CSV/Parquet table, or lm-eval/helm source")
    p.add_argument("--format", default="auto", choices=("auto", "records", "table", "lm-eval", "helm"))
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.add_argument("--boot", type=int, default=DEFAULT_BOOT)
    p.add_argument("--intersect", action="store_true", help="audit only the items common to all models")
    p.add_argument("--threshold", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--json", metavar="PATH", help="write the report-v1 JSON")
    p.add_argument("--markdown", metavar="PATH")
    p.add_argument("--html", metavar="PATH")
    p.add_argument("--strict", action="store_true", help="exit 1 on a warn too")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from .sources import load_for_audit
    from .records import RecordsError
    from .records.writer import atomic_write_bytes
    from .auditor import audit, dumps_report
    from .reports.terminal import render_summary
    from .verdicts import Thresholds
    try:
        pairs = dict(t.split("=", 1) for t in args.threshold)
        thresholds = Thresholds.from_mapping(pairs)
    except ValueError as exc:
        print(f"leaderboard-audit audit: --threshold: {exc}", file=sys.stderr)
        return 2
    try:
        records = load_for_audit(args.path, args.format, intersect=args.intersect)
    except RecordsError as exc:
        print(f"leaderboard-audit audit: {exc}", file=sys.stderr)
        return 4
    report = audit(records, seed=args.seed, n_boot=args.boot, thresholds=thresholds, path=args.path)
    verdicts = [v for s in report["scopes"].values() for v in s["verdicts"]]
    print(render_summary(report, verdicts))
    if args.json:
        atomic_write_bytes(args.json, dumps_report(report).encode())
    if args.markdown:
        from .reports.markdown import render_markdown
        atomic_write_bytes(args.markdown, render_markdown(report).encode())
    if args.html:
        from .reports.html import render_html
        atomic_write_bytes(args.html, render_html(report).encode())
    statuses = {v["status"] for v in verdicts}
    return 1 if "fail" in statuses or (args.strict and "warn" in statuses) else 0


if __name__ == "__main__":
    sys.exit(main())
