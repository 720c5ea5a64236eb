"""An ``--audit PATH`` (records-v1 directory, long table, lm-eval or HELM run) -> Records."""

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
    if fmt in ("lm-eval", "helm"):
        from .importers import load

        opts = {k: v for k, v in (("mapping", mapping), ("metric", metric)) if v is not None}
        return load(path, fmt, intersect=intersect, **opts)
    if fmt == "table" and not p.is_file():
        raise RecordsError.one(path, None, "--audit-format table needs a CSV or Parquet file")
    if fmt == "records" and not p.is_dir():
        raise RecordsError.one(path, None, "--audit-format records needs a records-v1 directory")
    return None if check_only else load_records(p, intersect=intersect)


__all__ = ["load_for_audit"]
