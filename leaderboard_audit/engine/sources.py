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
        raise RecordsError.one(str(path), None, "empty records path", fix=records_fix())
    p = Path(path)
    if not p.exists():
        raise RecordsError.one(path, None, "no such file or directory", fix=records_fix())
    from ..formats import is_importer
    from ..importers import load

    if is_importer(fmt):
        opts = {k: v for k, v in (("mapping", mapping), ("metric", metric)) if v is not None}
        try:
            return load(path, fmt, intersect=intersect, **opts)
        except RecordsError as exc:
            from ..importers.decisions import DecisionsNeeded, audit_decisions

            if isinstance(exc, DecisionsNeeded):
                raise
            raise audit_decisions(path, fmt, {**opts, "intersect": intersect}, exc) from None
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
    from ..records.missing import refuse_incomplete

    refuse_incomplete(records, str(path))  # only reference cells missing: the rest is audited
    return records, sha


def records_fix() -> str:
    """What a records path may be, naming no front end's flag (pytest, the CLI and the API share it)."""
    from ..formats import format_names

    return (
        "pass a records-v1 directory, a CSV/TSV/Parquet table (or the folder holding it), a packed file "
        f"(`leaderboard-audit pack SRC -o OUT`), or another harness's runs with their format ({', '.join(format_names())})"
    )


def single_table(d: Path) -> Path | None:
    """A directory holding one long table (``records.parquet``, with or without ``grid.json``,
    beside notes such as a README) and no benchmark directories is that table
    (``records.table.table_in_folder``; a table beside other files is a RecordsError)."""
    from ..records.table import table_in_folder

    return table_in_folder(d)


__all__ = ["load_for_audit", "load_records_for_run", "records_fix", "single_table"]
