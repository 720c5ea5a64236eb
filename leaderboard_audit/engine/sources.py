"""An ``--audit PATH`` (records-v1 directory, long table, or an importer's source) -> Records."""

from __future__ import annotations

from pathlib import Path

from ..checks.base import POOLED
from ..settings import Settings
from ..records import Records, RecordsError, load_records


def load_for_audit(
    path: str,
    fmt: str = "auto",
    *,
    intersect: bool = False,
    mapping: str | None = None,
    metric: str | None = None,
    check_only: bool = False,
) -> Records | None:
    """Records from a records-v1 directory, a long table, or an importer's source.

    ``check_only``: only the checks of the path against the format (the caller loads)."""
    if not str(path).strip():
        raise RecordsError.one(
            str(path), None, "empty records path", fix="pass a records-v1 directory or a CSV/Parquet table to --audit"
        )
    p = Path(path)
    if not p.exists():
        raise RecordsError.one(
            path, None, "no such file or directory", fix="pass a records-v1 directory or a CSV/Parquet table to --audit"
        )
    from ..formats import is_importer
    from ..importers import load

    if is_importer(fmt):
        opts = {k: v for k, v in (("mapping", mapping), ("metric", metric)) if v is not None}
        return load(path, fmt, intersect=intersect, **opts)
    if fmt == "table" and not p.is_file():
        raise RecordsError.one(path, None, "--audit-format table needs a CSV or Parquet file")
    if fmt == "records" and not p.is_dir():
        raise RecordsError.one(path, None, "--audit-format records needs a records-v1 directory")
    if p.is_dir() and fmt in ("auto", "table"):
        p = single_table(p) or p
    return None if check_only else load_records(p, intersect=intersect)


def load_records_for_run(path: str, settings: Settings, fingerprint: str | None = None) -> tuple[Records, str]:
    """(the records an audit run reads from ``path``, the SHA-256 of the bytes they were read
    from): through the load cache where ``settings.cache`` allows it (records-v1 folders and
    tables), else loaded directly. The source is hashed again once loaded: a source replaced
    while it loaded is a ``RecordsError`` ("changed while it was read"), so the fingerprint a
    report certifies is that of the bytes audited. ``fingerprint``: the source's hash already
    taken by the caller."""
    import warnings

    from ..records.fingerprint import sha256_of

    fmt = settings.format
    hash_fmt = fmt
    if fmt in ("auto", "table") and str(path).strip() and Path(path).is_dir():
        path = str(single_table(Path(path)) or path)  # a folder holding one records table
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # inference notes travel in Records.notes
        if fmt in ("auto", "records", "table") and settings.cache != "off" and Path(path).exists():
            load_for_audit(path, fmt, intersect=settings.intersect, check_only=True)
            from ..records.cache import load_cached_entry

            hash_fmt = "auto"  # as the cache hashes it
            records, sha = load_cached_entry(
                path, cache_dir=settings.cache, fingerprint=fingerprint, intersect=settings.intersect
            )
        else:
            sha = (fingerprint or sha256_of(path, fmt)) if Path(path).exists() else None
            records = load_for_audit(
                path, fmt, intersect=settings.intersect, mapping=settings.mapping, metric=settings.metric
            )
            assert records is not None
    after = sha256_of(path, hash_fmt)
    if sha is None:
        sha = after
    if after != sha:
        raise RecordsError.one(
            str(path),
            None,
            f"the records changed while they were read (sha256 {sha[:16]}... before, {after[:16]}... after)",
            fix="audit records nothing writes to during the run, or re-run",
        )
    if POOLED in records.benchmarks:
        raise RecordsError.one(
            str(path),
            None,
            "a benchmark is named 'pooled', the name of the scope over all benchmarks",
            fix="rename that benchmark",
        )
    return records, sha


TABLE_SUFFIXES = (".parquet", ".csv", ".tsv")


def single_table(d: Path) -> Path | None:
    """A directory holding one long table (``records.parquet``, with or without ``grid.json``) and
    no benchmark directories is that table."""
    try:
        entries = [x for x in d.iterdir() if not x.name.startswith(".")]
    except OSError:
        return None
    tables = [x for x in entries if x.is_file() and x.suffix.lower() in TABLE_SUFFIXES]
    others = [x for x in entries if x not in tables and x.name != "grid.json"]
    return tables[0] if len(tables) == 1 and not others else None


__all__ = ["load_for_audit", "load_records_for_run", "single_table"]
