"""The long table: one row per (model, benchmark, item, config) (docs/spec/RECORDS.md, "Other accepted inputs").

Columns ``model, benchmark, item_id, config, correct`` are required; ``gold``,
``pred``, ``margin``, ``question``, ``answer_class`` and ``unparsed`` are optional;
other columns are ignored.
The legend is the ``grid.json`` in the table's directory, or is inferred from
the config keys (with the same :class:`InferredLegendWarning` as the directory
reader). Rows are pivoted into the same per-(benchmark, model) :class:`ModelFile`
blocks the directory reader builds and aligned by the same :func:`assemble`, so
ordering and matching rules are identical for both inputs.

Where a problem is reported: CSV/TSV rows by their line in the file (the header
is line 1, so the first data row is line 2); Parquet rows as ``row N`` counted
from 0, as pandas and pyarrow index them.

Value conventions of the table (both formats):

* ``correct``: 0/1 or true/false (a CSV cell ``0``, ``1``, ``true``, ``false``;
  a Parquet integer or boolean column), or a graded outcome: a number from 0 to 1
  (records/graded.py; a CSV cell such as ``0.5``, a Parquet float column). NaN, a
  number outside [0, 1] or other text is refused, naming the line or row.
* ``gold``: an integer is an option index, anything else a letter; empty = unknown.
* ``pred``: the predicted option index; ``-1`` (or ``null`` in CSV) = unparseable
  answer; empty/null = no prediction recorded.
* ``margin``: a finite number; empty/null = none recorded.
* ``answer_class``: one of ``ANSWER_CLASSES``; empty = none recorded.
* ``unparsed``: the item's count of unparseable generation answers, the same on every
  row of a (model, item) that has one; empty = none recorded.
* ``missing``: why the cell has no answer (``not_collected``, ``not_possible``, ``failed``;
  records/missing.py); ``correct`` is then empty (null). Empty = the cell was observed.
"""

from __future__ import annotations

import json
import math
import os
import re
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import MAX_SHOWN, ProblemLog, RecordsError
from .parquet_bounds import read_bounded
from .graded import FIX_SCORE, graded_values, normalised_score
from .grid import Grid, infer_grid
from .layout import confined
from .legend import find_legend
from .missing import MISSING_REASONS, REASON_CODE
from .model import ANSWER_CLASS_ABSENT, ANSWER_CLASSES, PRED_ABSENT, PRED_UNPARSEABLE, UNPARSED_ABSENT, Records
from .names import RESERVED_FIX, benchmark_name_problem, reserved_benchmark
from .reader import InferredLegendWarning, ModelFile, assemble, read_grid_file

if TYPE_CHECKING:  # pandas is imported lazily: the directory reader does not need it
    import pandas as pd

REQUIRED = ("model", "benchmark", "item_id", "config", "correct")
OPTIONAL = ("gold", "pred", "margin", "question", "answer_class", "unparsed", "missing")
CSV_SUFFIXES = {".csv": ",", ".tsv": "\t"}
PARQUET_SUFFIXES = (".parquet", ".pq")
_BITS = {"0": 0, "1": 1, "true": 1, "false": 0, "True": 1, "False": 0, "TRUE": 1, "FALSE": 0}
_MAX_PRED = 32000
# A table from a stranger is bounded before it is decoded (docs/reliability.md): Parquet from its
# footer and its dictionaries (records/parquet_bounds.py), CSV by its size (fstat, nothing read).
MAX_TABLE_ROWS = 20_000_000
MAX_TABLE_VALUES = 250_000_000
MAX_TABLE_TEXT_BYTES = 2 * 1024**3
MAX_TABLE_CSV_BYTES = 2 * 1024**3
TABLE_KEY = b"leaderboard-audit-table"  # Parquet schema metadata: the rows and columns write_table wrote
FIX_TABLE = (
    "the long table needs one row per (model, benchmark, item_id, config) with correct = 0/1; see docs/records.md"
)


def _cell(v: Any, limit: int = 60) -> str:
    null = v is None or (isinstance(v, float) and math.isnan(v)) or type(v).__name__ == "NAType"
    text = "null" if null else str(v)
    return text if len(text) <= limit else text[:limit] + "..."


class _Table:
    """A decoded table plus where each row came from."""

    def __init__(self, path: Path, df: pd.DataFrame, where: np.ndarray, unit: str, text: bool):
        self.path = str(path)
        self.df = df
        self.where = where  # line (CSV) or row (Parquet) of each row
        self.unit = unit
        self.text = text  # True: every cell is a string (CSV/TSV)

    def report(self, log: ProblemLog, rows: np.ndarray, message, fix: str | None = None) -> None:
        """Add one problem per row in ``rows`` (shows the first few, counts the rest)."""
        rows = np.asarray(rows)
        for r in rows[:MAX_SHOWN].tolist():
            log.add(self.path, int(self.where[r]), message(r), fix=fix, unit=self.unit)
        rest = len(rows) - min(len(rows), MAX_SHOWN)
        if rest:
            log.total += rest
            if fix and log.fix is None:
                log.fix = fix


def _open(path: Path):
    from .safe_io import open_regular

    return open_regular(path, "the table")


def _csv_header(path: Path, sep: str) -> list[str]:
    """The header's column names, parsed with the csv module (pandas renames duplicates)."""
    import csv
    import io

    with _open(path) as fh:
        head = fh.read(1 << 20)
    text = head.decode("utf-8", errors="replace")
    try:
        return next(csv.reader(io.StringIO(text), delimiter=sep), [])
    except csv.Error:
        return []


def _refuse_duplicate_columns(spath: str, names: list[str], line: int | None) -> None:
    wanted = set(REQUIRED + OPTIONAL)
    dups = sorted({n for n in names if n in wanted and names.count(n) > 1})
    if dups:
        raise RecordsError.one(
            spath, line, f"column(s) {dups} appear more than once in the header", fix="keep one column of each name"
        )


def _read_csv(path: Path, sep: str) -> _Table:
    import pandas as pd

    spath = str(path)
    with _open(path) as fh:
        from .lines import size_problem

        why = size_problem(fh, MAX_TABLE_CSV_BYTES)
    if why is not None:
        raise RecordsError.one(spath, None, why, fix="pack a set this large (leaderboard-audit pack)")
    _refuse_duplicate_columns(spath, _csv_header(path, sep), 1)
    try:
        with warnings.catch_warnings(), _open(path) as fh:
            warnings.simplefilter("error", pd.errors.ParserWarning)
            df = pd.read_csv(
                fh,
                sep=sep,
                dtype=str,
                index_col=False,
                keep_default_na=False,
                na_filter=False,
                skip_blank_lines=False,
                encoding="utf-8",
                engine="c",
            )
    except pd.errors.EmptyDataError:
        raise RecordsError.one(spath, None, "empty file: no header and no rows", fix=FIX_TABLE) from None
    except pd.errors.ParserWarning as exc:
        raise RecordsError.one(spath, None, f"rows have more fields than the header ({exc})", fix=FIX_TABLE) from None
    except pd.errors.ParserError as exc:
        import re

        m = re.search(r"line (\d+)", str(exc))
        raise RecordsError.one(
            spath,
            int(m.group(1)) if m else None,
            f"unreadable {path.suffix[1:].upper()} ({str(exc)[:200]})",
            fix=FIX_TABLE,
        ) from None
    except UnicodeDecodeError as exc:
        raise RecordsError.one(spath, None, f"not UTF-8 text ({exc})", fix=FIX_TABLE) from None
    except (ValueError, OSError, MemoryError) as exc:
        raise RecordsError.one(
            spath, None, f"cannot read the table ({type(exc).__name__}: {str(exc)[:200]})", fix=FIX_TABLE
        ) from None
    df, where = _drop_blank_lines(df, _csv_lines(path, df))
    return _Table(path, df, where, "line", text=True)


def _csv_lines(path: Path, df: pd.DataFrame) -> np.ndarray:
    """Line of each row: header is line 1. A quoted cell holding newlines shifts the rows
    below it; count them only when the file has more newlines than rows (cheap check)."""
    n = len(df)
    where = np.arange(2, n + 2, dtype=np.int64)
    if n:
        with _open(path) as fh:
            newlines = sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 22), b""))
        if newlines > n + 1:
            extra = np.zeros(n, dtype=np.int64)
            for c in df.columns:
                extra += df[c].str.count("\n").to_numpy(dtype=np.int64)
            where[1:] += np.cumsum(extra)[:-1]
    return where


def _drop_blank_lines(df: pd.DataFrame, where: np.ndarray) -> tuple[pd.DataFrame, np.ndarray]:
    """Blank lines (skip_blank_lines=False kept them so lines could be counted)."""
    if not len(df):
        return df, where
    blank = np.array((df.iloc[:, 0] == "").to_numpy(), dtype=bool)
    if blank.any():
        for c in df.columns[1:]:
            cand = np.flatnonzero(blank)
            blank[cand] = (df[c].iloc[cand] == "").to_numpy()
    if blank.any():
        keep = ~blank
        df = df.loc[keep].reset_index(drop=True)
        where = where[keep]
    return df, where


# Arrow types each column may have (anything else, e.g. after a flipped bit in the schema,
# is one clear error before pandas sees the data).
_ARROW_KINDS = {
    "model": "s",
    "benchmark": "s",
    "config": "s",
    "question": "s",
    "item_id": "si",
    "gold": "si",
    "correct": "ibf",
    "pred": "sif",
    "margin": "sif",
    "answer_class": "s",
    "unparsed": "sif",
    "missing": "s",
}
_KIND_TEXT = {
    "s": "strings",
    "si": "strings or integers",
    "ibf": "0/1 integers, booleans or numbers in [0, 1]",
    "sif": "numbers",
}


def _arrow_kind(t) -> str:
    import pyarrow as pa

    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_null(t):
        return "s"
    if pa.types.is_integer(t):
        return "i"
    if pa.types.is_boolean(t):
        return "b"
    if pa.types.is_floating(t):
        return "f"
    return "?"


def _nullable_dtype(t):
    """Integer and boolean columns as pandas' nullable dtypes, so a null stays a null."""
    import pandas as pd
    import pyarrow as pa

    if pa.types.is_integer(t):
        return pd.Int64Dtype()
    if pa.types.is_boolean(t):
        return pd.BooleanDtype()
    return None


def _check_written_shape(spath: str, pf: Any, n_read: int) -> None:
    """A table ``write_table`` wrote carries its row count and column names (``TABLE_KEY``): the
    footer is not covered by the page checksums, and one flipped bit there dropped a model's
    rows, or renamed an optional column out of the reader's sight, silently (found by
    benchmarks/fuzz_reliability.py, issue 46)."""
    raw = (pf.schema_arrow.metadata or {}).get(TABLE_KEY)
    if raw is None:  # written by another tool: the structural checks only
        return
    try:
        shape = json.loads(raw)
        rows, columns = int(shape["rows"]), list(shape["columns"])
    except (ValueError, TypeError, KeyError, RecursionError):
        rows, columns = -1, []
    if rows != pf.metadata.num_rows or rows != n_read or columns != pf.schema_arrow.names:
        raise RecordsError.one(
            spath,
            None,
            f"damaged: written with {rows:,} rows and columns {columns}; its footer says "
            f"{pf.metadata.num_rows:,} rows and columns {pf.schema_arrow.names}, and {n_read:,} were read",
            fix="restore the file from its source (write_table re-creates it)",
        )


def _read_parquet(path: Path) -> _Table:
    spath = str(path)
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise RecordsError.one(
            spath, None, "reading Parquet needs pyarrow", fix="pip install 'leaderboard-audit[parquet]'"
        ) from None
    try:
        with _open(path) as fh:
            pf = pq.ParquetFile(fh, page_checksum_verification=True)
            names = pf.schema_arrow.names
            _refuse_duplicate_columns(spath, names, None)
            cols = [c for c in names if c in REQUIRED + OPTIONAL]
            for c in cols:
                kind = _arrow_kind(pf.schema_arrow.field(c).type)
                if kind not in _ARROW_KINDS[c]:
                    raise RecordsError.one(
                        spath,
                        None,
                        f"column {c!r} must hold {_KIND_TEXT[_ARROW_KINDS[c]]}, "
                        f"got Arrow type {pf.schema_arrow.field(c).type}",
                        fix=FIX_TABLE,
                    )
            fh.seek(0)
            table, why = read_bounded(
                fh,
                cols,
                max_rows=MAX_TABLE_ROWS,
                max_values=MAX_TABLE_VALUES,
                max_text_bytes=MAX_TABLE_TEXT_BYTES,
                page_checksum_verification=True,
            )
            if why is not None:
                raise RecordsError.one(spath, None, why, fix="pack a set this large (leaderboard-audit pack)")
            _check_written_shape(spath, pf, table.num_rows)
            table.validate(full=True)  # e.g. invalid UTF-8 in a string column, caught here, not later
        # ignore_metadata: never rebuild pandas objects from metadata stored in the file
        df = table.to_pandas(ignore_metadata=True, types_mapper=_nullable_dtype)
    except RecordsError:
        raise
    except Exception as exc:  # noqa: BLE001 - a corrupt file can make pyarrow raise almost anything
        raise RecordsError.one(
            spath,
            None,
            f"unreadable Parquet, corrupt or not Parquet ({type(exc).__name__}: {str(exc)[:200]})",
            fix=FIX_TABLE,
        ) from None
    return _Table(path, df, np.arange(len(df), dtype=np.int64), "row", text=False)


class _Col:
    """A column factorized: ``codes`` (-1 where empty or null) into ``uniques`` (Python values).

    Everything row-wise works on the integer codes; only the distinct values
    (models, benchmarks, item ids, config keys: few) become Python objects.
    """

    def __init__(self, codes: np.ndarray, uniques: np.ndarray):
        self.codes = codes
        self.uniques = uniques

    def value(self, r: int) -> Any:
        c = int(self.codes[r])
        return None if c < 0 else self.uniques[c]


def _factorize(t: _Table, name: str) -> tuple[np.ndarray, np.ndarray]:
    import pandas as pd

    codes, uniq = pd.factorize(t.df[name], use_na_sentinel=True)
    return np.asarray(codes, dtype=np.int64), np.asarray(uniq, dtype=object)


def _text(t: _Table, name: str, log: ProblemLog, *, allow_int: bool = False) -> _Col | None:
    """A text column (None if its type is wrong); empty strings count as missing."""
    import pandas as pd

    codes, uniq = _factorize(t, name)
    kind = pd.api.types.infer_dtype(uniq, skipna=True)
    if kind == "integer" and allow_int and not t.text:
        uniq = np.array([str(int(u)) for u in uniq], dtype=object)
    elif kind not in ("string", "empty"):
        log.add(t.path, None, f"column {name!r} must hold strings, got {kind} values", fix=FIX_TABLE)
        return None
    empty = np.array([u == "" for u in uniq.tolist()] + [True], dtype=bool)
    if empty[:-1].any():
        codes = np.where(empty[codes], -1, codes)
    return _Col(codes, uniq)


def _numbers(t: _Table, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """A numeric column as float64 per row, plus masks ``absent`` and ``unparseable_text``.

    Text cells are converted once per distinct value; ``null`` text is flagged so
    ``pred`` can read it as an unparseable answer. None if the column is not numeric.
    """
    import pandas as pd

    s = t.df[name]
    if t.text or pd.api.types.infer_dtype(s.head(1000), skipna=True) in ("string", "empty"):
        codes, uniq = _factorize(t, name)
        if pd.api.types.infer_dtype(uniq, skipna=True) not in ("string", "empty"):
            return None
        blank = np.array([u.strip() == "" for u in uniq.tolist()] + [True], dtype=bool)
        is_null = np.array([u == "null" for u in uniq.tolist()] + [False], dtype=bool)
        conv = pd.to_numeric(pd.Series(uniq, dtype=object), errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        vals = np.append(conv, np.nan)
        return vals[codes], blank[codes], is_null[codes]
    if pd.api.types.is_bool_dtype(s.dtype) or pd.api.types.is_numeric_dtype(s.dtype):
        v = np.array(s.to_numpy(dtype=np.float64, na_value=np.nan))
        return v, np.isnan(v) & s.isna().to_numpy(), np.zeros(len(v), dtype=bool)
    return None


def _bits(t: _Table, log: ProblemLog) -> tuple[np.ndarray, np.ndarray, np.ndarray | None] | None:
    """``correct`` as int8 bits (``score == 1``), a mask of the rows whose value is not an
    outcome, and the outcomes themselves (float64) when some is graded (records/graded.py)."""
    import pandas as pd

    s = t.df["correct"]
    if t.text or pd.api.types.infer_dtype(s.head(1000), skipna=True) in ("string", "empty"):
        codes, uniq = _factorize(t, "correct")
        conv = np.array([_outcome_text(u) for u in uniq.tolist()] + [np.nan], dtype=np.float64)
        v = conv[codes]
    elif pd.api.types.is_bool_dtype(s.dtype) or pd.api.types.is_integer_dtype(s.dtype):
        v = s.to_numpy(dtype=np.float64, na_value=np.nan)
    elif pd.api.types.is_float_dtype(s.dtype):
        v = s.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        log.add(
            t.path,
            None,
            f"column 'correct' must hold 0/1, true/false or numbers in [0, 1], got "
            f"{pd.api.types.infer_dtype(s, skipna=True)} values",
            fix=FIX_TABLE,
        )
        return None
    with np.errstate(invalid="ignore"):
        bad = ~((v >= 0) & (v <= 1))  # NaN is bad
    v = np.where(bad, 0.0, v)
    return (v == 1).astype(np.int8), bad, v if graded_values(v) else None


_NUMBER = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?", re.ASCII)


def _outcome_text(u: Any) -> float:
    """A CSV cell's outcome: a bit word (``0``, ``true``, ...) or a plain decimal number
    (no sign, no spaces); NaN for anything else (the caller reports it)."""
    if not isinstance(u, str):
        return np.nan
    if u in _BITS:
        return float(_BITS[u])
    return float(u) if _NUMBER.fullmatch(u) else np.nan


def _pred(t: _Table, log: ProblemLog) -> tuple[np.ndarray, np.ndarray] | None:
    """``pred`` as int16 (PRED_ABSENT where empty) and a mask of invalid rows."""
    got = _numbers(t, "pred")
    if got is None:
        log.add(t.path, None, "column 'pred' must hold option indices", fix=FIX_TABLE)
        return None
    v, absent, unparse = got
    v = np.where(unparse, PRED_UNPARSEABLE, v)
    with np.errstate(invalid="ignore"):
        ok = absent | ((v == np.floor(v)) & (v >= PRED_UNPARSEABLE) & (v < _MAX_PRED))
    out = np.where(absent | ~ok, PRED_ABSENT, np.nan_to_num(v)).astype(np.int16)
    return out, ~ok


def _margin(t: _Table, log: ProblemLog) -> tuple[np.ndarray, np.ndarray] | None:
    """``margin`` as float64 (NaN where empty) and a mask of invalid rows."""
    got = _numbers(t, "margin")
    if got is None:
        log.add(t.path, None, "column 'margin' must hold numbers", fix=FIX_TABLE)
        return None
    v, absent, _ = got
    bad = ~absent & ~np.isfinite(v)
    return np.where(absent | bad, np.nan, v), bad


def _answer_class(t: _Table, log: ProblemLog) -> tuple[np.ndarray, np.ndarray] | None:
    """``answer_class`` as int8 codes into ANSWER_CLASSES (ANSWER_CLASS_ABSENT where empty)
    and a mask of rows holding an unknown class."""
    col = _text(t, "answer_class", log)
    if col is None:
        return None
    known = np.array(
        [ANSWER_CLASSES.index(u) if u in ANSWER_CLASSES else -2 for u in col.uniques.tolist()] + [ANSWER_CLASS_ABSENT],
        dtype=np.int8,
    )
    codes = known[col.codes]
    return np.where(codes == -2, ANSWER_CLASS_ABSENT, codes).astype(np.int8), codes == -2


def _unparsed(t: _Table, log: ProblemLog) -> tuple[np.ndarray, np.ndarray] | None:
    """``unparsed`` as int16 (UNPARSED_ABSENT where empty) and a mask of invalid rows."""
    got = _numbers(t, "unparsed")
    if got is None:
        log.add(t.path, None, "column 'unparsed' must hold counts", fix=FIX_TABLE)
        return None
    v, absent, _ = got
    with np.errstate(invalid="ignore"):
        ok = absent | ((v == np.floor(v)) & (v >= 0) & (v < _MAX_PRED))
    return np.where(absent | ~ok, UNPARSED_ABSENT, np.nan_to_num(v)).astype(np.int16), ~ok


def _correct_empty(t: _Table) -> np.ndarray:
    """Rows whose ``correct`` is empty: an empty or ``null`` CSV cell, a Parquet null."""
    s = t.df["correct"]
    empty = np.array(s.isna().to_numpy(), dtype=bool)
    if t.text or s.dtype == object:
        empty = empty | np.array(s.isin(["", "null"]).to_numpy(), dtype=bool)
    return empty


def _missing(
    t: _Table, log: ProblemLog, bits: tuple[np.ndarray, np.ndarray] | None
) -> tuple[np.ndarray, np.ndarray] | None:
    """``missing`` as int8 reason codes per row (0 where empty: observed); a row with an unknown
    reason, or with a reason and a ``correct`` value, is a problem reported here."""
    col = _text(t, "missing", log)
    if col is None or bits is None:
        return None
    known = np.array([REASON_CODE.get(u, -1) for u in col.uniques.tolist()] + [0], dtype=np.int8)
    codes = known[col.codes]
    empty = _correct_empty(t)
    fix = f"'missing' is empty for an observed cell, else one of {list(MISSING_REASONS)} with 'correct' empty"
    t.report(
        log,
        np.flatnonzero(codes < 0),
        lambda r: f"row's missing = {_cell(t.df['missing'].iat[r])} is not one of {list(MISSING_REASONS)}",
        fix=fix,
    )
    t.report(
        log,
        np.flatnonzero((codes > 0) & ~empty),
        lambda r: (
            f"correct = {_cell(t.df['correct'].iat[r])} but missing = {_cell(t.df['missing'].iat[r])}: "
            "a missing cell has no correctness value"
        ),
        fix=fix,
    )
    return np.where(codes < 0, 0, codes).astype(np.int8)


def _first_per_group(col: _Col, grp: np.ndarray, G: int) -> np.ndarray:
    """First non-empty value of each group (object array, None where a group has none)."""
    first = np.full(G, -1, dtype=np.int64)
    have = np.flatnonzero(col.codes >= 0)
    if have.size:
        # reversed assignment: the earliest row of each group is written last and wins
        first[grp[have][::-1]] = col.codes[have][::-1]
    return np.append(col.uniques, None)[first]


def _gold_values(gold: np.ndarray) -> list[Any]:
    """Integers are option indices, other text is a letter (as ``gold`` in JSONL)."""
    out: list[Any] = []
    for g in gold.tolist():
        if isinstance(g, str):
            t = g.strip()
            if t.lstrip("-").isdigit() and t.isascii() and len(t) < 10:
                out.append(int(t))
                continue
        out.append(g)
    return out


def read_table(path: str | os.PathLike[str], *, intersect: bool = False) -> Records:
    """Load records from a long table (CSV, TSV or Parquet) next to its grid.json.

    Validation follows the directory reader: every problem is a :class:`RecordsError`
    naming the file and the line (CSV) or row (Parquet). With ``intersect=True`` items
    missing for some model are dropped and counted in ``Records.dropped``.
    """
    p = Path(path)
    t = _load_table(p)
    grid = _legend_beside(p)
    cells = _decode_rows(t)
    grid, notes = _legend_or_inferred(grid, cells, p)
    cfg = _config_positions(t, cells, grid)
    groups = _pivot(t, cells, cfg, grid.keys)
    rec = assemble(_model_files(t, cells, groups), grid, t.path, intersect=intersect, notes=notes)
    return _with_per_cell_extras(t, rec, cells, groups, cfg)


def _load_table(p: Path) -> _Table:
    """The decoded table; its required columns present and at least one row."""
    suffix = p.suffix.lower()
    if suffix not in CSV_SUFFIXES and suffix not in PARQUET_SUFFIXES:
        raise RecordsError.one(str(p), None, f"unknown table type {suffix!r}", fix="use .csv, .tsv, .parquet or .pq")
    if not p.exists():
        raise RecordsError.one(str(p), None, "no such file")
    t = _read_parquet(p) if suffix in PARQUET_SUFFIXES else _read_csv(p, CSV_SUFFIXES[suffix])
    missing = [c for c in REQUIRED if c not in t.df.columns]
    if missing:
        raise RecordsError.one(
            t.path,
            1 if t.text else None,
            f"missing required column(s) {missing}; the header has {[str(c) for c in t.df.columns][:20]}",
            fix=FIX_TABLE,
        )
    if len(t.df) == 0:
        raise RecordsError.one(t.path, None, "empty file: no records", fix=FIX_TABLE)
    return t


def _legend_beside(p: Path) -> Grid | None:
    """The legend in the table's directory (any name of ``LEGEND_NAMES``), or None."""
    gpath = find_legend(p.parent)
    if gpath is None:
        return None
    confined(gpath, p.parent.resolve(), gpath.name)
    return read_grid_file(gpath)


@dataclass
class _Cells:
    """Stage 1: every column decoded on its own, row by row."""

    model: _Col
    bench: _Col
    item: _Col
    config: _Col
    bits: tuple[np.ndarray, np.ndarray]
    pred: tuple[np.ndarray, np.ndarray] | None
    margin: tuple[np.ndarray, np.ndarray] | None
    gold: _Col | None
    question: _Col | None
    answer_class: tuple[np.ndarray, np.ndarray] | None = None
    unparsed: tuple[np.ndarray, np.ndarray] | None = None
    missing: np.ndarray | None = None  # per row: reason code (records/missing.py), 0 = observed
    score: np.ndarray | None = None  # per row: the outcome (records/graded.py) when some is graded

    def who(self, r: int) -> str:
        return (
            f"model {_cell(self.model.value(r))!r}, item {_cell(self.item.value(r))!r} of benchmark "
            f"{_cell(self.bench.value(r))!r}, config {_cell(self.config.value(r))!r}"
        )


def _decode_rows(t: _Table) -> _Cells:
    log = ProblemLog()
    cols = {c: _text(t, c, log, allow_int=(c == "item_id")) for c in REQUIRED[:4]}
    got = _bits(t, log)
    bits, score = (got[:2], got[2]) if got is not None else (None, None)
    optional = {c: c in t.df.columns for c in OPTIONAL}
    pred = _pred(t, log) if optional["pred"] else None
    margin = _margin(t, log) if optional["margin"] else None
    gold = _text(t, "gold", log, allow_int=True) if optional["gold"] else None
    question = _text(t, "question", log) if optional["question"] else None
    answer_class = _answer_class(t, log) if optional["answer_class"] else None
    unparsed = _unparsed(t, log) if optional["unparsed"] else None
    missing = _missing(t, log, bits) if optional["missing"] else None
    log.raise_if_any()
    model, bench, item, config = (cols[c] for c in REQUIRED[:4])
    assert model and bench and item and config and bits
    if missing is not None:  # a missing cell's empty `correct` is not a bad bit
        bits = (bits[0], bits[1] & (missing == 0))
    cells = _Cells(
        model,
        bench,
        item,
        config,
        bits,
        pred,
        margin,
        gold,
        question,
        answer_class,
        unparsed,
        missing,
        score,
    )
    for name, col in cols.items():
        t.report(log, np.flatnonzero(col.codes < 0), lambda r, name=name: f"empty {name!r}", fix=FIX_TABLE)
    log.raise_if_any()
    _report_bad_values(t, cells, log)
    _report_bad_benchmarks(t, cells, log)
    log.raise_if_any()
    return cells


def _report_bad_values(t: _Table, cells: _Cells, log: ProblemLog) -> None:
    def raw(name: str, r: int) -> str:
        return _cell(t.df[name].iat[r])

    def bit_msg(r: int) -> str:
        v = raw("correct", r)
        return (
            f"{cells.who(r)}: correct is null (a missing value)"
            if v == "null"
            else f"{cells.who(r)}: correct = {v} is not 0/1 or a graded outcome in [0, 1]"
        )

    t.report(
        log,
        np.flatnonzero(cells.bits[1]),
        bit_msg,
        fix=FIX_SCORE + "; a missing cell has an empty 'correct' and its reason in the "
        f"'missing' column ({', '.join(MISSING_REASONS)})",
    )
    if cells.pred is not None:
        t.report(
            log,
            np.flatnonzero(cells.pred[1]),
            lambda r: (
                f"{cells.who(r)}: pred = {raw('pred', r)} is not an option index "
                "(-1 or null = unparseable, empty = none)"
            ),
        )
    if cells.margin is not None:
        t.report(
            log,
            np.flatnonzero(cells.margin[1]),
            lambda r: f"{cells.who(r)}: margin = {raw('margin', r)} is not a finite number",
        )
    if cells.answer_class is not None:
        t.report(
            log,
            np.flatnonzero(cells.answer_class[1]),
            lambda r: f"{cells.who(r)}: answer_class = {raw('answer_class', r)} is not one of {list(ANSWER_CLASSES)}",
        )
    if cells.unparsed is not None:
        t.report(
            log,
            np.flatnonzero(cells.unparsed[1]),
            lambda r: f"{cells.who(r)}: unparsed = {raw('unparsed', r)} is not a count",
        )


def _report_bad_benchmarks(t: _Table, cells: _Cells, log: ProblemLog) -> None:
    """Benchmark names that cannot be a directory or that the audit reserves (``pooled``)."""
    for code, name in enumerate(cells.bench.uniques.tolist()):
        why = benchmark_name_problem(str(name))
        if why is not None:
            fix = RESERVED_FIX if reserved_benchmark(str(name)) else "rename the benchmark"
            t.report(log, np.flatnonzero(cells.bench.codes == code)[:1], lambda r, why=why: why, fix=fix)


def _legend_or_inferred(grid: Grid | None, cells: _Cells, p: Path) -> tuple[Grid, list[str]]:
    if grid is not None:
        return grid, []
    grid = infer_grid([str(k) for k in cells.config.uniques], str(p.parent / "grid.json"))
    note = f"{p}: no grid.json; legend inferred from the config keys (reference {grid.reference!r})"
    warnings.warn(note, InferredLegendWarning, stacklevel=4)
    return grid, [note]


def _config_positions(t: _Table, cells: _Cells, grid: Grid) -> np.ndarray:
    """Each row's column in the legend (raises on keys the legend lacks)."""
    import pandas as pd

    log = ProblemLog()
    cfg = pd.Index(list(grid.keys)).get_indexer(cells.config.uniques)[cells.config.codes]
    t.report(
        log,
        np.flatnonzero(cfg < 0),
        lambda r: f"{cells.who(r)}: config key not in the legend (grid.json)",
        fix="every config must be one of grid.json's keys",
    )
    log.raise_if_any()
    return cfg


@dataclass
class _Groups:
    """Stage 2: rows pivoted into (benchmark, model, item) groups x configs."""

    grp: np.ndarray  # each row's group
    C: np.ndarray  # (G, K) int8 bits
    first_row: np.ndarray  # each group's first row
    X: np.ndarray | None = None  # (G, K) int8 missing codes, None when every cell was observed
    S: np.ndarray | None = None  # (G, K) float64 outcomes, None when none is graded

    @property
    def size(self) -> int:
        return len(self.C)


def _pivot(t: _Table, cells: _Cells, cfg: np.ndarray, keys: tuple[str, ...]) -> _Groups:
    import pandas as pd

    K = len(keys)
    nm, ni = len(cells.model.uniques), len(cells.item.uniques)
    combo = (cells.bench.codes * nm + cells.model.codes) * ni + cells.item.codes
    grp, _ = pd.factorize(combo)  # groups numbered in order of first appearance
    grp = np.asarray(grp, dtype=np.int64)
    G = int(grp.max()) + 1
    _refuse_duplicate_rows(t, cells, grp * K + cfg)
    C = np.full((G, K), -1, dtype=np.int8)
    C[grp, cfg] = cells.bits[0]
    X = None
    if cells.missing is not None and cells.missing.any():
        X = np.zeros((G, K), dtype=np.int8)
        X[grp, cfg] = cells.missing
    S = None
    if cells.score is not None:
        S = np.zeros((G, K), dtype=np.float64)
        S[grp, cfg] = cells.score
    groups = _Groups(grp, C, np.unique(grp, return_index=True)[1], X, S)
    log = ProblemLog()
    _report_holes(t, cells, groups, keys, log)
    _report_missing_pairs(t, cells, groups, log)
    log.raise_if_any()
    return groups


def _refuse_duplicate_rows(t: _Table, cells: _Cells, flat: np.ndarray) -> None:
    import pandas as pd

    dup = pd.Series(flat).duplicated(keep="first").to_numpy()
    if not dup.any():
        return
    uniq, first = np.unique(flat, return_index=True)

    def dup_msg(r: int) -> str:
        f = first[np.searchsorted(uniq, flat[r])]
        return f"{cells.who(r)}: duplicate row (first at {t.unit} {int(t.where[f])})"

    log = ProblemLog()
    t.report(log, np.flatnonzero(dup), dup_msg, fix="keep one row per (model, benchmark, item_id, config)")
    log.raise_if_any()


def _report_holes(t: _Table, cells: _Cells, g: _Groups, keys: tuple[str, ...], log: ProblemLog) -> None:
    """A (model, item) without a row for some config, reported at the group's first row."""
    holes = np.flatnonzero((g.C < 0).any(axis=1))
    if not holes.size:
        return
    group_of = dict(zip(g.first_row[holes].tolist(), holes.tolist()))

    def hole_msg(r: int) -> str:
        miss = [keys[k] for k in np.flatnonzero(g.C[group_of[r]] < 0).tolist()]
        shown = ", ".join(repr(k) for k in miss[:5]) + (f" (+{len(miss) - 5} more)" if len(miss) > 5 else "")
        return (
            f"model {cells.model.value(r)!r}, item {cells.item.value(r)!r} of benchmark "
            f"{cells.bench.value(r)!r}: missing config key(s) {shown}"
        )

    t.report(log, g.first_row[holes], hole_msg, fix="every (model, item) needs one row per config of the legend")


def _report_missing_pairs(t: _Table, cells: _Cells, g: _Groups, log: ProblemLog) -> None:
    """A model without any row for some benchmark."""
    present = np.zeros((len(cells.bench.uniques), len(cells.model.uniques)), dtype=bool)
    present[cells.bench.codes[g.first_row], cells.model.codes[g.first_row]] = True
    for bi, mi in zip(*np.nonzero(~present)):
        log.add(
            t.path,
            None,
            f"model {cells.model.uniques[mi]!r} has no rows for benchmark {cells.bench.uniques[bi]!r}",
            fix="every model needs rows for every benchmark",
        )


def _model_files(t: _Table, cells: _Cells, g: _Groups) -> dict[str, dict[str, ModelFile]]:
    """Stage 3: one ModelFile per (benchmark, model), for the alignment the directory reader uses."""
    fr = g.first_row
    g_b, g_m = cells.bench.codes[fr], cells.model.codes[fr]
    g_item = cells.item.uniques[cells.item.codes[fr]]
    g_line = t.where[fr]
    gold = cells.gold
    if gold is not None:  # convert each distinct gold once
        gold = _Col(gold.codes, np.array(_gold_values(gold.uniques) + [None], dtype=object)[:-1])
    g_gold = _first_per_group(gold, g.grp, g.size) if gold is not None else None
    g_question = _first_per_group(cells.question, g.grp, g.size) if cells.question is not None else None
    pair = g_b * len(cells.model.uniques) + g_m
    order = np.argsort(pair, kind="stable")
    cuts = np.flatnonzero(np.diff(pair[order])) + 1
    files: dict[str, dict[str, ModelFile]] = {}
    for sel in np.split(order, cuts):
        b, m = str(cells.bench.uniques[g_b[sel[0]]]), str(cells.model.uniques[g_m[sel[0]]])
        n = len(sel)
        files.setdefault(b, {})[m] = ModelFile(
            path=t.path,
            model=m,
            ids=g_item[sel].tolist(),
            lines=g_line[sel].tolist(),
            correct=g.C[sel].astype(bool),
            gold=g_gold[sel].tolist() if g_gold is not None else [None] * n,
            question=g_question[sel].tolist() if g_question is not None else [None] * n,
            options=[None] * n,
            unit=t.unit,
            missing=g.X[sel] if g.X is not None and g.X[sel].any() else None,
            score=None if g.S is None else normalised_score(g.S[sel]),
        )
    return files


def _with_per_cell_extras(t: _Table, rec: Records, cells: _Cells, g: _Groups, cfg: np.ndarray) -> Records:
    """pred, margin, answer_class (per cell) and unparsed (per model and item) straight into
    the tensor, by each row's (model, item) position."""
    import pandas as pd

    per_cell = {
        "pred": (cells.pred, PRED_ABSENT, np.int16),
        "margin": (cells.margin, np.nan, np.float64),
        "answer_class": (cells.answer_class, ANSWER_CLASS_ABSENT, np.int8),
    }
    wanted = {n: v for n, v in per_cell.items() if v[0] is not None and _any_present(v[0][0], v[1])}
    want_unparsed = cells.unparsed is not None and bool((cells.unparsed[0] != UNPARSED_ABSENT).any())
    if not wanted and not want_unparsed:
        return rec
    fr = g.first_row
    mpos = pd.Index(list(rec.models)).get_indexer(cells.model.uniques)[cells.model.codes]
    ipos_g = pd.MultiIndex.from_arrays([rec.items.benchmark, rec.items.item_id]).get_indexer(
        pd.MultiIndex.from_arrays(
            [cells.bench.uniques[cells.bench.codes[fr]], cells.item.uniques[cells.item.codes[fr]]]
        )
    )
    ipos = ipos_g[g.grp]
    keep = ipos >= 0  # rows of items dropped by intersect=True
    M, N, K = rec.shape
    upd: dict[str, np.ndarray] = {}
    for name, (col, absent, dtype) in wanted.items():
        out = np.full((M, N, K), absent, dtype=dtype)
        out[mpos[keep], ipos[keep], cfg[keep]] = col[0][keep]
        upd[name] = out
    if want_unparsed:
        assert cells.unparsed is not None
        upd["unparsed"] = _unparsed_per_item(t, cells, cells.unparsed[0], mpos, ipos, keep, (M, N), K)
    return replace(rec, **upd)


def _any_present(values: np.ndarray, absent: Any) -> bool:
    return bool((~np.isnan(values)).any()) if isinstance(absent, float) else bool((values != absent).any())


def _unparsed_per_item(
    t: _Table,
    cells: _Cells,
    v: np.ndarray,
    mpos: np.ndarray,
    ipos: np.ndarray,
    keep: np.ndarray,
    shape: tuple[int, int],
    K: int,
) -> np.ndarray:
    """One count per (model, item): every row of it that has a count must have the same one, at most K."""
    out = np.full(shape, UNPARSED_ABSENT, dtype=np.int16)
    have = np.flatnonzero(keep & (v != UNPARSED_ABSENT))
    out[mpos[have[::-1]], ipos[have[::-1]]] = v[have[::-1]]  # reversed: the first row wins
    log = ProblemLog()
    t.report(
        log,
        have[out[mpos[have], ipos[have]] != v[have]],
        lambda r: f"{cells.who(r)}: unparsed differs from an earlier row of the same model and item",
        fix="the unparsed count is one number per model and item",
    )
    t.report(
        log,
        have[v[have] > K],
        lambda r: f"{cells.who(r)}: unparsed = {int(v[r])} is more than the {K} configs of the legend",
    )
    log.raise_if_any()
    return out


def table_frame(records: Records) -> pd.DataFrame:
    """``records`` as the long table, rows ordered model, item, config (``options`` is not kept)."""
    import pandas as pd

    M, N, K = records.shape
    it = records.items
    data: dict[str, Any] = {
        "model": np.repeat(np.array(records.models, dtype=object), N * K),
        "benchmark": np.tile(np.repeat(it.benchmark.astype(object), K), M),
        "item_id": np.tile(np.repeat(it.item_id.astype(object), K), M),
        "config": np.tile(np.array(records.grid.keys, dtype=object), M * N),
    }
    # graded outcomes: a float column (docs/records.md, "Graded outcomes"), else 0/1;
    # a missing cell: empty ``correct``, its reason in ``missing``
    graded = records.score is not None
    values = (records.score if graded else records.correct).reshape(-1).astype(np.float64 if graded else np.int8)
    if records.missing is None:
        data["correct"] = values
    else:
        miss = records.missing.reshape(-1)
        data["correct"] = pd.array(values, dtype="Float64" if graded else "Int8")
        data["correct"][miss != 0] = pd.NA
        data["missing"] = np.array([None, *MISSING_REASONS], dtype=object)[miss]
    if any(g is not None for g in it.gold):
        gold = np.array([None if g is None else str(g) for g in it.gold], dtype=object)
        data["gold"] = np.tile(np.repeat(gold, K), M)
    if any(q is not None for q in it.question):
        q = np.array(it.question, dtype=object)
        data["question"] = np.tile(np.repeat(q, K), M)
    if records.pred is not None:
        p = records.pred.reshape(-1)
        data["pred"] = pd.array(np.where(p == PRED_ABSENT, 0, p), dtype="Int16")
        data["pred"][p == PRED_ABSENT] = pd.NA
    if records.margin is not None:
        data["margin"] = records.margin.reshape(-1)
    if records.answer_class is not None:
        names = np.array(list(ANSWER_CLASSES) + [None], dtype=object)
        data["answer_class"] = names[records.answer_class.reshape(-1)]  # ABSENT (-1) -> None
    if records.unparsed is not None:
        u = np.repeat(records.unparsed.reshape(-1), K)
        data["unparsed"] = pd.array(np.where(u == UNPARSED_ABSENT, 0, u), dtype="Int16")
        data["unparsed"][u == UNPARSED_ABSENT] = pd.NA
    return pd.DataFrame(data)


#: files a folder holding one table may carry beside it and grid.json: notes, not records
NOTE_SUFFIXES = (".md", ".txt", ".rst", ".html", ".pdf", ".cff")
NOTE_NAMES = ("readme", "license", "licence", "copying", "notice", "citation", "authors", "changelog", "source")


def _is_note(p: Path) -> bool:
    return p.suffix.lower() in NOTE_SUFFIXES or p.stem.lower().startswith(NOTE_NAMES)


def table_in_folder(d: Path) -> Path | None:
    """The long table a folder holds, when it is one: a single CSV/TSV/Parquet file, with or
    without ``grid.json``, beside notes only (README, LICENSE, ``*.md``, ``*.txt``; hidden and
    ``_``-prefixed names are skipped as everywhere). ``None`` for a records-v1 folder (any
    sub-folder or ``.jsonl`` file) or one without a table. A table beside other files is an
    error that names them and the fix, never "no records files" (UX review 2026-12-04 #4)."""
    try:
        entries = [x for x in sorted(d.iterdir()) if not x.name.startswith((".", "_"))]
    except OSError:
        return None
    if any(x.is_dir() or x.suffix == ".jsonl" for x in entries):
        return None
    tables = [x for x in entries if x.is_file() and x.suffix.lower() in (*CSV_SUFFIXES, *PARQUET_SUFFIXES)]
    if not tables:
        return None
    others = [x.name for x in entries if x not in tables and x.name != "grid.json" and not _is_note(x)]
    if len(tables) == 1 and not others:
        return tables[0]
    what = ", ".join(t.name for t in tables[:MAX_SHOWN])
    beside = f" beside {', '.join(others[:MAX_SHOWN])}" if others else ""
    raise RecordsError.one(
        str(d),
        None,
        f"holds {len(tables)} records table{'s' if len(tables) > 1 else ''} ({what}){beside}: "
        "which one is the records is not clear",
        fix=f"pass the table itself ({tables[0]}), or keep one table, grid.json and notes (README, *.md) in the folder",
    )


def write_table(records: Records, path: str | os.PathLike[str], *, write_grid: bool = True) -> Path:
    """Write ``records`` as a long table (CSV/TSV or Parquet by suffix), plus grid.json next to it.

    Byte-identical output for equal records (same library versions for Parquet).
    ``options`` texts are not part of the table and are not written.
    """
    import io

    from .writer import atomic_write_bytes
    from .writer import write_grid as _write_grid

    p = Path(path)
    suffix = p.suffix.lower()
    df = table_frame(records)
    if suffix in CSV_SUFFIXES:
        data = df.to_csv(index=False, sep=CSV_SUFFIXES[suffix], lineterminator="\n", na_rep="").encode("utf-8")
    elif suffix in PARQUET_SUFFIXES:
        import pyarrow as pa
        import pyarrow.parquet as pq

        buf = io.BytesIO()
        table = pa.Table.from_pandas(df, preserve_index=False)
        shape = {"rows": table.num_rows, "columns": table.column_names}
        meta = {**(table.schema.metadata or {}), TABLE_KEY: json.dumps(shape).encode()}
        pq.write_table(table.replace_schema_metadata(meta), buf, write_page_checksum=True)
        data = buf.getvalue()
    else:
        raise RecordsError.one(str(p), None, f"unknown table type {suffix!r}", fix="use .csv, .tsv, .parquet or .pq")
    atomic_write_bytes(p, data)
    if write_grid:
        _write_grid(records.grid, p.parent)
    return p


__all__ = ["read_table", "table_frame", "table_in_folder", "write_table"]
