"""What xdist workers hand each other: a result computed once, by whichever worker needs it first.

pytest-xdist's documented pattern for a session-scoped result computed once across workers
("Making session-scoped fixtures execute only once"): a file lock in a directory every worker
sees; the first worker to take the lock computes and writes the result, the others wait on
the lock and read it. Here the directory is made by the controller for one run and named to
the workers in ``workerinput`` (``AuditSession.pytest_configure_node``); results are JSON,
written to a temporary file and renamed, so a reader never sees half of one.

A worker that dies while computing releases its lock with its process (``flock``): the next
one finds no result and computes it itself, so a crash costs time, never a hang. Locks nest
only in one direction per name and from the counts summed over items down to the base
quantities they start from (``per_model.SHAREABLE``), so no two workers can wait on each
other.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

try:
    import fcntl
except ImportError:  # Windows: no flock; the audit then keeps its one-process-per-scope units
    fcntl = None  # type: ignore[assignment]

_KEY = re.compile(r"^[A-Za-z0-9_.-]+$")


def available() -> bool:
    """Whether workers can share results on this platform (POSIX ``flock``)."""
    return fcntl is not None


class SharedResults:
    """Results keyed by name in one run's directory, each computed by one worker: JSON
    (``once``) or one numpy array (``array_once``)."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def once(self, key: str, compute: Callable[[], Any]) -> tuple[Any, bool]:
        """(the result for ``key``, whether this process computed it): ``compute()`` under the
        key's lock unless a result is already there, in which case it is read."""
        got = self._once(key, ".json", _computed(compute, _write_json), lambda p: json.loads(p.read_bytes()), wait=True)
        return got  # type: ignore[return-value]

    def read(self, key: str) -> Any:
        """The JSON result for ``key`` some worker wrote (``once``), or None if none did."""
        path = self.root / f"{key}.json"
        return json.loads(path.read_bytes()) if path.is_file() else None

    def array_once(self, key: str, compute: Callable[[], np.ndarray], *, wait: bool = True) -> Any:
        """The array for ``key``, computed here (under the key's lock) or read, read-only and
        memory-mapped: every process maps the one file, so the workers hold one copy between
        them (the page cache's), and the process that computed it drops its own once the file
        is written. ``wait=False``: ``None`` while another process holds the lock (is
        computing it)."""
        got = self._once(key, ".npy", _computed(compute, _write_array), _map_array, wait=wait, reread=True)
        return None if got is None else got[0]

    def array_filled_once(
        self,
        key: str,
        shape: tuple[int, ...],
        dtype: Any,
        fill: Callable[[np.ndarray, int, int], Any],
        *,
        parts: int = 1,
        first: int = 0,
        align: int = 8,
    ) -> np.ndarray:
        """The array for ``key`` (read-only, memory-mapped), written in place by the processes
        that need it: ``fill(rows, lo, hi)`` writes rows ``lo:hi`` (first axis) into ``rows``,
        a writable view of the one file's mapping, so no process holds a private copy (the
        records' unpacked bits: 208 MB at 1,000 x 8,000 x 26).

        The rows are cut into ``parts`` (at multiples of ``align`` rows), each filled by one
        process under its own lock: a process fills part ``first`` (its own), then every part
        no process has taken, then waits for the parts others are filling, and fills one
        itself if its filler died. So two workers that need the array at once fill half each
        instead of one filling it while the other waits. The file's blocks are allocated
        before any row is written (a full disk is an ``OSError`` then, not a ``SIGBUS``
        halfway); where the file cannot be made or mapped, this process fills a private array."""
        _check_key(key)
        final = self.root / f"{key}.npy"
        if final.exists():
            return _map_array(final)
        work = self.root / f"{key}.fill.npy"
        with self._locked(key):  # held only while the work file is made
            if final.exists():
                return _map_array(final)
            made = work.exists() or _publish(work, lambda tmp: _allocated_npy(tmp, shape, dtype))
        try:
            out = np.load(work, mmap_mode="r+") if made else None
        except FileNotFoundError:  # renamed into place meanwhile: every part is filled
            return _map_array(final)
        except (OSError, ValueError):  # no mmap here (or an empty array): filled privately below
            out = None
        if out is None:
            private = np.empty(shape, dtype)
            fill(private, 0, shape[0])
            private.flags.writeable = False
            return private
        bounds = _row_parts(shape[0], parts, align)
        order = [(first + i) % len(bounds) for i in range(len(bounds))]
        waiting = [i for i in order if not self._fill_part(key, i, bounds[i], out, fill, wait=False)]
        for i in waiting:
            self._fill_part(key, i, bounds[i], out, fill, wait=True)
        del out
        with self._locked(key):
            if not final.exists():
                os.replace(work, final)
        return _map_array(final)

    def _fill_part(
        self,
        key: str,
        i: int,
        bounds: tuple[int, int],
        out: np.ndarray,
        fill: Callable[[np.ndarray, int, int], Any],
        *,
        wait: bool,
    ) -> bool:
        """Part ``i`` of ``array_filled_once``'s rows filled, here unless another process did;
        False (not waiting) while another process fills it."""
        done = self.root / f"{key}.part{i}.done"
        if done.exists():
            return True
        with self._locked(f"{key}.part{i}", wait=wait) as held:
            if held and not done.exists():
                lo, hi = bounds
                # not flushed: the processes map the same page cache; nothing needs the disk
                fill(out[lo:hi], lo, hi)
                done.touch()
            return held

    @contextmanager
    def _locked(self, name: str, *, wait: bool = True) -> Iterator[bool]:
        """``<name>.lock`` held for the block (``flock``: released with the process, should it
        die); not waiting, the block gets False while another process holds it."""
        with open(self.root / f"{name}.lock", "a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _once(
        self,
        key: str,
        suffix: str,
        make: Callable[[Path], tuple[Any, bool]],
        read: Callable[[Path], Any],
        *,
        wait: bool,
        reread: bool = False,
    ) -> tuple[Any, bool] | None:
        _check_key(key)
        path = self.root / f"{key}{suffix}"
        if path.exists():  # written whole (renamed into place): no lock needed to read it
            return read(path), False
        with self._locked(key, wait=wait) as held:  # waits (or, not waiting, gives up) while another computes it
            if not held:
                return None
            if path.exists():
                return read(path), False
            value, written = make(path)
            if written and reread:
                return read(path), True
            return value, True

    def grow(self, key: str, table: Any, nmax: int) -> None:
        """A table grown on demand (``state()`` / ``restore(values, at)`` / ``upto(n)``), up to
        ``nmax``, from the longest one any worker has written, under the key's lock: what
        one worker computed, the next continues from."""
        _check_key(key)
        path = self.root / f"{key}.npz"
        with self._locked(key):
            if path.exists():
                with np.load(path, allow_pickle=False) as got:
                    table.restore(got["values"], got["at"])
            if table.state()[0].size <= nmax:  # longer than any worker has written: grow, write
                table.upto(nmax)
                values, at = table.state()
                _publish(path, lambda tmp: _write_npz(tmp, values=values, at=at))


def _check_key(key: str) -> None:
    if not _KEY.match(key):
        raise ValueError(f"result key {key!r}: letters, digits, '_', '-', '.' only")


def _publish(path: Path, write: Callable[[Path], None]) -> bool:
    """Written to a temporary name, then renamed into place: a reader never sees half of it.
    A write that fails (a full disk) leaves nothing behind: the others compute it themselves.
    Returns whether it was written."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)
        return False
    return True


def _computed(compute: Callable[[], Any], write: Callable[[Path, Any], None]) -> Callable[[Path], tuple[Any, bool]]:
    """``SharedResults._once``'s maker for a value computed, then written: (value, whether written)."""

    def make(path: Path) -> tuple[Any, bool]:
        value = compute()
        return value, _publish(path, lambda tmp: write(tmp, value))

    return make


def _allocated_npy(path: Path, shape: tuple[int, ...], dtype: Any) -> None:
    """A new ``.npy`` file for an array of ``shape`` (zeros), every block of it allocated
    (``posix_fallocate``: OSError where the disk is full or the platform has none)."""
    if not hasattr(os, "posix_fallocate"):
        raise OSError("no posix_fallocate on this platform")
    with open(path, "wb") as f:
        np.lib.format.write_array_header_2_0(
            f, {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False, "shape": tuple(shape)}
        )
        size = f.tell() + int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        f.flush()
        os.posix_fallocate(f.fileno(), 0, size)


def _row_parts(n: int, parts: int, align: int) -> list[tuple[int, int]]:
    """``n`` rows cut into at most ``parts`` runs whose starts are multiples of ``align``."""
    step = max(align, -(-n // max(1, parts) // align) * align) if n else 1
    return [(lo, min(n, lo + step)) for lo in range(0, n, step)] or [(0, 0)]


def _write_npz(path: Path, **arrays: np.ndarray) -> None:
    with open(path, "wb") as f:  # a file, not a name: savez would append ".npz" to a name
        np.savez(f, **arrays)


def _write_json(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value))


def _write_array(path: Path, value: np.ndarray) -> None:
    with open(path, "wb") as f:
        np.save(f, np.asarray(value), allow_pickle=False)


def _read_array(path: Path) -> np.ndarray:
    a = np.load(path, allow_pickle=False)
    a.flags.writeable = False
    return a


def _map_array(path: Path) -> np.ndarray:
    """The array in ``path``, memory-mapped read-only, as a plain ndarray (not numpy's
    ``memmap`` subclass, which its results would carry on); read into memory where the file
    cannot be mapped (a file system without ``mmap``, an empty array on an older numpy)."""
    try:
        mapped = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError):
        return _read_array(path)
    return np.asarray(mapped)


class SharedArrays:
    """The ``DerivedCache.shared`` of an xdist worker: the shareable quantities
    (``per_model.SHAREABLE``) of views of the records' own tensor, computed by whichever
    worker needs one first and read by the others (``SharedResults.array_once``).

    A view is named by where it starts in the tensor, its shape, strides and dtype, and the
    records' fingerprint: every worker loads the same records into the same layout, so the
    same benchmark's items are the same name in every process. Arrays that are not views of
    that tensor (mix's reduced copies) are computed here and not shared."""

    def __init__(self, results: SharedResults, tensor: np.ndarray, fingerprint: str):
        self.results = results
        self.owner = _owner(tensor)
        self.tag = fingerprint

    def key(self, C: np.ndarray, name: str) -> str | None:
        if _owner(C) is not self.owner:
            return None
        start = C.__array_interface__["data"][0] - self.owner.__array_interface__["data"][0]
        raw = repr((self.tag, start, C.shape, C.strides, C.dtype.str, name))
        return f"{name}-{hashlib.sha256(raw.encode()).hexdigest()[:24]}"

    def get(self, C: np.ndarray, name: str, compute: Callable[[], Any], *, wait: bool = True) -> Any:
        """``compute()`` here or read; a value of several arrays (``SHAREABLE[name] > 1``, the
        all / any masks) travels stacked and comes back as the tuple of its arrays."""
        from .metrics.per_model import BUSY, SHAREABLE

        key = self.key(C, name)
        if key is None:
            return compute()
        arrays = SHAREABLE.get(name, 1)
        got = self.results.array_once(key, (lambda: np.stack(compute())) if arrays > 1 else compute, wait=wait)
        if got is None:
            return BUSY
        return tuple(got) if arrays > 1 else got

    def grow(self, key: str, table: Any, nmax: int) -> None:
        """``SharedResults.grow``: a process-wide table (``power.critical_values``)."""
        self.results.grow(key, table, nmax)


def _owner(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


__all__ = ["SharedArrays", "SharedResults", "available"]
