"""Records: read, validate and write the correctness tensor (docs/spec/RECORDS.md)."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import Problem, RecordsError
from .grid import DEFAULT_REFERENCE, FORMAT, PAPER_ORDERINGS, Config, Grid
from .model import (
    ANSWER_CLASS_ABSENT,
    ANSWER_CLASSES,
    PRED_ABSENT,
    PRED_UNPARSEABLE,
    UNPARSED_ABSENT,
    Items,
    Records,
    freeze,
)
from .reader import InferredLayoutWarning, InferredLegendWarning, read_records_dir
from .writer import write_records

TABLE_SUFFIXES = (".csv", ".parquet", ".pq", ".tsv")


def load_records(path: str | os.PathLike[str], *, intersect: bool = False) -> Records:
    """Load records from a records-v1 directory, a long CSV/Parquet table or a packed file
    (its arrays read-only: ``model.freeze``); names the reports cannot show apart are refused
    (``names.check_set_names``)."""
    from .names import check_set_names

    rec = _load_records(path, intersect=intersect)
    check_set_names(rec.models, rec.benchmarks, str(path))
    return rec


def _load_records(path: str | os.PathLike[str], *, intersect: bool = False) -> Records:
    """``load_records`` before its name checks."""
    p = Path(path)
    from .packed import is_packed

    if is_packed(p):  # the packed form (records/packed.py), whatever its suffix
        from .packed import read_packed

        return read_packed(p, intersect=intersect)  # frozen by read_packed_meta
    if p.suffix.lower() in TABLE_SUFFIXES and not p.is_dir():
        from .table import read_table

        return freeze(read_table(p, intersect=intersect))
    if p.is_dir():
        from .table import read_table, table_in_folder

        table = table_in_folder(p)  # a folder holding one table (and grid.json, notes)
        if table is not None:
            return freeze(read_table(table, intersect=intersect))
    if p.is_file() and p.suffix.lower() == ".jsonl":
        raise RecordsError.one(
            str(p),
            None,
            "a single .jsonl file is not a records set",
            fix="pass the records directory that holds grid.json",
        )
    return freeze(read_records_dir(p, intersect=intersect))


__all__ = [
    "ANSWER_CLASSES",
    "ANSWER_CLASS_ABSENT",
    "DEFAULT_REFERENCE",
    "FORMAT",
    "PAPER_ORDERINGS",
    "PRED_ABSENT",
    "PRED_UNPARSEABLE",
    "UNPARSED_ABSENT",
    "Config",
    "Grid",
    "InferredLayoutWarning",
    "InferredLegendWarning",
    "Items",
    "Problem",
    "Records",
    "RecordsError",
    "load_records",
    "read_records_dir",
    "write_records",
]
