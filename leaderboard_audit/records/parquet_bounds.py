"""Reading a Parquet file from a stranger within bounds checked before the memory is spent.

Dictionary encoding and run-length indices let a file of kilobytes hold a table of gigabytes
(one 64 KiB string repeated 30,000 times took 4.2 GB: C02 of the 2026-12-04 review). So the
footer's row and value counts are checked first, then each row group is read with its text
kept dictionary-encoded and the text's decoded size counted on the dictionaries, and only
then is the table decoded. docs/reliability.md lists the bounds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def text_bytes(arr: Any) -> int:
    """The bytes of text ``arr`` holds once decoded, counted without decoding: a dictionary's
    values are measured once and summed over its indices."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = arr.type
    if pa.types.is_dictionary(t):
        if not (pa.types.is_string(t.value_type) or pa.types.is_binary(t.value_type)):
            return 0
        lens = pc.binary_length(arr.dictionary).take(arr.indices)
        return int(pc.sum(lens).as_py() or 0)
    if pa.types.is_struct(t):
        return sum(text_bytes(c) for c in arr.flatten())
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return text_bytes(arr.flatten())
    if pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        return int(pc.sum(pc.binary_length(arr)).as_py() or 0)
    return 0


def read_bounded(
    source: Any,
    columns: list[str],
    *,
    max_rows: int,
    max_values: int,
    max_text_bytes: int,
    wanted: Callable[[str], bool] | None = None,
    **open_kwargs: Any,
) -> tuple[Any, str | None]:
    """``(table, None)``, or ``(None, why)`` when a bound is passed. ``columns``: the top-level
    columns (or struct paths) to read; ``wanted(leaf path)``: which leaves count (default: the
    leaves under ``columns``). The table's text columns come back dictionary-decoded, in the
    file's own types.

    Column-chunk metadata is never touched: pyarrow aborts the process (a C++ exception it does
    not catch) on some damaged size statistics. The leaves come from the file's schema; the
    value count is checked before the first row group is read for scalar leaves (rows x leaves)
    and after each row group for list leaves (whose length no footer field bounds safely)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    def under(leaf: str) -> bool:
        return any(leaf == c or leaf.startswith(c + ".") for c in columns)

    keep = wanted or under
    pf = pq.ParquetFile(source, **open_kwargs)
    md = pf.metadata
    if md.num_rows > max_rows:
        return None, f"{md.num_rows:,} rows (limit {max_rows:,})"
    schema = pf.schema
    leaves = [schema.column(i) for i in range(len(schema)) if keep(schema.column(i).path)]
    if md.num_rows * len(leaves) > max_values:
        return None, f"{md.num_rows * len(leaves):,} values in the columns read (limit {max_values:,})"
    texts = [c.path for c in leaves if c.physical_type == "BYTE_ARRAY"]
    if hasattr(source, "seek"):
        source.seek(0)
    dpf = pq.ParquetFile(source, read_dictionary=texts, **open_kwargs)
    groups, text, values = [], 0, 0
    for g in range(md.num_row_groups):  # one row group at a time: its text stays dictionary-encoded
        t = dpf.read_row_group(g, columns=columns, use_threads=False)
        text += sum(text_bytes(chunk) for col in t.columns for chunk in col.chunks)
        if text > max_text_bytes:
            return None, f"its text decodes to over {max_text_bytes:,} bytes"
        values += sum(leaf_values(chunk) for col in t.columns for chunk in col.chunks)
        if values > max_values:
            return None, f"over {max_values:,} values in the columns read"
        groups.append(t)
    if not groups:
        return pf.schema_arrow.empty_table().select(columns), None
    table = pa.concat_tables(groups)
    names = pf.schema_arrow.names
    if all(c in names for c in columns):  # top-level columns: back to the file's own types
        plain = pa.schema([pf.schema_arrow.field(c) for c in columns])
    else:  # struct paths (a subset of each struct's fields): dictionaries replaced by their values
        plain = pa.schema([_plain_field(f) for f in table.schema])
    return table.cast(plain), None


def leaf_values(arr: Any) -> int:
    """The number of leaf values ``arr`` holds (list elements counted one by one)."""
    import pyarrow as pa

    t = arr.type
    if pa.types.is_struct(t):
        return sum(leaf_values(c) for c in arr.flatten())
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return leaf_values(arr.flatten())
    return len(arr)


def _plain_field(f: Any) -> Any:
    """``f`` with every dictionary type replaced by its value type (nested ones too)."""
    import pyarrow as pa

    return pa.field(f.name, _plain_type(f.type), f.nullable, f.metadata)


def _plain_type(t: Any) -> Any:
    import pyarrow as pa

    if pa.types.is_dictionary(t):
        return t.value_type
    if pa.types.is_struct(t):
        return pa.struct([_plain_field(t.field(i)) for i in range(t.num_fields)])
    if pa.types.is_list(t):
        return pa.list_(_plain_field(t.value_field))
    if pa.types.is_large_list(t):
        return pa.large_list(_plain_field(t.value_field))
    return t


__all__ = ["leaf_values", "read_bounded", "text_bytes"]
