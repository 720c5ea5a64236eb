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


def records_v1_files(root: Path) -> list[Path]:
    """grid.json and <benchmark>/<model>.jsonl: what read_records_dir reads."""
    root_real = root.resolve()
    out = []
    if _regular_inside(root / "grid.json", root_real):
        out.append(root / "grid.json")
    try:
        subdirs = sorted(root.iterdir(), key=lambda p: p.name)
    except OSError:
        return out
    for d in subdirs:
        if d.name.startswith((".", "_")) or not d.is_dir():
            continue
        try:
            real = d.resolve(strict=True)
        except (OSError, RuntimeError):
            continue
        if root_real not in real.parents:
            continue
        try:
            names = sorted(d.iterdir(), key=lambda p: p.name)
        except OSError:
            continue
        out += [f for f in names if f.suffix == ".jsonl" and not f.name.startswith(".")
                and _regular_inside(f, root_real)]
    return out


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

    ``fmt``: "auto", "records", "table", "lm-eval" or "helm" (as ``--audit-format``).
    A file source is the file itself (plus the grid.json next to a table); "auto" on a
    directory is records-v1 when it has a grid.json, else what either reader would read.
    """
    p = Path(path)
    if p.is_file():
        files = [p] if _regular_inside(p, None) else []
        if p.suffix.lower() in TABLE_SUFFIXES and _regular_inside(p.parent / "grid.json", p.parent.resolve()):
            files.append(p.parent / "grid.json")
        return files
    if not p.is_dir():
        return []
    f = fmt.lower().replace("_", "-")
    if f in ("lm-eval", "lmeval", "lm-evaluation-harness"):
        return importer_files(p, LMEVAL_PATTERNS + (MAPPING_FILE,))
    if f == "helm":
        return importer_files(p, HELM_PATTERNS + (MAPPING_FILE,))
    files = records_v1_files(p)
    if f == "auto" and not (p / "grid.json").is_file():   # could be either: what both would read
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


def sha256_of(path: str | os.PathLike[str], fmt: str = "auto") -> str:
    """SHA-256 over (relative path, bytes) of every accepted file, in sorted order; a file: its bytes."""
    p = Path(path)
    h = hashlib.sha256()
    files = source_files(p, fmt)
    single = p.is_file()
    for f in files:
        if not (single and f == p):
            rel = f.name if single else f.relative_to(p).as_posix()
            h.update(rel.encode("utf-8", "surrogateescape") + b"\0")
        _hash_file(h, f)
        if not (single and f == p):
            h.update(b"\0")
    return h.hexdigest()


__all__ = ["records_v1_files", "sha256_of", "source_files"]
