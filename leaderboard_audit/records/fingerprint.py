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
LMEVAL_PATTERNS = ("samples_*.jsonl", "results_*.json", "*.yaml", "*.yml")
HELM_PATTERNS = ("run_spec.json", "scenario_state.json", "per_instance_stats.json")
LIGHTEVAL_PATTERNS = ("details_*.parquet", "results_*.json")  # importers/lighteval.py FORMAT_INFO
MAPPING_FILE = "audit_mapping.json"
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


def _confined_entry(entry: os.DirEntry, root_real: Path) -> bool:
    """A directory entry that is no link, or a link that resolves inside ``root_real``."""
    if not entry.is_symlink():
        return True
    try:
        real = Path(entry.path).resolve(strict=True)
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

    ``fmt``: "auto", "records", "table", "lm-eval", "helm" or "lighteval" (as ``--audit-format``).
    A file source is the file itself (plus the legend next to a table); "auto" on a
    directory is what the records reader reads, plus, when it has no legend, what an
    importer would read.
    """
    p = Path(path)
    if p.is_file():
        files = [p] if _regular_inside(p, None) else []
        if p.suffix.lower() in TABLE_SUFFIXES:
            files += _legend_beside(p)
        return files
    if not p.is_dir():
        return []
    f = fmt.lower().replace("_", "-")
    if f in ("lm-eval", "lmeval", "lm-evaluation-harness"):
        return importer_files(p, LMEVAL_PATTERNS + (MAPPING_FILE,))
    if f == "helm":
        return importer_files(p, HELM_PATTERNS + (MAPPING_FILE,))
    if f in ("lighteval", "light-eval"):
        return importer_files(p, LIGHTEVAL_PATTERNS + (MAPPING_FILE,))
    files = records_v1_files(p)
    if f == "auto" and not any(
        x.parent == p and x.suffix == ".json" for x in files
    ):  # could be either: what both would read
        more = importer_files(p, LMEVAL_PATTERNS + HELM_PATTERNS + (MAPPING_FILE,))
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
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            h.update(b"<not a regular file>")
            return
        try:
            for chunk in iter(lambda: fh.read(CHUNK), b""):
                h.update(chunk)
        except OSError:
            h.update(b"<unreadable>")


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
