"""An ``--audit PATH`` (records-v1 directory, long table, lm-eval, HELM or lighteval run) -> Records."""

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
        raise RecordsError.one(
            str(path), None, "empty records path", fix="pass a records-v1 directory or a CSV/Parquet table to --audit"
        )
    p = Path(path)
    if not p.exists():
        raise RecordsError.one(
            path, None, "no such file or directory", fix="pass a records-v1 directory or a CSV/Parquet table to --audit"
        )
    if fmt in ("lm-eval", "helm", "lighteval"):
        from .importers import load

        opts = {k: v for k, v in (("mapping", mapping), ("metric", metric)) if v is not None}
        return load(path, fmt, intersect=intersect, **opts)
    if fmt == "table" and not p.is_file():
        raise RecordsError.one(path, None, "--audit-format table needs a CSV or Parquet file")
    if fmt == "records" and not p.is_dir():
        raise RecordsError.one(path, None, "--audit-format records needs a records-v1 directory")
    if p.is_dir() and fmt in ("auto", "table"):
        p = single_table(p) or p
    return None if check_only else load_records(p, intersect=intersect)


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


__all__ = ["load_for_audit"]
