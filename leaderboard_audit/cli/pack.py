"""`leaderboard-audit pack SRC -o OUT` and `leaderboard-audit cache` (docs/records.md, "Packed records")."""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    from ..formats import audit_format_arg, audit_format_metavar, format_names

    p = argparse.ArgumentParser(
        prog="leaderboard-audit pack",
        description="Write records in the packed form (one Arrow IPC file, "
        "bits packed 8 per byte) that --audit reads fast.",
    )
    p.add_argument(
        "src",
        help="anything --audit reads: records-v1 directory, CSV/Parquet table, "
        f"packed file, or an importer's source ({', '.join(format_names())}; with --format)",
    )
    p.add_argument("-o", "--output", required=True, help="packed file to write (e.g. records.arrow)")
    p.add_argument("--format", default="auto", type=audit_format_arg(), metavar=audit_format_metavar())
    p.add_argument("--intersect", action="store_true", help="keep only the items common to all models")
    p.add_argument("--mapping", help="importers: the mapping file (docs/importers.md)")
    p.add_argument("--metric", help="importers: the per-sample 0/1 metric")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from ..engine.sources import load_for_audit
    from ..records import RecordsError
    from ..records.packed import write_packed

    try:
        rec = load_for_audit(args.src, args.format, intersect=args.intersect, mapping=args.mapping, metric=args.metric)
    except RecordsError as exc:
        print(f"leaderboard-audit pack: {exc}", file=sys.stderr)
        return 4
    try:
        out = write_packed(rec, args.output)
    except OSError as exc:
        print(f"leaderboard-audit pack: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return 4
    for note in rec.notes:
        print(f"note: {note}", file=sys.stderr)
    M, N, K = rec.shape
    from ..reports.words import count

    print(
        f"packed {args.src}: {count(M, 'model')} x {count(N, 'item')} x {count(K, 'config')} -> {out} "
        f"({out.stat().st_size:,} bytes)"
    )
    return 0


def cache_main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="leaderboard-audit cache", description="Show or clear the records load cache (docs/records.md)."
    )
    p.add_argument(
        "--dir",
        help="the cache folder (default: $LEADERBOARD_AUDIT_CACHE or $XDG_CACHE_HOME/leaderboard-audit/records)",
    )
    p.add_argument("--clear", action="store_true", help="delete every entry")
    args = p.parse_args(argv)
    from ..records.cache import cache_info, clear_cache, resolve_cache_dir
    from ..records.cache_owner import MARKER, owns

    folder = resolve_cache_dir(args.dir)
    if folder is not None and folder.is_dir() and not owns(folder):
        print(f"cache: {folder} is not a leaderboard-audit cache (no {MARKER} in it): nothing there is touched")
        return 0
    if args.clear:
        removed = clear_cache(args.dir)
        print(f"removed {removed} cache {'entry' if removed == 1 else 'entries'}")
    folder, n, size = cache_info(args.dir)
    print(
        f"cache: {folder if folder is not None else 'disabled (LEADERBOARD_AUDIT_CACHE=off)'}: "
        f"{n} {'entry' if n == 1 else 'entries'}, {size:,} bytes"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
