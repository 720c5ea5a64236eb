"""Reading a packed file's Arrow IPC messages with bounded memory (docs/records.md, "Packed records").

``pyarrow.ipc.open_file(...).read_all()`` decompresses every record batch before anything
is checked, so a 200 KB zstd-compressed file can ask for gigabytes. The packed form is
written uncompressed (memory-mapped, zero-copy), so here the schema (and with it the
metadata and the expected row count) is checked first, then each record batch's message
header is looked at *before* its body is decoded: a compressed body, a dictionary batch
or more rows than the metadata's shape are refused without allocating anything.

The message header is a FlatBuffer (Arrow's ``Message.fbs``); only the three fields
needed are read: ``Message.header_type``/``header``, ``RecordBatch.length`` and
``RecordBatch.compression``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

_RECORD_BATCH = 3  # MessageHeader.RecordBatch
_FILE_PADDING = 8  # "ARROW1" plus two bytes of padding before the stream


class _Malformed(ValueError):
    """The message header is not a well-formed FlatBuffer."""


def _field(buf: bytes, table: int, index: int) -> int | None:
    """Absolute position of field ``index`` of the table at ``table``, or None when absent."""
    vtable = table - struct.unpack_from("<i", buf, table)[0]
    if not 0 <= vtable < len(buf):
        raise _Malformed("vtable outside the message")
    vt_size = struct.unpack_from("<H", buf, vtable)[0]
    slot = 4 + 2 * index
    if slot + 2 > vt_size:
        return None
    off = struct.unpack_from("<H", buf, vtable + slot)[0]
    if not off:
        return None
    if table + off >= len(buf):
        raise _Malformed("field outside the message")
    return table + off


def batch_header(metadata: bytes) -> tuple[int, bool]:
    """(rows, compressed) of a record-batch message; ValueError for any other message."""
    try:
        root = struct.unpack_from("<I", metadata, 0)[0]
        htype = _field(metadata, root, 1)
        if htype is None or metadata[htype] != _RECORD_BATCH:
            raise _Malformed("not a record batch")
        hpos = _field(metadata, root, 2)
        if hpos is None:
            raise _Malformed("record batch without a header")
        batch = hpos + struct.unpack_from("<I", metadata, hpos)[0]
        lpos = _field(metadata, batch, 0)
        rows = struct.unpack_from("<q", metadata, lpos)[0] if lpos is not None else 0
        return rows, _field(metadata, batch, 3) is not None
    except (struct.error, IndexError) as exc:
        raise _Malformed(f"unreadable message header ({exc})") from None


def _next(reader: Any) -> Any:
    """The next message, or None at the end of the stream."""
    try:
        return reader.read_next_message()
    except StopIteration:
        return None


def read_bounded(pa: Any, spath: str, check_schema: Callable[[Any], int], bad: Callable[[str], Exception]) -> Any:
    """The file's table, read message by message: ``check_schema(schema)`` validates the
    schema and its metadata and returns the number of rows the file may hold; ``bad(msg)``
    builds the error raised for a file that breaks the rules."""
    with pa.memory_map(spath, "r") as src:
        n_footer = pa.ipc.open_file(src).num_record_batches  # the footer is intact (no batch decoded)
        whole = src.read_buffer()
    reader = pa.ipc.MessageReader.open_stream(pa.BufferReader(whole.slice(_FILE_PADDING)))
    first = _next(reader)
    if first is None or first.type != "schema":
        raise bad("the Arrow stream does not start with its schema")
    schema = pa.ipc.read_schema(first)
    max_rows = check_schema(schema)
    batches, rows = [], 0
    while (msg := _next(reader)) is not None:
        if msg.type != "record batch":
            raise bad(f"an Arrow {msg.type!r} message: packed records hold only record batches")
        try:
            n, compressed = batch_header(bytes(msg.metadata))
        except ValueError as exc:
            raise bad(str(exc)) from None
        if compressed:
            raise bad("compressed Arrow buffers: the packed form is uncompressed (re-pack it)")
        rows += n
        if n < 0 or rows > max_rows:
            raise bad(f"more rows than the metadata's shape allows ({max_rows})")
        batches.append(pa.ipc.read_record_batch(msg, schema))
    if len(batches) != n_footer:
        raise bad(f"{len(batches)} record batches in the stream, {n_footer} in the footer")
    return pa.Table.from_batches(batches, schema=schema)


__all__ = ["batch_header", "read_bounded"]
