"""A load cache: a second load of the same records does not re-parse them (docs/records.md, "The load cache").

An entry holds the packed form's content (records/packed.py) of what :func:`load_records`
returned, in a layout numpy reads without pyarrow (records/cache_entry.py), named by a key = SHA-256 of (cache version, packed format, the source's content
fingerprint, the path as given, the load options, the package version). An entry is used only when the
fingerprint stored inside it equals the fingerprint just computed from the source, its
content checksum verifies and it carries this cache's signature of that checksum
(records/cache_owner.py: a per-cache secret in a private marker file); anything else (a
stale, corrupt, foreign, re-checksummed or half-written entry) is ignored and rebuilt.
The cache deletes only its own files, and only in a folder carrying its marker. Entries are written atomically (temp file + rename)
under a file lock, so parallel loads (xdist workers) build an entry once; the cache is
kept under a size bound by deleting the least recently used entries.

Where: ``cache_dir=`` if given (``False`` or "off" disables it), else ``$LEADERBOARD_AUDIT_CACHE`` (``off``/``0``/empty
disables it), else ``$XDG_CACHE_HOME/leaderboard-audit/records``, else
``~/.cache/leaderboard-audit/records``. Bound: ``max_bytes=`` or
``$LEADERBOARD_AUDIT_CACHE_MAX_MB`` (default 2048). Clear it with
``leaderboard-audit cache --clear`` or by deleting the folder.

A cache that cannot be used (unwritable folder, lock held too long) is skipped: the records are loaded directly, never wrongly.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from .cache_owner import cache_secret, is_entry_name, is_temp_name, owns, sign, signed_by
from .fingerprint import sha256_of
from .model import Records

CACHE_VERSION = 2
ENTRY_SUFFIX = ".entry"
DEFAULT_MAX_MB = 2048
LOCK_TIMEOUT_S = 600.0
STALE_TMP_S = 3600.0
OFF = ("", "0", "off", "no", "false", "none")


def cache_home() -> Path:
    """The one folder the tool caches in: ``$XDG_CACHE_HOME/leaderboard-audit``, else
    ``~/.cache/leaderboard-audit``. The records' load cache (``records/``), pytest's cache when
    the records folder is the rootdir (``pytest-cache/``), the collector's models and vLLM's
    compiled kernels go in sub-folders of it; each has its own variable to move it. Here, in
    the lowest layer, so every layer above reads the same rule."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "leaderboard-audit"


def default_cache_dir() -> Path | None:
    """The cache folder from the environment (None when disabled)."""
    env = os.environ.get("LEADERBOARD_AUDIT_CACHE")
    if env is not None:
        return None if env.strip().lower() in OFF else Path(env).expanduser()
    return cache_home() / "records"


def default_max_bytes() -> int:
    """``$LEADERBOARD_AUDIT_CACHE_MAX_MB`` in bytes: ``inf`` is unbounded; unreadable or NaN is the default."""
    try:
        mb = float(os.environ.get("LEADERBOARD_AUDIT_CACHE_MAX_MB", DEFAULT_MAX_MB))
    except ValueError:
        mb = float(DEFAULT_MAX_MB)
    if mb != mb:  # NaN
        mb = float(DEFAULT_MAX_MB)
    return sys.maxsize if mb * 1024 * 1024 >= sys.maxsize else int(mb * 1024 * 1024)


def entry_key(fingerprint: str, path: str | os.PathLike[str], load_kwargs: dict[str, Any]) -> dict[str, Any]:
    from .packed import PACKED_FORMAT

    from .. import __version__

    return {
        "version": CACHE_VERSION,
        "package": __version__,  # a newer reader never serves an older reader's entries
        "packed": PACKED_FORMAT,
        "fingerprint": fingerprint,
        "path": str(Path(path)),
        "load": {k: load_kwargs[k] for k in sorted(load_kwargs)},
    }


def entry_name(key: dict[str, Any]) -> str:
    text = json.dumps(key, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:40] + ENTRY_SUFFIX


def _read_entry(entry: Path, key: dict[str, Any], path: str | os.PathLike[str]) -> Records | None:
    """The entry's records if it is intact, signed by this cache and built from exactly this source; else None."""
    if not entry.is_file():
        return None
    from .cache_entry import read_entry
    from .errors import RecordsError

    secret = cache_secret(entry.parent, create=False)
    if secret is None:
        return None
    try:
        rec, meta = read_entry(entry)
    except (RecordsError, OSError, ValueError):
        return None
    if meta.get("cache") != json.loads(json.dumps(key, default=str)) or not signed_by(secret, meta):
        return None
    try:
        os.utime(entry)  # least-recently-used bookkeeping
    except OSError:
        pass
    if rec.grid.inferred:  # the warning a direct load gives
        import warnings

        from .reader import InferredLegendWarning

        note = next((n for n in rec.notes if "legend inferred" in n), f"{path}: legend inferred")
        warnings.warn(note, InferredLegendWarning, stacklevel=4)
    return replace(rec, source=str(Path(path)))


def _write_entry(entry: Path, rec: Records, key: dict[str, Any], secret: bytes) -> None:
    from .cache_entry import entry_bytes
    from .writer import atomic_write_bytes

    meta = {"cache": json.loads(json.dumps(key, default=str))}
    atomic_write_bytes(entry, entry_bytes(rec, extra_meta=meta, sign=lambda checksum: sign(secret, checksum)))


def prune(folder: str | os.PathLike[str], max_bytes: int, keep: Path | None = None) -> list[Path]:
    """Delete least recently used entries until the folder holds at most ``max_bytes``; returns them.

    Also removes temp files of interrupted writes older than an hour. Only the cache's own
    files (records/cache_owner.py) in a folder carrying its marker are touched. Skipped when
    another process is pruning.
    """
    from filelock import FileLock, Timeout

    d = Path(folder)
    removed: list[Path] = []
    if not owns(d):
        return removed
    try:
        with FileLock(str(d / ".prune.lock"), timeout=0):
            now = time.time()
            entries = []
            for f in d.iterdir():
                try:
                    st = f.stat()
                except OSError:
                    continue
                if is_temp_name(f.name) and now - st.st_mtime > STALE_TMP_S:
                    f.unlink(missing_ok=True)
                elif is_entry_name(f.name):
                    entries.append((st.st_mtime, st.st_size, f))
            total = sum(size for _, size, _ in entries)
            for _, size, f in sorted(entries, key=lambda e: e[0]):
                if total <= max_bytes:
                    break
                if keep is not None and f == keep:
                    continue
                f.unlink(missing_ok=True)
                removed.append(f)
                total -= size
    except (Timeout, OSError):
        pass
    return removed


def resolve_cache_dir(cache_dir: str | os.PathLike[str] | bool | None) -> Path | None:
    """``None``: the default folder; ``False`` or "off"/"0"/"": no cache; else that folder."""
    if cache_dir is None:
        return default_cache_dir()
    if cache_dir is False or (isinstance(cache_dir, str) and cache_dir.strip().lower() in OFF):
        return None
    if cache_dir is True:
        return default_cache_dir()
    return Path(cache_dir).expanduser()


def load_cached_entry(
    path: str | os.PathLike[str],
    *,
    cache_dir: str | os.PathLike[str] | bool | None = None,
    max_bytes: int | None = None,
    fingerprint: str | None = None,
    **load_kwargs: Any,
) -> tuple[Records, str]:
    """:func:`load_cached`, plus the source's SHA-256 fingerprint (the report's ``records.sha256``).

    ``fingerprint``: the source's :func:`sha256_of`, when the caller computed it already
    (the pytest controller, for its xdist workers): it is then not computed again, and an
    entry is used only if it was built from exactly that content.
    """
    from . import load_records
    from .names import check_set_names
    from .packed import is_packed

    p = Path(path)
    fingerprint = fingerprint or sha256_of(p)
    folder = resolve_cache_dir(cache_dir)
    if folder is None or is_packed(p):  # disabled, or already the packed form
        return load_records(p, **load_kwargs), fingerprint
    key = entry_key(fingerprint, p, load_kwargs)
    entry = folder / entry_name(key)
    rec = _read_entry(entry, key, p)
    if rec is not None:
        check_set_names(rec.models, rec.benchmarks, str(p))  # an entry an older version built
        return rec, fingerprint
    try:
        from filelock import FileLock, Timeout

        folder.mkdir(parents=True, exist_ok=True)
        secret = cache_secret(folder, create=True)
        if secret is None:  # not a private cache of this user: never trusted, never written
            return load_records(p, **load_kwargs), fingerprint
        lock = FileLock(str(folder / ".build.lock"), timeout=LOCK_TIMEOUT_S)
        lock.acquire()
    except (ImportError, OSError, Timeout):
        return load_records(p, **load_kwargs), fingerprint
    try:
        rec = _read_entry(entry, key, p)  # built by another process while we waited
        if rec is not None:
            return rec, fingerprint
        rec = load_records(p, **load_kwargs)
        if sha256_of(p) == fingerprint:  # unchanged while it was parsed: safe to keep
            try:
                _write_entry(entry, rec, key, secret)
            except (OSError, ValueError, ImportError):  # a cache must never fail a load
                return rec, fingerprint
    finally:
        lock.release()
    prune(folder, default_max_bytes() if max_bytes is None else max_bytes, keep=entry)
    return rec, fingerprint


def load_cached(
    path: str | os.PathLike[str],
    *,
    cache_dir: str | os.PathLike[str] | bool | None = None,
    max_bytes: int | None = None,
    **load_kwargs: Any,
) -> Records:
    """``load_records(path, **load_kwargs)``, served from the load cache when the source is unchanged.

    Returns records equal to a direct load (same arrays, items, legend, notes, dropped,
    ``source``) and gives the same ``InferredLegendWarning``; errors are the direct
    load's ``RecordsError`` (a failed load is never cached).
    """
    return load_cached_entry(path, cache_dir=cache_dir, max_bytes=max_bytes, **load_kwargs)[0]


def cache_info(cache_dir: str | os.PathLike[str] | None = None) -> tuple[Path | None, int, int]:
    """(folder, number of entries, total bytes)."""
    folder = resolve_cache_dir(cache_dir)
    if folder is None or not folder.is_dir():
        return folder, 0, 0
    if not owns(folder):
        return folder, 0, 0
    sizes = [f.stat().st_size for f in folder.iterdir() if is_entry_name(f.name) and f.is_file()]
    return folder, len(sizes), sum(sizes)


def clear_cache(cache_dir: str | os.PathLike[str] | None = None) -> int:
    """Delete every entry (and stale temp file) of a folder carrying the cache's marker; returns
    how many entries were removed (0 for a folder that is not a cache: nothing in it is touched)."""
    folder = resolve_cache_dir(cache_dir)
    if folder is None or not folder.is_dir():
        return 0
    return len(prune(folder, -1))


__all__ = [
    "cache_home",
    "cache_info",
    "clear_cache",
    "default_cache_dir",
    "load_cached",
    "load_cached_entry",
    "prune",
    "resolve_cache_dir",
]
