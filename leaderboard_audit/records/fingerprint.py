"""A content hash of a records source, for the report's provenance."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path


def sha256_of(path: str | os.PathLike[str]) -> str:
    """SHA-256 over (relative path, bytes) of every file, in sorted order; a file: its bytes."""
    p = Path(path)
    h = hashlib.sha256()
    if p.is_file():
        with open(p, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()
    for f in sorted(x for x in p.rglob("*") if x.is_file() and not x.name.startswith(".")):
        rel = f.relative_to(p).as_posix()
        if any(part.startswith((".", "_")) for part in f.relative_to(p).parts[:-1]):
            continue
        h.update(rel.encode() + b"\0")
        h.update(f.read_bytes())
        h.update(b"\0")
    return h.hexdigest()
