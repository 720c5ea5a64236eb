"""The packed records form: one Arrow IPC file, correctness bits packed 8 per byte (docs/records.md, "Packed records").

records-v1 (JSONL) stays the interchange format; the packed form is for big grids and
for the load cache. Layout of the file (Arrow IPC "file" format, as ``pyarrow.feather``
writes it, uncompressed so it can be memory-mapped; a compressed file is refused before
any of it is decoded, records/packed_ipc.py):

* one row per (model, item), models outer, items inner (``row = m * N + i``);
* column ``correct``: ``fixed_size_list<bool>[K]``, no nulls -- the K configuration bits
  of one (model, item) in the legend's column order. Arrow stores booleans bit-packed,
  so the child buffer *is* ``C[model, item, config]`` in C order, 8 bits per byte;
* optional column ``pred``: ``fixed_size_list<int16>[K]`` (``PRED_ABSENT`` = -2 where no
  prediction, ``PRED_UNPARSEABLE`` = -1);
* optional column ``margin``: ``fixed_size_list<float64>[K]`` (NaN where none);
* optional column ``missing``: ``fixed_size_list<int8>[K]``, present only when some cell is
  missing: 0 where observed, else the reason code (records/missing.py); ``correct`` is 0
  at every missing cell (a file with a 1 there is refused, checksum or not: ``Records``
  checks it on construction, so the load cache's entries are checked alike);
* optional column ``score``: ``fixed_size_list<float64>[K]``, present only when some
  outcome is graded (strictly between 0 and 1, records/graded.py): every cell's outcome
  in [0, 1]; ``correct`` is then ``score == 1`` and both are 0 at a missing cell;
* schema metadata ``leaderboard-audit``: one JSON object holding the legend (grid.json's
  object), the models, the items (benchmark, item_id, gold, question, options), notes,
  ``dropped``, and ``content_sha256``: SHA-256 over the rest of the metadata, the packed
  bits and the pred/margin bytes, checked on every read so a flipped bit is an error,
  not a silently different audit.

Why not one boolean column per configuration (a wide Parquet table): measured on
1,000 models x 30,000 items x 26 configs, pyarrow decodes Parquet booleans in 12.7-17.9 s
and per-config columns need a (rows x configs) transpose (2.3-4.7 s); the fixed-size
list's child buffer unpacks straight into the (models, items, configs) array
(docs/performance.md).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from .errors import RecordsError
from .grid import parse_grid
from .model import Items, Records, freeze

PACKED_FORMAT = "leaderboard-audit/packed-v1"
META_KEY = b"leaderboard-audit"
ARROW_MAGIC = b"ARROW1"
MAX_META_BYTES = 256 * 1024 * 1024
FIX_PACKED = "re-create it with `leaderboard-audit pack SRC -o OUT` (docs/records.md)"


def is_packed(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is a regular file that starts with the Arrow IPC file magic."""
    p = Path(path)
    try:
        if not p.is_file():
            return False
        with open(p, "rb") as fh:
            return fh.read(len(ARROW_MAGIC)) == ARROW_MAGIC
    except OSError:
        return False


def _pyarrow():
    try:
        import pyarrow as pa
        import pyarrow.ipc  # registers pa.ipc
    except ImportError:
        raise RecordsError.one(
            "<packed>", None, "the packed records form needs pyarrow", fix="pip install 'leaderboard-audit[parquet]'"
        ) from None
    return pa


def _packed_bits(correct: np.ndarray) -> np.ndarray:
    return np.packbits(np.ascontiguousarray(correct, dtype=bool).reshape(-1), bitorder="little")


def canonical_meta(meta: dict[str, Any]) -> bytes:
    """The metadata object as the bytes the checksum covers (without the checksum itself)."""
    body = {k: v for k, v in meta.items() if k != "content_sha256"}
    return json.dumps(body, sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


def content_sha256(
    meta: dict[str, Any],
    packed_bits: bytes | np.ndarray,
    pred: np.ndarray | None,
    margin: np.ndarray | None,
    answer_class: np.ndarray | None = None,
    unparsed: np.ndarray | None = None,
    missing: np.ndarray | None = None,
    score: np.ndarray | None = None,
) -> str:
    """SHA-256 over the metadata, the packed correctness bits, then pred (int16 LE), margin (float64 LE),
    answer_class (int8), unparsed (int16 LE) and missing (int8), each present one named (a
    complete grid has no ``missing``: its checksum is what it always was)."""
    h = hashlib.sha256(canonical_meta(meta) + b"\0")
    h.update(memoryview(np.ascontiguousarray(packed_bits, dtype=np.uint8)))
    for name, arr, dt in (
        ("pred", pred, "<i2"),
        ("margin", margin, "<f8"),
        ("answer_class", answer_class, "i1"),
        ("unparsed", unparsed, "<i2"),
        ("missing", missing, "i1"),
        ("score", score, "<f8"),
    ):
        if arr is not None:
            h.update(name.encode() + b"\0")
            h.update(memoryview(np.ascontiguousarray(arr, dtype=dt)).cast("B"))
    return h.hexdigest()


def packed_meta(records: Records) -> dict[str, Any]:
    it = records.items
    return {
        "format": PACKED_FORMAT,
        "shape": list(records.shape),
        "models": list(records.models),
        "grid": records.grid.to_json(),
        "grid_inferred": records.grid.inferred,
        "items": {
            "benchmark": it.benchmark.tolist(),
            "item_id": it.item_id.tolist(),
            "gold": list(it.gold),
            "question": list(it.question),
            "options": list(it.options),
        },
        "notes": list(records.notes),
        "layout_notes": list(getattr(records, "layout_notes", ())),
        "dropped": dict(records.dropped),
        "source": records.source,
    }


def packed_bytes(records: Records, extra_meta: dict[str, Any] | None = None) -> bytes:
    """The packed form of ``records`` as bytes (deterministic for equal records).

    ``extra_meta`` adds keys to the metadata object (the load cache stores its key there).
    """
    pa = _pyarrow()
    M, N, K = records.shape
    bits = _packed_bits(records.correct)
    meta_obj = {**packed_meta(records), **(extra_meta or {})}
    meta_obj["content_sha256"] = content_sha256(
        meta_obj,
        bits,
        records.pred,
        records.margin,
        records.answer_class,
        records.unparsed,
        records.missing,
        records.score,
    )
    child = pa.Array.from_buffers(pa.bool_(), M * N * K, [None, pa.py_buffer(bits)])
    cols = {"correct": pa.FixedSizeListArray.from_arrays(child, K)}
    if records.pred is not None:
        vals = pa.array(np.ascontiguousarray(records.pred, dtype=np.int16).reshape(-1))
        cols["pred"] = pa.FixedSizeListArray.from_arrays(vals, K)
    if records.margin is not None:
        vals = pa.array(np.ascontiguousarray(records.margin, dtype=np.float64).reshape(-1), from_pandas=False)
        cols["margin"] = pa.FixedSizeListArray.from_arrays(vals, K)
    if records.answer_class is not None:
        vals = pa.array(np.ascontiguousarray(records.answer_class, dtype=np.int8).reshape(-1))
        cols["answer_class"] = pa.FixedSizeListArray.from_arrays(vals, K)
    if records.unparsed is not None:
        cols["unparsed"] = pa.array(np.ascontiguousarray(records.unparsed, dtype=np.int16).reshape(-1))
    if records.missing is not None:  # reason codes (records/missing.py); absent for a complete grid
        vals = pa.array(np.ascontiguousarray(records.missing, dtype=np.int8).reshape(-1))
        cols["missing"] = pa.FixedSizeListArray.from_arrays(vals, K)
    if records.score is not None:  # graded outcomes (records/graded.py); absent for a boolean set
        vals = pa.array(np.ascontiguousarray(records.score, dtype=np.float64).reshape(-1))
        cols["score"] = pa.FixedSizeListArray.from_arrays(vals, K)
    meta = json.dumps(meta_obj, sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()
    table = pa.table(cols).replace_schema_metadata({META_KEY: meta})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def write_packed(records: Records, path: str | os.PathLike[str]) -> Path:
    """Write ``records`` in the packed form, atomically (temp file + rename)."""
    from .writer import atomic_write_bytes

    p = Path(path)
    atomic_write_bytes(p, packed_bytes(records))
    return p


# ------------------------------------------------------------------ reading


def _bad(path: str, msg: str) -> RecordsError:
    return RecordsError.one(path, None, msg, fix=FIX_PACKED)


def _list_values(col, K: int, dtype: str, path: str, name: str, n_rows: int) -> np.ndarray:
    """The flat child values of a fixed_size_list<dtype>[K] column as numpy (a copy)."""
    out = np.empty(n_rows * K, dtype=dtype)
    pos = 0
    for chunk in col.chunks:
        if chunk.null_count:
            raise _bad(path, f"column {name!r} has null rows")
        vals = chunk.values
        if vals.null_count:
            raise _bad(path, f"column {name!r} has null values")
        lo, n = chunk.offset * K, len(chunk) * K
        arr = vals.to_numpy(zero_copy_only=False)[lo : lo + n]
        out[pos : pos + n] = arr
        pos += n
    return out


UNPACK_BLOCK = 1 << 16  # bytes per step: each step's gather stays in the CPU cache

#: byte value -> its 8 bits as 8 bool bytes (little bit order), one uint64 each: unpacking
#: is then one gather of 8-byte words, ~10x faster than np.unpackbits plus a copy
_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little").view(np.uint64)[:, 0]


def _unpack_into(dest: np.ndarray, raw: np.ndarray, start: int) -> None:
    """``dest[:] = bits start .. start + len(dest)`` of ``raw`` (little bit order), block by block."""
    n = dest.size
    if start % 8 or dest.ndim != 1 or not dest.flags.c_contiguous:  # a sliced array: one pass
        dest[...] = np.unpackbits(raw, count=start + n, bitorder="little")[start:].view(bool).reshape(dest.shape)
        return
    first = start // 8
    whole = n // 8  # whole bytes, gathered as words; the last byte's bits (if any) unpacked
    words = dest[: whole * 8].view(np.uint8).view(np.uint64) if whole else None
    for lo in range(0, whole, UNPACK_BLOCK):
        hi = min(whole, lo + UNPACK_BLOCK)
        np.take(_BYTE_BITS, raw[first + lo : first + hi], out=words[lo:hi], mode="clip")  # "raise" buffers out
    if n % 8:
        dest[whole * 8 :] = np.unpackbits(raw[first + whole : first + whole + 1], count=n % 8, bitorder="little").view(
            bool
        )


def _correct_chunks(col, K: int, path: str):
    """Each chunk of the correct column as (its values' buffer as bytes, its first bit, its bit
    count), checked for nulls and for a buffer as long as its length says."""
    for chunk in col.chunks:
        if chunk.null_count or chunk.values.null_count:
            raise _bad(path, "column 'correct' has nulls")
        vals = chunk.values
        start, n = vals.offset + chunk.offset * K, len(chunk) * K
        raw = np.frombuffer(vals.buffers()[1], dtype=np.uint8)
        if raw.size * 8 < start + n:
            raise _bad(path, "column 'correct' is shorter than its length says")
        yield raw, start, n


def _packed_part(raw: np.ndarray, start: int, n: int) -> np.ndarray:
    """Bits ``start .. start + n`` of ``raw`` (``start`` on a byte), the last byte's unused bits 0."""
    part = raw[start // 8 : (start + n + 7) // 8].copy()
    if n % 8:
        part[-1] &= (1 << (n % 8)) - 1
    return part


def _packed_parts(col, K: int, path: str, n_rows: int) -> np.ndarray | None:
    """The correct column's bits packed canonically, straight from the file's buffers, with
    ``_unpack_bits``'s checks; None when a chunk does not start on a byte boundary (only
    unpacking then gives the canonical bytes)."""
    pos = 0
    parts: list[np.ndarray] = []
    for raw, start, n in _correct_chunks(col, K, path):
        if start % 8 or pos % 8:
            return None
        parts.append(_packed_part(raw, start, n))
        pos += n
    if pos != n_rows * K:
        raise _bad(path, f"column 'correct' holds {pos} values, expected {n_rows * K}")
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint8)


def _unpack_bits(col, K: int, path: str, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """The correct column as a flat bool array, and its bits packed canonically (for the checksum).

    The packed bytes come straight from the file's buffers when every chunk starts on a
    byte boundary (files this module writes), else they are re-packed from the bools.
    """
    out = np.empty(n_rows * K, dtype=bool)
    pos = 0
    parts: list[np.ndarray] | None = []
    for raw, start, n in _correct_chunks(col, K, path):
        _unpack_into(out[pos : pos + n], raw, start)
        if parts is not None and start % 8 == 0 and pos % 8 == 0:
            parts.append(_packed_part(raw, start, n))
        else:
            parts = None
        pos += n
    if parts is not None and parts:
        return out, np.concatenate(parts)
    return out, np.packbits(out, bitorder="little")


def _str_list(v: Any, n: int | None, what: str, path: str, *, nullable: bool = False) -> list[Any]:
    if not isinstance(v, list) or (n is not None and len(v) != n):
        raise _bad(path, f"metadata {what!r} must be a list" + (f" of {n} entries" if n is not None else ""))
    if not {type(x) for x in v} <= ({str, type(None)} if nullable else {str}):
        raise _bad(path, f"metadata {what!r} must hold strings" + (" or nulls" if nullable else ""))
    return v


def _read_meta(schema, path: str) -> dict[str, Any]:
    raw = (schema.metadata or {}).get(META_KEY)
    if raw is None:
        raise _bad(path, "an Arrow file without leaderboard-audit metadata: not packed records")
    if len(raw) > MAX_META_BYTES:
        raise _bad(path, f"metadata larger than {MAX_META_BYTES} bytes")
    from .safe_io import json_values_problem

    why = json_values_problem(raw)
    if why is not None:
        raise _bad(path, f"metadata {why}")
    try:
        meta = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise _bad(path, f"unreadable metadata ({type(exc).__name__}: {str(exc)[:200]})") from None
    if not isinstance(meta, dict) or meta.get("format") != PACKED_FORMAT:
        got = meta.get("format") if isinstance(meta, dict) else None
        raise _bad(path, f"format is {got!r}, expected {PACKED_FORMAT!r}")
    return meta


def _items_from_meta(meta: dict[str, Any], N: int, path: str) -> Items:
    it = meta.get("items")
    if not isinstance(it, dict):
        raise _bad(path, "metadata 'items' must be an object")
    bench = _str_list(it.get("benchmark"), N, "items.benchmark", path)
    ids = _str_list(it.get("item_id"), N, "items.item_id", path)
    gold = it.get("gold")
    if not isinstance(gold, list) or len(gold) != N or not {type(g) for g in gold} <= {int, str, type(None)}:
        raise _bad(path, f"metadata 'items.gold' must be {N} option indices, letters or nulls")
    question = _str_list(it.get("question"), N, "items.question", path, nullable=True)
    options = it.get("options")
    if (
        not isinstance(options, list)
        or len(options) != N
        or not {type(o) for o in options} <= {list, type(None)}
        or not all(type(x) is str for o in options if o is not None for x in o)
    ):
        raise _bad(path, f"metadata 'items.options' must be {N} lists of strings or nulls")
    if any(not b or not i for b, i in zip(bench, ids)):
        raise _bad(path, "empty benchmark or item id in the metadata")
    order = list(dict.fromkeys(bench))
    if order != sorted(order) or sum(1 for a, b in itertools.pairwise(bench) if a != b) != len(order) - 1:
        raise _bad(path, "items must be grouped by benchmark, benchmarks in sorted order")
    if len(set(zip(bench, ids))) != N:
        raise _bad(path, "duplicate (benchmark, item_id) in the metadata")
    return Items(np.array(bench, dtype=object), np.array(ids, dtype=object), list(gold), list(question), list(options))


def read_packed(path: str | os.PathLike[str], *, intersect: bool = False) -> Records:
    """Load a packed records file, checking its metadata, shape and content checksum.

    The packed form is already matched (complete), so ``intersect`` changes nothing.
    """
    rec, _ = read_packed_meta(path, warn=True)
    return rec


def _open_table(spath: str):
    """The file's table, its metadata, shape and column types checked before any batch is
    decoded, each batch's header before its body (records/packed_ipc.py: bounded memory)."""
    from .packed_ipc import read_bounded

    pa = _pyarrow()

    def check_schema(schema) -> int:
        M, N, K = _header(_read_meta(schema, spath), spath)["shape"]
        _column_names(schema, K, spath)  # not schema.empty_table(): it imports pandas (~0.25 s)
        return M * N

    try:
        return read_bounded(pa, spath, check_schema, lambda msg: _bad(spath, msg))
    except RecordsError:
        raise
    except (pa.ArrowException, OSError, ValueError, MemoryError) as exc:
        raise _bad(spath, f"unreadable Arrow file ({type(exc).__name__}: {str(exc)[:200]})") from None


def _header(meta: dict[str, Any], spath: str) -> dict[str, Any]:
    """Shape, models, legend, items, notes and dropped from the metadata, each checked."""
    shape = meta.get("shape")
    if not (isinstance(shape, list) and len(shape) == 3 and all(type(x) is int and x > 0 for x in shape)):
        raise _bad(spath, f"metadata 'shape' must be three positive integers, got {shape!r}")
    M, N, K = shape
    models = _str_list(meta.get("models"), M, "models", spath)
    if len(set(models)) != M or models != sorted(models) or not all(models):
        raise _bad(spath, "models must be distinct non-empty names in sorted order")
    grid = parse_grid(meta.get("grid"), f"{spath} (metadata 'grid')")
    if len(grid) != K:
        raise _bad(spath, f"the legend has {len(grid)} configs, the shape says {K}")
    if meta.get("grid_inferred") is True:
        grid = replace(grid, inferred=True)
    notes = _str_list(meta.get("notes", []), None, "notes", spath)
    layout_notes = _str_list(meta.get("layout_notes", []), None, "layout_notes", spath)
    dropped = meta.get("dropped", {})
    if not isinstance(dropped, dict) or not all(type(v) is int for v in dropped.values()):
        raise _bad(spath, "metadata 'dropped' must map benchmarks to counts")
    return {
        "shape": (M, N, K),
        "models": tuple(models),
        "grid": grid,
        "items": _items_from_meta(meta, N, spath),
        "notes": tuple(notes),
        "layout_notes": tuple(layout_notes),
        "dropped": dict(dropped),
    }


def _column_names(schema, K: int, spath: str) -> list[str]:
    """The schema's column names, each checked to be fixed_size_list<type>[K] (unparsed: int16)."""
    pa = _pyarrow()
    cols = set(schema.names)
    if "correct" not in cols or not cols <= {
        "correct",
        "pred",
        "margin",
        "answer_class",
        "unparsed",
        "missing",
        "score",
    }:
        raise _bad(
            spath,
            f"columns {sorted(cols)}; expected 'correct' and optionally 'pred', 'margin', 'answer_class', "
            "'unparsed', 'missing', 'score'",
        )
    if "unparsed" in cols and schema.field("unparsed").type != pa.int16():
        raise _bad(spath, f"column 'unparsed' is {schema.field('unparsed').type}, expected int16")
    for name, value_type in (
        ("correct", pa.bool_()),
        ("pred", pa.int16()),
        ("margin", pa.float64()),
        ("answer_class", pa.int8()),
        ("missing", pa.int8()),
        ("score", pa.float64()),
    ):
        if name not in cols:
            continue
        typ = schema.field(name).type
        if not (pa.types.is_fixed_size_list(typ) and typ.list_size == K and typ.value_type == value_type):
            raise _bad(spath, f"column {name!r} is {typ}, expected fixed_size_list<{value_type}>[{K}]")
    return [n for n in ("unparsed", "correct", "pred", "margin", "answer_class", "missing", "score") if n in cols]


def _columns(table, K: int, spath: str) -> dict[str, Any]:
    """The file's columns by name, each checked to be fixed_size_list<type>[K]."""
    return {name: table.column(name) for name in _column_names(table.schema, K, spath)}


def check_values(
    spath: str,
    kind: str,
    pred: np.ndarray | None,
    margin: np.ndarray | None,
    answer_class: np.ndarray | None,
    unparsed: np.ndarray | None,
    missing: np.ndarray | None = None,
    score: np.ndarray | None = None,
) -> None:
    """The value ranges every reader of the packed content enforces (``kind`` names where the
    values came from: "column" in the Arrow file, "array" in a load-cache entry)."""
    from .model import ANSWER_CLASSES

    if pred is not None and ((pred < -2) | (pred >= 32000)).any():
        raise _bad(spath, f"{kind} 'pred' holds values that are not option indices, -1 or -2")
    if margin is not None and np.isinf(margin).any():
        raise _bad(spath, f"{kind} 'margin' holds infinite values")
    if answer_class is not None and ((answer_class < -1) | (answer_class >= len(ANSWER_CLASSES))).any():
        raise _bad(spath, f"{kind} 'answer_class' holds values that are not answer-class codes or -1")
    if unparsed is not None and (unparsed < -1).any():
        raise _bad(spath, f"{kind} 'unparsed' holds negative counts other than -1")
    if missing is not None:
        from .missing import MISSING_REASONS

        if ((missing < 0) | (missing > len(MISSING_REASONS))).any():
            raise _bad(spath, f"{kind} 'missing' holds values that are not reason codes 0..{len(MISSING_REASONS)}")
        if not missing.any():
            raise _bad(spath, f"{kind} 'missing' marks no cell (a complete grid has no 'missing')")
    if score is not None:
        from .graded import graded_values

        if not np.isfinite(score).all() or ((score < 0) | (score > 1)).any():
            raise _bad(spath, f"{kind} 'score' holds values outside [0, 1] or not finite")
        if not graded_values(score):
            raise _bad(spath, f"{kind} 'score' holds only 0 and 1 (a boolean set has no 'score')")


def checked_records(
    spath: str,
    meta: dict[str, Any],
    head: dict[str, Any],
    correct: np.ndarray,
    packed: np.ndarray,
    pred: np.ndarray | None,
    margin: np.ndarray | None,
    answer_class: np.ndarray | None,
    unparsed: np.ndarray | None,
    missing: np.ndarray | None = None,
    score: np.ndarray | None = None,
) -> Records:
    """The records the packed content describes, once its checksum verifies (``meta`` without
    keys the checksum does not cover), read-only as every reader returns them (``freeze``)."""
    M, N, K = head["shape"]
    values = (pred, margin, answer_class, unparsed, missing, score)
    _check_digest(spath, meta, packed, values)
    rec = Records(correct=correct.reshape(M, N, K), **_fields(spath, head, values))
    if score is not None:
        from .graded import check_score

        why = check_score(rec.score, rec.correct, rec.missing)
        if why is not None:
            raise _bad(spath, why)
    return freeze(rec)


#: pred, margin, answer_class, unparsed, missing and score as read (flat; any may be None)
Values = tuple[
    np.ndarray | None, np.ndarray | None, np.ndarray | None, np.ndarray | None, np.ndarray | None, np.ndarray | None
]


def _check_digest(spath: str, meta: dict[str, Any], packed: np.ndarray, values: Values) -> None:
    try:
        digest = content_sha256(meta, packed, *values)
    except ValueError:  # NaN smuggled into the metadata
        digest = None
    if digest != meta.get("content_sha256"):
        raise _bad(spath, "content checksum mismatch: the file is corrupt or was edited")


def _fields(spath: str, head: dict[str, Any], values: Values) -> dict[str, Any]:
    """Every field of the records but ``correct``, shaped."""
    M, N, K = head["shape"]
    pred, margin, answer_class, unparsed, missing, score = values
    return {
        "models": head["models"],
        "items": head["items"],
        "grid": head["grid"],
        "pred": None if pred is None else pred.reshape(M, N, K),
        "margin": None if margin is None else margin.reshape(M, N, K),
        "source": spath,
        "notes": head["notes"],
        "dropped": head["dropped"],
        "answer_class": None if answer_class is None else answer_class.reshape(M, N, K),
        "unparsed": None if unparsed is None else unparsed.reshape(M, N),
        "layout_notes": head["layout_notes"],
        "missing": None if missing is None else missing.reshape(M, N, K),
        "score": None if score is None else score.reshape(M, N, K),
    }


def _columns_values(columns: dict[str, Any], shape: tuple[int, int, int], spath: str) -> Values:
    """pred, margin, answer_class and unparsed from the file's columns (flat), range-checked."""
    M, N, K = shape
    pred = margin = answer_class = unparsed = missing = score = None
    if "pred" in columns:
        pred = _list_values(columns["pred"], K, "<i2", spath, "pred", M * N).astype(np.int16, copy=False)
    if "margin" in columns:
        margin = _list_values(columns["margin"], K, "<f8", spath, "margin", M * N).astype(np.float64, copy=False)
    if "answer_class" in columns:
        answer_class = _list_values(columns["answer_class"], K, "i1", spath, "answer_class", M * N).astype(
            np.int8, copy=False
        )
    if "unparsed" in columns:
        col = columns["unparsed"]
        if col.null_count:
            raise _bad(spath, "column 'unparsed' holds nulls")
        unparsed = col.to_numpy().astype(np.int16, copy=False)
    if "missing" in columns:
        missing = _list_values(columns["missing"], K, "i1", spath, "missing", M * N).astype(np.int8, copy=False)
    if "score" in columns:
        score = _list_values(columns["score"], K, "<f8", spath, "score", M * N).astype(np.float64, copy=False)
    check_values(spath, "column", pred, margin, answer_class, unparsed, missing, score)
    return pred, margin, answer_class, unparsed, missing, score


def _opened(path: str | os.PathLike[str]) -> tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(path as text, metadata, checked header, columns by name) of a packed file, its
    metadata, row count and column types checked."""
    spath = str(Path(path))
    if not Path(path).is_file():
        raise RecordsError.one(spath, None, "not a regular file")
    table = _open_table(spath)
    meta = _read_meta(table.schema, spath)
    head = _header(meta, spath)
    M, N, K = head["shape"]
    if table.num_rows != M * N:
        raise _bad(spath, f"{table.num_rows} rows, expected models x items = {M * N}")
    return spath, meta, head, _columns(table, K, spath)


def read_packed_meta(path: str | os.PathLike[str], *, warn: bool = True) -> tuple[Records, dict[str, Any]]:
    """:func:`read_packed`, plus the file's metadata object (the cache checks its key in it)."""
    spath, meta, head, columns = _opened(path)
    M, N, K = head["shape"]
    pa = _pyarrow()
    try:
        correct, packed = _unpack_bits(columns["correct"], K, spath, M * N)
        values = _columns_values(columns, (M, N, K), spath)
    except RecordsError:
        raise
    except (pa.ArrowException, ValueError, IndexError) as exc:  # buffers shorter than their lengths say
        raise _bad(spath, f"damaged Arrow buffers ({type(exc).__name__}: {str(exc)[:200]})") from None
    rec = checked_records(spath, meta, head, correct, packed, *values)
    if rec.grid.inferred and warn:  # the same warning the JSONL reader gives for a missing grid.json
        from .reader import InferredLegendWarning

        note = next((n for n in rec.notes if "legend inferred" in n), f"{spath}: legend inferred")
        warnings.warn(note, InferredLegendWarning, stacklevel=3)
    return rec, meta


__all__ = [
    "PACKED_FORMAT",
    "is_packed",
    "packed_bytes",
    "read_packed",
    "read_packed_meta",
    "write_packed",
]
