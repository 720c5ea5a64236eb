"""The load cache's entry file: the packed form's content without Arrow (docs/records.md, "The load cache").

A cache entry is read on every ``pytest --audit`` of an unchanged JSONL folder, so it
must load in milliseconds; importing pyarrow alone costs ~0.12 s. The entry therefore
holds exactly what the packed form holds (records/packed.py: the same metadata object,
the same packed bits and arrays, the same ``content_sha256``) in a plain layout numpy
reads directly:

* ``MAGIC`` (16 bytes), then the metadata's length as 8 bytes little-endian, then the
  metadata: the packed form's JSON object plus ``arrays``, a list of
  ``[name, dtype, count]`` in file order;
* then each array's bytes, back to back: ``correct`` (the packed bits, little bit
  order), and, when present, ``pred`` (<i2), ``margin`` (<f8), ``answer_class`` (i1),
  ``unparsed`` (<i2), ``missing`` (i1), ``score`` (<f8).

It is validated as a packed file is (the header's checks, value ranges, the checksum),
so a corrupt or edited entry is an error the cache treats as a miss. Not an interchange
format: ``leaderboard-audit pack`` writes the Arrow form.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .errors import RecordsError
from .model import Records
from .packed import (
    MAX_META_BYTES,
    _bad,
    _header,
    _packed_bits,
    _unpack_into,
    check_values,
    checked_records,
    content_sha256,
    packed_meta,
)

MAGIC = b"LBAUDIT-CACHE-1\n"
ARRAYS = (
    ("pred", "<i2"),
    ("margin", "<f8"),
    ("answer_class", "i1"),
    ("unparsed", "<i2"),
    ("missing", "i1"),
    ("score", "<f8"),
)


def entry_bytes(
    records: Records, extra_meta: dict[str, Any] | None = None, sign: Callable[[str], str] | None = None
) -> bytes:
    """The entry for ``records`` (deterministic for equal records). ``sign``: the cache's
    signature of the content checksum, stored as ``mac`` (records/cache_owner.py); it is the
    one metadata field the checksum does not cover."""
    bits = _packed_bits(records.correct)
    meta = {**packed_meta(records), **(extra_meta or {})}
    meta.pop("mac", None)
    meta["content_sha256"] = content_sha256(
        meta, bits, records.pred, records.margin, records.answer_class, records.unparsed, records.missing, records.score
    )
    if sign is not None:
        meta["mac"] = sign(meta["content_sha256"])
    blobs = [("correct", "u1", bits)]
    for name, dt in ARRAYS:
        arr = getattr(records, name)
        if arr is not None:
            blobs.append((name, dt, np.ascontiguousarray(arr, dtype=dt).reshape(-1)))
    meta["arrays"] = [[name, dt, int(a.size)] for name, dt, a in blobs]
    head = json.dumps(meta, sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()
    return b"".join([MAGIC, len(head).to_bytes(8, "little"), head, *(a.tobytes() for _, _, a in blobs)])


def read_entry(path: str | os.PathLike[str]) -> tuple[Records, dict[str, Any]]:
    """The entry's records and metadata; ``RecordsError`` when it is not an intact entry."""
    spath = str(Path(path))
    data = Path(path).read_bytes()
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 8:
        raise _bad(spath, "not a load-cache entry")
    n_head = int.from_bytes(data[len(MAGIC) : len(MAGIC) + 8], "little")
    start = len(MAGIC) + 8
    if n_head > MAX_META_BYTES or start + n_head > len(data):
        raise _bad(spath, "truncated load-cache entry")
    try:
        meta = json.loads(data[start : start + n_head])
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise _bad(spath, f"unreadable metadata ({type(exc).__name__})") from None
    if not isinstance(meta, dict):
        raise _bad(spath, "metadata must be an object")
    head = _header(meta, spath)
    M, N, K = head["shape"]
    arrays = _arrays(meta.get("arrays"), data, start + n_head, spath)
    expected = {"correct": (M * N * K + 7) // 8, "unparsed": M * N}
    for name, arr in arrays.items():
        want = expected.get(name, M * N * K)
        if arr.size != want:
            raise _bad(spath, f"array {name!r} has {arr.size} values, expected {want}")
    bits = arrays["correct"]
    correct = np.empty(M * N * K, dtype=bool)
    _unpack_into(correct, bits, 0)

    def own(name: str) -> np.ndarray | None:  # a native-order copy, not a view of the file's bytes
        a = arrays.get(name)
        return None if a is None else a.astype(a.dtype.newbyteorder("="), copy=True)

    values = [own(name) for name, _ in ARRAYS]  # pred, margin, answer_class, unparsed, missing, score
    check_values(spath, "array", *values)
    meta_summed = {k: v for k, v in meta.items() if k not in ("arrays", "mac")}
    return checked_records(spath, meta_summed, head, correct, bits, *values), meta


def _arrays(spec: Any, data: bytes, offset: int, spath: str) -> dict[str, np.ndarray]:
    allowed = {"correct": "u1", **dict(ARRAYS)}
    if not isinstance(spec, list) or not spec or spec[0][:2] != ["correct", "u1"]:
        raise _bad(spath, "metadata 'arrays' must list 'correct' first")
    out: dict[str, np.ndarray] = {}
    for entry in spec:
        if not (isinstance(entry, list) and len(entry) == 3 and type(entry[2]) is int and entry[2] >= 0):
            raise _bad(spath, f"bad array entry {str(entry)[:80]!r}")
        name, dt, count = entry
        if allowed.get(name) != dt or name in out:
            raise _bad(spath, f"unexpected array {name!r} ({dt!r})")
        size = np.dtype(dt).itemsize * count
        if offset + size > len(data):
            raise _bad(spath, f"array {name!r} is truncated")
        out[name] = np.frombuffer(data, dtype=dt, count=count, offset=offset)
        offset += size
    if offset != len(data):
        raise _bad(spath, f"{len(data) - offset} trailing bytes")
    return out


__all__ = ["MAGIC", "entry_bytes", "read_entry", "RecordsError"]
