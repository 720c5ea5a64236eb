"""An ``--audit PATH`` (records-v1 directory, long table, or an importer's source) -> Records."""

from __future__ import annotations

from pathlib import Path

from .records import Records, RecordsError, load_records


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
    from .formats import is_importer
    from .importers import load

    if is_importer(fmt):
        opts = {k: v for k, v in (("mapping", mapping), ("metric", metric)) if v is not None}
        try:
            return load(path, fmt, intersect=intersect, **opts)
        except RecordsError as exc:
            from .importers.decisions import DecisionsNeeded, audit_decisions

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


def records_fix() -> str:
    """What a records path may be, naming no front end's flag (pytest, the CLI and the API share it)."""
    from .formats import format_names

    return (
        "pass a records-v1 directory, a CSV/TSV/Parquet table (or the folder holding it), a packed file "
        f"(`leaderboard-audit pack SRC -o OUT`), or another harness's runs with their format ({', '.join(format_names())})"
    )


def single_table(d: Path) -> Path | None:
    """A directory holding one long table (``records.parquet``, with or without ``grid.json``,
    beside notes such as a README) and no benchmark directories is that table
    (``records.table.table_in_folder``; a table beside other files is a RecordsError)."""
    from .records.table import table_in_folder

    return table_in_folder(d)


__all__ = ["load_for_audit"]
