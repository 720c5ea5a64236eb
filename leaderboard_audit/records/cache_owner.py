"""What the load cache owns and whom it trusts (docs/records.md, "The load cache").

* A folder is a cache only when it holds ``MARKER``, a file the cache wrote itself
  (mode 0600, owned by the current user) holding a random per-cache secret. Pruning and
  ``cache --clear`` touch nothing in a folder without it, and even then only files named
  as the cache names them (``<40 hex>.entry`` and its temp files): a user's own
  ``records.arrow`` in the same folder is never deleted.
* Each entry carries ``mac`` = HMAC-SHA256(secret, its content checksum). The checksum
  covers the entry's whole content (records/cache_entry.py), so an entry rewritten with
  a recomputed checksum but without the secret is not served. A marker that is not a
  private file of this user (a folder shared with others) makes the cache unusable: the
  records are then loaded directly.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import stat
from pathlib import Path

MARKER = ".leaderboard-audit-cache"
ENTRY_RE = re.compile(r"[0-9a-f]{40}\.entry")
TEMP_RE = re.compile(r"\.[0-9a-f]{40}\.entry\..+\.tmp")
_SECRET_RE = re.compile(rb"[0-9a-f]{64}\n?")


def is_entry_name(name: str) -> bool:
    return ENTRY_RE.fullmatch(name) is not None


def is_temp_name(name: str) -> bool:
    return TEMP_RE.fullmatch(name) is not None


def _read_secret(marker: Path) -> bytes | None:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(marker, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o077:
            return None
        if hasattr(os, "getuid") and st.st_uid != os.getuid():
            return None
        data = os.read(fd, 80)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data[:64] if _SECRET_RE.fullmatch(data) else None


def cache_secret(folder: Path, *, create: bool) -> bytes | None:
    """The folder's secret; with ``create``, the marker is written first if absent (atomically:
    a private temp file linked into place, so a concurrent creator's secret wins whole)."""
    marker = folder / MARKER
    found = _read_secret(marker)
    if found is not None or not create or os.path.lexists(marker):
        return found
    tmp = folder / f".{MARKER}.{secrets.token_hex(8)}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_hex(32).encode() + b"\n")
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, marker)
        except FileExistsError:
            pass
    except OSError:
        return None
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass
    return _read_secret(marker)


def sign(secret: bytes, checksum: str) -> str:
    return hmac.new(secret, checksum.encode(), hashlib.sha256).hexdigest()


def signed_by(secret: bytes | None, meta: dict) -> bool:
    """True when the entry's ``mac`` is this cache's signature of its (verified) checksum."""
    mac, checksum = meta.get("mac"), meta.get("content_sha256")
    if secret is None or not isinstance(mac, str) or not isinstance(checksum, str):
        return False
    return hmac.compare_digest(mac, sign(secret, checksum))


def owns(folder: Path) -> bool:
    """The folder carries this cache's marker (pruning and clearing touch nothing otherwise)."""
    return os.path.isfile(folder / MARKER) and not os.path.islink(folder / MARKER)


__all__ = ["MARKER", "cache_secret", "is_entry_name", "is_temp_name", "owns", "sign", "signed_by"]
