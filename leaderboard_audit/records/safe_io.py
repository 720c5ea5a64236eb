"""Opening and decoding untrusted records files (docs/records.md, "Security model").

Every reader opens files through :func:`open_regular`: the file is opened without
blocking and checked with ``fstat`` on the open descriptor, so a FIFO, a device or
a directory is a :class:`RecordsError` instead of a hang, and a file swapped between
a check and the open cannot slip through. JSON goes through :func:`loads_strict`,
which refuses duplicate keys at any depth (``json.loads`` would keep the last one).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import IO, Any

from .errors import RecordsError

# What a malformed line can make json.loads raise besides JSONDecodeError: undecodable
# bytes, deep nesting (RecursionError), integers past Python's digit limit (ValueError).
JSON_ERRORS = (ValueError, UnicodeDecodeError, RecursionError)


# Decoded JSON costs far more memory than its bytes: ``[{},{},...]`` is ~24 bytes of
# Python objects per byte of text. The bound is on the values ``json.loads`` would build,
# counted (over, never under: brackets and commas inside strings count too) before it
# runs: 16 million values are at most ~1.6 GB of objects, and an honest HELM or
# Inspect file of 400 MB holds fewer (one value per 25-40 bytes). docs/reliability.md.
MAX_JSON_VALUES = 16_000_000


def json_values_problem(data: bytes | str, max_values: int = MAX_JSON_VALUES) -> str | None:
    """Why decoding ``data`` could cost too much memory (too many values), or None.

    Counts ``{``, ``[`` and ``,``: a value is the root, an element after a comma, or the first
    element of a container, so this is an upper bound (brackets and commas inside strings
    count too); linear, in C, without allocating."""
    if isinstance(data, str):
        n = data.count("{") + data.count("[") + data.count(",")
    else:
        n = data.count(b"{") + data.count(b"[") + data.count(b",")
    if n > max_values:
        return f"holds up to {n:,} JSON values (limit {max_values:,}): too many to decode"
    return None


class DuplicateKeyError(ValueError):
    """A JSON object names one key twice."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(f"duplicate key {key[:80]!r} in one JSON object")
            seen.add(key)
    return obj


_STRICT = json.JSONDecoder(object_pairs_hook=_no_duplicates)


def loads_strict(raw: bytes | str) -> Any:
    """``json.loads`` that refuses an object naming a key twice (raises DuplicateKeyError).

    Bytes must be UTF-8 (a leading byte-order mark is allowed); one decoder is reused,
    as ``json.loads(..., object_pairs_hook=...)`` would build a new one per call.
    """
    text = raw.decode("utf-8-sig") if isinstance(raw, bytes | bytearray) else raw
    return _STRICT.decode(text)


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: str | os.PathLike[str], what: str = "the file") -> IO[bytes]:
    """Open ``path`` for binary reading if it is a regular file, else raise RecordsError.

    ``O_NONBLOCK`` makes opening a FIFO return at once (a blocking open waits for a
    writer forever); the type is then checked on the descriptor itself.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise RecordsError.one(str(path), None, f"cannot read {what} ({exc.strerror or exc})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise RecordsError.one(
                str(path),
                None,
                f"cannot read {what}: it is {_kind(mode)}, not a regular file",
                fix="records are plain files; replace it with one",
            )
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def is_regular(path: Path) -> bool:
    """True if ``path`` (following links) is a regular file; never blocks, never raises."""
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except (OSError, RuntimeError):
        return False


def read_regular_bytes(path: str | os.PathLike[str], limit: int, what: str = "the file") -> bytes:
    """The whole content of a regular file of at most ``limit`` bytes."""
    with open_regular(path, what) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > limit:
            raise RecordsError.one(str(path), None, f"{what} is {size} bytes (limit {limit})")
        try:
            data = fh.read(limit + 1)
        except OSError as exc:
            raise RecordsError.one(str(path), None, f"cannot read {what} ({exc.strerror or exc})") from None
    if len(data) > limit:
        raise RecordsError.one(str(path), None, f"{what} is over {limit} bytes (limit {limit})")
    return data
