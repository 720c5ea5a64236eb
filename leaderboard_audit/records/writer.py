"""Write records-v1 with deterministic bytes, atomically."""

from __future__ import annotations

import errno
import json
import math
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from .errors import RecordsError
from .grid import Grid
from .model import ANSWER_CLASS_ABSENT, ANSWER_CLASSES, PRED_ABSENT, PRED_UNPARSEABLE, UNPARSED_ABSENT, Records
from .names import RESERVED_FIX, benchmark_name_problem, filename_for_model, reserved_benchmark


def dumps_line(obj: dict[str, Any]) -> str:
    """The one serialization every records line uses: sorted keys, compact, UTF-8."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _umask() -> int:
    """The process umask, read without changing it where /proc allows."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_SPECIAL_ROOTS = ("/dev/", "/proc/")


def _in_place_target(path: Path) -> bool:
    """True when ``path`` must be written where it is, never renamed over: an existing
    character device or FIFO (``/dev/null``, a pipe), a file under /proc, or an existing link
    under /dev or into /proc (``/dev/stdout`` -> ``/proc/self/fd/1``, whatever fd 1 is). Raises OSError for other non-regular files
    (a block device, a socket): a report never replaces or fills one."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError:
        return False  # the normal path names the error
    if st is not None and (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
        return True
    if st is not None and (stat.S_ISBLK(st.st_mode) or stat.S_ISSOCK(st.st_mode)):
        raise OSError(errno.EINVAL, "it is a block device or a socket, not a regular file; refusing to write it")
    if st is None:
        return False
    spelled = os.path.abspath(path)
    try:
        target = os.readlink(path)
    except OSError:  # not a link
        return spelled.startswith("/proc/")
    return spelled.startswith(_SPECIAL_ROOTS) or target.startswith("/proc/")


def _write_in_place(path: Path, data: bytes) -> None:
    flags = os.O_WRONLY | getattr(os, "O_NONBLOCK", 0)  # a FIFO without a reader: ENXIO, not a hang
    if not stat.S_ISCHR(os.stat(path).st_mode):
        flags |= os.O_TRUNC
    fd = os.open(path, flags)
    try:
        os.set_blocking(fd, True)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write to a temporary file in the same directory, fsync, then rename.

    The file gets the permissions a plain ``open(path, "w")`` would give (0666 less
    the umask), not mkstemp's private 0600. A device or FIFO (``/dev/null``,
    ``/dev/stdout``) is written in place, never renamed over; a block device or socket
    is refused (OSError), so every writer (reports, ``pack -o``, the collector) is safe.
    """
    path = Path(path)
    if _in_place_target(path):
        _write_in_place(path, data)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            if hasattr(os, "fchmod"):
                os.fchmod(fh.fileno(), 0o666 & ~_umask())
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def grid_bytes(grid: Grid) -> bytes:
    return (json.dumps(grid.to_json(), sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode()


def write_grid(grid: Grid, root: str | os.PathLike[str]) -> None:
    atomic_write_bytes(Path(root) / "grid.json", grid_bytes(grid))


def write_model_lines(path: str | os.PathLike[str], lines: Iterable[dict[str, Any]]) -> None:
    """Write one <benchmark>/<model>.jsonl atomically (used by the collector too)."""
    atomic_write_bytes(path, "".join(dumps_line(obj) + "\n" for obj in lines).encode())


def _per_config(keys: tuple[str, ...], values: list[Any], absent: Any, conv=lambda v: v) -> dict[str, Any]:
    return {k: conv(v) for k, v in zip(keys, values) if not (v == absent or (isinstance(v, float) and math.isnan(v)))}


def model_lines(records: Records, mi: int, benchmark: str) -> list[dict[str, Any]]:
    keys = records.grid.keys
    idx = np.flatnonzero(records.items.benchmark == benchmark)
    model = records.models[mi]
    corr = records.correct[mi][idx].astype(np.uint8).tolist()
    if records.score is not None:  # a graded outcome is its number; 0 and 1 stay 0/1 (docs/records.md)
        sc = records.score[mi][idx].tolist()
        corr = [[v if 0.0 < v < 1.0 else b for v, b in zip(sr, cr)] for sr, cr in zip(sc, corr)]
    if records.missing is not None:  # a missing cell is written as its reason (docs/records.md)
        from .missing import MISSING_REASONS

        names = [None, *MISSING_REASONS]
        miss = records.missing[mi][idx].tolist()
        corr = [[names[x] if x else v for v, x in zip(cr, xr)] for cr, xr in zip(corr, miss)]

    def rows(a: np.ndarray | None) -> list[Any] | None:
        return a[mi][idx].tolist() if a is not None else None

    pred, marg, klass, unparsed = (
        rows(records.pred),
        rows(records.margin),
        rows(records.answer_class),
        rows(records.unparsed),
    )
    it = records.items
    out = []
    for r, i in enumerate(idx.tolist()):
        obj: dict[str, Any] = {
            "benchmark": benchmark,
            "model": model,
            "item_id": it.item_id[i],
            "correct": dict(zip(keys, corr[r])),
        }
        for name, value in (("gold", it.gold[i]), ("question", it.question[i]), ("options", it.options[i])):
            if value is not None:
                obj[name] = value
        maps = (
            ("pred", pred, PRED_ABSENT, lambda v: None if v == PRED_UNPARSEABLE else v),
            ("margin", marg, None, lambda v: v),
            ("answer_class", klass, ANSWER_CLASS_ABSENT, lambda v: ANSWER_CLASSES[v]),
        )
        for name, values, absent, conv in maps:
            d = _per_config(keys, values[r], absent, conv) if values is not None else None
            if d:
                obj[name] = d
        if unparsed is not None and unparsed[r] != UNPARSED_ABSENT:
            obj["unparsed"] = unparsed[r]
        out.append(obj)
    return out


def dirname_for_benchmark(benchmark: str) -> str:
    """The benchmark's directory name; refuses names the reader would skip or that leave the root."""
    why = benchmark_name_problem(benchmark)
    if why is not None:
        raise RecordsError.one(
            "<records>", None, why, fix=RESERVED_FIX if reserved_benchmark(benchmark) else "rename the benchmark"
        )
    return benchmark


def write_records(records: Records, root: str | os.PathLike[str]) -> Path:
    """Write ``records`` as a records-v1 directory; byte-identical for equal records."""
    root = Path(root)
    names = [filename_for_model(m) for m in records.models]
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:
        raise RecordsError.one(
            "<records>",
            None,
            f"models {[m for m, n in zip(records.models, names) if n in clash]} would share the file name(s) {clash}",
            fix="rename the models",
        )
    benches = [dirname_for_benchmark(b) for b in records.benchmarks]
    root.mkdir(parents=True, exist_ok=True)
    write_grid(records.grid, root)
    for b in benches:
        for mi, name in enumerate(names):
            write_model_lines(root / b / name, model_lines(records, mi, b))
    return root
