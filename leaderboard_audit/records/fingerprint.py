"""A content hash of a records source: the report's provenance and the load cache's key.

Only the files a reader accepts are hashed (docs/records.md, "Packed records and the
load cache"): a stray file, a FIFO, or a symlink leading out of the source is never
opened, so a link to a 3 GB file next to the records costs nothing and changes nothing.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import stat
from pathlib import Path

TABLE_SUFFIXES = (".csv", ".tsv", ".parquet", ".pq")
CHUNK = 1 << 20


def _regular_inside(f: Path, root_real: Path | None) -> bool:
    """A regular file (after links) that, when ``root_real`` is given, resolves inside it."""
    try:
        st = os.stat(f)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode):
        return False
    if root_real is None:
        return True
    try:
        real = f.resolve(strict=True)
    except (OSError, RuntimeError):
        return False
    return root_real in real.parents


def records_v1_files(root: Path) -> list[Path]:
    """Exactly the files ``read_records_dir`` reads: its legend (any name of ``LEGEND_NAMES``)
    and the records files of any layout (canonical, swapped, flat), listed by the reader's own
    functions (``legend.find_legend``, ``layout.discover``) so the two cannot drift apart.

    What the reader would refuse (a link out of the folder, a FIFO) is left out unopened; such a
    folder's load fails anyway, so nothing is cached or reported for it.
    """
    from .errors import ProblemLog, RecordsError
    from .layout import discover
    from .legend import find_legend

    root_real = root.resolve()
    out: list[Path] = []
    try:
        legend = find_legend(root)
    except RecordsError:
        legend = None
    if legend is not None and _regular_inside(legend, root_real):
        out.append(legend)
    try:
        _, found = discover(root, root_real, ProblemLog(), lenient=True)
    except OSError:
        return out
    return out + [f.path for f in found if _regular_inside(f.path, root_real)]


def _legend_beside(table: Path) -> list[Path]:
    """The legend a table reader takes from the table's folder (any name of ``LEGEND_NAMES``)."""
    from .errors import RecordsError
    from .legend import find_legend

    try:
        legend = find_legend(table.parent)
    except RecordsError:
        return []
    return [legend] if legend is not None and _regular_inside(legend, table.parent.resolve()) else []


def importer_files(root: Path, patterns: tuple[str, ...]) -> list[Path]:
    """Files matching ``patterns`` anywhere under ``root`` (no hidden folders, no links out)."""
    root_real = root.resolve()
    out = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith(".") or not any(fnmatch.fnmatchcase(name, p) for p in patterns):
                continue
            f = Path(dirpath) / name
            if _regular_inside(f, root_real):
                out.append(f)
    return sorted(out, key=lambda f: f.relative_to(root).as_posix())


def source_files(path: str | os.PathLike[str], fmt: str = "auto") -> list[Path]:
    """The files that make up a records source, in hashing order.

    ``fmt``: as ``--audit-format`` ("auto", "records", "table" or an importer's name).
    A file source is the file itself (plus the legend next to a table); an importer's
    source is the files its declared patterns match (``FORMAT_INFO["patterns"]``, from
    the importers' registry); "auto" on a directory is what the records reader reads,
    plus, when it has no legend, what any importer would read.
    """
    p = Path(path)
    if p.is_file():
        files = [p] if _regular_inside(p, None) else []
        if p.suffix.lower() in TABLE_SUFFIXES:
            files += _legend_beside(p)
        return files
    if not p.is_dir():
        return []
    from ..formats import is_importer, source_patterns

    if is_importer(fmt):
        return importer_files(p, source_patterns(fmt))
    files = records_v1_files(p)
    if fmt == "auto" and not any(
        x.parent == p and x.suffix == ".json" for x in files
    ):  # could be any: what every importer would read
        more = importer_files(p, source_patterns())
        files = sorted(set(files) | set(more), key=lambda x: x.relative_to(p).as_posix())
    return files


def _hash_file(h, f: Path) -> None:
    """Feed ``f``'s bytes to ``h``; opened non-blocking and checked regular (a FIFO swapped in never hangs)."""
    try:
        fd = os.open(f, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        h.update(b"<unreadable>")
        return
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            h.update(b"<not a regular file>")
            return
        if f.suffix.lower() == ".jsonl" and st.st_size > _max_jsonl_bytes():
            # the line readers refuse it unread (records.lines.MAX_FILE_BYTES): no load, no cache
            # entry and no report can follow, so its bytes need not be read here either (C14)
            h.update(b"<larger than the records file bound: %d bytes>" % st.st_size)
            return
        try:
            for chunk in iter(lambda: fh.read(CHUNK), b""):
                h.update(chunk)
        except OSError:
            h.update(b"<unreadable>")


def _max_jsonl_bytes() -> int:
    from .lines import MAX_FILE_BYTES

    return MAX_FILE_BYTES


def _file_digest(f: Path) -> bytes:
    h = hashlib.sha256()
    _hash_file(h, f)
    return h.digest()


def sha256_of(path: str | os.PathLike[str], fmt: str = "auto") -> str:
    """The source's fingerprint: a file's SHA-256; a folder's SHA-256 over (relative path, SHA-256 of the
    bytes) of every accepted file in sorted order. Files are hashed in parallel threads (hashlib
    releases the GIL), so a 31 MB folder costs about one core's time split over the cores."""
    p = Path(path)
    files = source_files(p, fmt)
    if p.is_file() and files == [p]:
        h = hashlib.sha256()
        _hash_file(h, p)
        return h.hexdigest()
    workers = min(4, os.cpu_count() or 1, len(files))
    if workers > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(workers) as pool:
            digests = list(pool.map(_file_digest, files))
    else:
        digests = [_file_digest(f) for f in files]
    h = hashlib.sha256(b"leaderboard-audit/fingerprint-v2\0")
    base = p.parent if p.is_file() else p
    for f, dg in zip(files, digests):
        h.update(f.relative_to(base).as_posix().encode("utf-8", "surrogateescape") + b"\0" + dg)
    return h.hexdigest()


__all__ = ["records_v1_files", "sha256_of", "source_files"]
