"""Power of the robust-item comparison: critical values of the exact sign test, the items
an adjacent pair would need, and which pairs no split can identify (docs/spec/AUDITS.md
v3, "Adjacent pairs are identified by the exact sign test", "items_needed", "Power of
the robust-item comparison"; docs/audits.md).

The paper's section 4.2 compares an adjacent pair on the items both models answer
stably; v3 tests that comparison with the exact two-sided sign test. With ``n``
disagreements the test can reject only when ``2 * 2**-n <= alpha`` (n >= 6 at 0.05),
so a pair with fewer disagreements is *unidentifiable*, whatever the split.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np

from .identified import sign_test_p

#: items_needed searches up to this many jointly robust items (v3: above it "> 10,000,000")
ITEMS_NEEDED_CAP = 10_000_000
ITEMS_NEEDED_OVER = "> 10,000,000"
#: below this normal-approximation estimate the search starts at 1 item; above it at half
#: the estimate, where |h' - l'| / sqrt(n') is z / sqrt(2) and the exact p is ~3x alpha
_SCAN_FROM_ONE = 4096
#: the widest window of sizes ``items_needed`` passes over at once
_WINDOW_MAX = 1 << 22


def min_disagreements(alpha: float) -> int:
    """The smallest ``n`` at which some split (n v 0) reaches ``p <= alpha``."""
    n = 1
    while 2.0 * 0.5**n > alpha + 1e-15:
        n += 1
    return n


class _CriticalTable:
    """``c[n]`` = the largest ``k`` with ``2 P(Bin(n, 1/2) <= k) <= alpha`` (-1: none), grown on
    demand from where it stopped.

    One pass over ``n``: ``P(X_{n+1} <= k) = P(X_n <= k) - P(X_n = k) / 2`` and the pmf by
    its ratio recurrences (relative error ~1e-16 a step, no log-gamma cancellation). It
    memoizes a pure function of ``(alpha, n)``: every caller sees the same values whatever
    was asked before, so it is a cache, not state."""

    def __init__(self, alpha: float, shipped: bool = True):
        self.alpha = alpha
        self.half_alpha = alpha / 2.0 + 1e-15
        self.c = np.full(1, -1, dtype=np.int64)
        self.k, self.cdf, self.pmf = -1, 0.0, 1.0  # at n = 0
        self._shipped = shipped  # whether to start from the table the package ships (once)

    def upto(self, nmax: int) -> np.ndarray:
        if self._shipped and nmax >= SHIPPED_FROM and nmax >= self.c.size:
            self._shipped = False
            got = shipped_table(self.alpha)
            if got is not None:
                self.restore(*got)
        n0 = self.c.size - 1
        if nmax > n0:
            self.grow(max(nmax, n0 + n0 // 4))  # grown geometrically (x1.25): O(n) copies in all
        return self.c[: nmax + 1]

    def grow(self, nmax: int) -> None:
        """Take the recurrence's steps from where it stands to exactly ``nmax``."""
        n0 = self.c.size - 1
        if nmax > n0:
            grown = np.empty(nmax - n0, dtype=np.int64)
            k, cdf, pmf, half_alpha = self.k, self.cdf, self.pmf, self.half_alpha
            for j, n in enumerate(range(n0 + 1, nmax + 1)):
                if k < 0:
                    pmf = 0.5**n  # P(X_n = 0)
                    if pmf <= half_alpha:
                        k, cdf = 0, pmf
                else:
                    cdf -= 0.5 * pmf  # P(X_n <= k) from P(X_{n-1} <= k)
                    pmf *= n / (2.0 * (n - k))  # P(X_n = k) from P(X_{n-1} = k)
                if k >= 0:
                    while True:
                        nxt = pmf * (n - k) / (k + 1.0)  # P(X_n = k + 1)
                        if 2 * (k + 1) > n or cdf + nxt > half_alpha:
                            break
                        k, cdf, pmf = k + 1, cdf + nxt, nxt
                grown[j] = k
            self.k, self.cdf, self.pmf = k, cdf, pmf
            self.c = np.concatenate([self.c, grown])
            self.c.setflags(write=False)

    def state(self) -> tuple[np.ndarray, np.ndarray]:
        """(the values so far, where the recurrence stands: k, cdf, pmf): what ``restore`` takes."""
        return self.c, np.array([self.k, self.cdf, self.pmf], dtype=np.float64)

    def restore(self, c: np.ndarray, at: np.ndarray) -> None:
        """Continue from a longer table another process grew (``state``): the recurrence's
        steps are the same whoever takes them, so the values are the same bits."""
        if c.size > self.c.size:
            self.c = np.array(c, dtype=np.int64)
            self.c.setflags(write=False)
            self.k, self.cdf, self.pmf = int(at[0]), float(at[1]), float(at[2])


#: the alphas whose tables this process made (``critical_tables``)
_grown: set[float] = set()


@functools.lru_cache(maxsize=8)
def _table(alpha: float) -> _CriticalTable:
    _grown.add(alpha)
    return _CriticalTable(alpha)


#: The table for alpha = 0.05 up to ``SHIPPED_N`` ships with the package (``SHIPPED_FILE``:
#: the steps ``c[n] - c[n-1]``, each 0 or 1, as bits, and the recurrence's state at
#: ``SHIPPED_N``, from which it continues, and at every ``SHIPPED_EVERY`` sizes). Near-tied
#: pairs need sizes up to ``ITEMS_NEEDED_CAP``, and growing the table is one Python step a
#: size: ~1.7 s a million, in every audit of a big leaderboard that has such a pair.
#: tests/metrics/test_power_table.py grows the first million again and a stretch after every
#: stored state, bit for bit; ``verify_shipped_table()`` grows all of it (~17 s).
SHIPPED_ALPHA = 0.05
SHIPPED_N = ITEMS_NEEDED_CAP
SHIPPED_EVERY = 1_000_000
SHIPPED_FILE = Path(__file__).with_name("critical_0.05.npz")
#: below this size the recurrence is as quick as reading the file (~50 ms)
SHIPPED_FROM = 50_000


def shipped_table(alpha: float, path: Path = SHIPPED_FILE) -> tuple[np.ndarray, np.ndarray] | None:
    """(the values, the recurrence's state) of the shipped table for ``alpha``, as
    ``_CriticalTable.state`` gives them, or None (another alpha, or no readable file)."""
    if alpha != SHIPPED_ALPHA:
        return None
    try:
        with np.load(path, allow_pickle=False) as f:
            n, at = int(f["n"][0]), np.array(f["at"], dtype=np.float64)
            steps = np.unpackbits(f["steps"], count=n, bitorder="little")
    except (OSError, KeyError, ValueError, IndexError):
        return None
    c = np.empty(n + 1, dtype=np.int64)
    c[0] = -1
    np.cumsum(steps, dtype=np.int64, out=c[1:])
    c[1:] -= 1
    return c, at


def shipped_arrays(table: _CriticalTable) -> dict[str, np.ndarray]:
    """What ``SHIPPED_FILE`` holds for a grown table (``write_shipped_table``)."""
    c, at = table.state()
    steps = np.diff(c)
    if steps.size and (steps.min() < 0 or steps.max() > 1):
        raise ValueError("critical values must grow by 0 or 1 a size")
    return {"n": np.array([c.size - 1]), "at": at, "steps": np.packbits(steps.astype(np.uint8), bitorder="little")}


def write_shipped_table(path: Path = SHIPPED_FILE, n: int = SHIPPED_N, every: int = SHIPPED_EVERY) -> None:
    """Grow the alpha = 0.05 table to ``n`` by the recurrence alone and write it (the file
    the package ships: ``python -c "from leaderboard_audit.metrics.power import
    write_shipped_table as w; w()"``), with the recurrence's state at every ``every``
    sizes (``checkpoints``: rows of n, k, cdf, pmf)."""
    table = _CriticalTable(SHIPPED_ALPHA, shipped=False)
    checkpoints = []
    for m in range(every, n, every):
        table.grow(m)
        checkpoints.append([m, *table.state()[1]])
    table.grow(n)
    arrays = shipped_arrays(table)
    arrays["checkpoints"] = np.array(checkpoints, dtype=np.float64).reshape(-1, 4)
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(tmp, **arrays)
    tmp.replace(path)


def shipped_checkpoints(path: Path = SHIPPED_FILE) -> np.ndarray:
    """The shipped table's stored states: rows of (n, k, cdf, pmf)."""
    with np.load(path, allow_pickle=False) as f:
        return np.array(f["checkpoints"], dtype=np.float64)


def verify_shipped_table(path: Path = SHIPPED_FILE) -> bool:
    """Whether the shipped table is the recurrence's own from n = 0, every value and state."""
    got = shipped_table(SHIPPED_ALPHA, path)
    if got is None:
        return False
    fresh = _CriticalTable(SHIPPED_ALPHA, shipped=False)
    for row in shipped_checkpoints(path):
        fresh.grow(int(row[0]))
        if fresh.state()[1].tobytes() != row[1:].tobytes():
            return False
    fresh.grow(got[0].size - 1)
    return np.array_equal(fresh.state()[0], got[0]) and fresh.state()[1].tobytes() == got[1].tobytes()


def critical_values(alpha: float, nmax: int) -> np.ndarray:
    """``critical_values(alpha, nmax)[n]`` for ``n <= nmax``.

    Growing the table is one Python step per ``n`` (~1 s to the millions near-tied pairs
    ask for); a process can hand what it grew to another (``critical_tables``,
    ``adopt_critical_tables``), which continues from it with the same bits."""
    return _table(float(alpha)).upto(int(nmax))


def critical_tables() -> dict[float, tuple[np.ndarray, np.ndarray]]:
    """alpha -> the state of every table grown in this process (``_CriticalTable.state``)."""
    return {alpha: _table(alpha).state() for alpha in _grown}


def adopt_critical_tables(states: dict[float, tuple[np.ndarray, np.ndarray]]) -> None:
    """Continue from tables another process grew, where they are longer than this one's."""
    for alpha, (c, at) in states.items():
        _table(float(alpha)).restore(c, at)


def _half_up(num: np.ndarray, den: int) -> np.ndarray:
    """``round(num / den)`` with halves rounded up, in integers."""
    return (2 * num + den) // (2 * den)


def items_needed(higher_only: int, lower_only: int, robust_items: int, alpha: float = 0.05) -> int | str | None:
    """The smallest ``|J'|`` at which the pair's proportions reach ``p <= alpha`` (v3).

    ``h' = round(p+ |J'|)``, ``l' = round(p- |J'|)`` (halves up) with ``p+ = h/|J|``,
    ``p- = l/|J|``; the exact two-sided sign test on ``(h', l')``. ``None`` when
    ``p+ = p-`` (J empty included); ``"> 10,000,000"`` above the cap. 1 v 0 of 1 -> 6.

    The search is exhaustive from 1 below a normal-approximation estimate of 4,096 items,
    and from half the estimate above it (where the exact p is far above alpha); the
    answer is confirmed with ``identified.sign_test_p``."""
    h, lo, J = int(higher_only), int(lower_only), int(robust_items)
    if J <= 0 or h == lo:
        return None
    qp, qm = h / J, lo / J
    z = NormalDist().inv_cdf(1.0 - alpha / 2.0)
    estimate = z * z * (qp + qm) / (qp - qm) ** 2
    if estimate > 4 * ITEMS_NEEDED_CAP:
        return ITEMS_NEEDED_OVER
    start = 1 if estimate < _SCAN_FROM_ONE else max(1, int(estimate // 2))
    # The sizes in increasing order, a window at a time; the first confirmed size ends the
    # scan. hp, lp and n only grow with the size and the critical value only with n, so a
    # window whose smallest min(hp, lp) is above the critical value of its largest n holds
    # no candidate: it is passed over whole (and the next one tried twice as wide), and a
    # window that might hold one is halved down to _SCAN_FROM_ONE sizes before any array
    # is built. What is built is the few windows around the answer.
    window = _SCAN_FROM_ONE

    def split(size: int | np.ndarray) -> tuple[Any, Any]:  # (h', l') at a size, or at an array of sizes
        return _half_up(h * size, J), _half_up(lo * size, J)

    # the critical values up to where the answer usually is (the estimate's 1.5x) at once,
    # then further only if the scan goes on: each growth of the table shared by xdist
    # workers is a locked file read and write
    upto = min(start + max(_SCAN_FROM_ONE, int(estimate)) - 1, ITEMS_NEEDED_CAP)
    crit = critical_values(alpha, sum(split(upto)))
    while start <= ITEMS_NEEDED_CAP:
        stop = min(start + window, ITEMS_NEEDED_CAP + 1)
        n_last = sum(split(stop - 1))
        if n_last >= crit.size:
            crit = critical_values(alpha, max(n_last, crit.size + crit.size // 2))
        if min(split(start)) > crit[n_last]:
            start, window = stop, min(window * 2, _WINDOW_MAX)
            continue
        if window > _SCAN_FROM_ONE:
            window //= 2
            continue
        Jp = np.arange(start, stop, dtype=np.int64)
        hp, lp = split(Jp)
        n = hp + lp
        hit = np.flatnonzero(np.minimum(hp, lp) <= crit[n])
        for j in hit.tolist():
            if sign_test_p(np.array([hp[j]]), np.array([lp[j]]))[0] <= alpha + 1e-12:
                return int(Jp[j])
        start = stop
    return ITEMS_NEEDED_OVER


#: rows of pairs scanned together by ``items_needed_many`` (each row: ``_SCAN_FROM_ONE`` sizes)
_ROWS = 256


def items_needed_many(
    higher_only: np.ndarray, lower_only: np.ndarray, robust_items: np.ndarray, alpha: float = 0.05
) -> list[int | str | None]:
    """``items_needed`` of every pair, the same values: the pairs whose estimate is below
    ``_SCAN_FROM_ONE`` (nearly all on a leaderboard) scan their first window together, one
    array per block of rows, and confirm their first hit in one ``sign_test_p`` call with
    ``pairs=1`` (the method ``items_needed`` uses for one pair, so the same bits). A pair
    whose first hit is not confirmed, or that needs a larger window, takes ``items_needed``."""
    h = np.asarray(higher_only, dtype=np.int64).ravel()
    lo = np.asarray(lower_only, dtype=np.int64).ravel()
    J = np.asarray(robust_items, dtype=np.int64).ravel()
    out: list[int | str | None] = [None] * h.size
    live = (J > 0) & (h != lo)
    z = NormalDist().inv_cdf(1.0 - alpha / 2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        qp, qm = h / np.maximum(J, 1), lo / np.maximum(J, 1)
        estimate = np.where(live, z * z * (qp + qm) / (qp - qm) ** 2, np.inf)
    small = np.flatnonzero(live & (estimate < _SCAN_FROM_ONE))
    Jp = np.arange(1, _SCAN_FROM_ONE + 1, dtype=np.int64)
    done = np.zeros(h.size, dtype=bool)
    for lo_row in range(0, small.size, _ROWS):
        rows = small[lo_row : lo_row + _ROWS]
        hp = _half_up(h[rows, None] * Jp, J[rows, None])
        lp = _half_up(lo[rows, None] * Jp, J[rows, None])
        n = hp + lp
        crit = critical_values(alpha, int(n.max()))
        hit = np.minimum(hp, lp) <= crit[n]
        first = hit.argmax(axis=1)
        has = hit[np.arange(rows.size), first]
        r = np.flatnonzero(has)
        p = sign_test_p(hp[r, first[r]], lp[r, first[r]], pairs=1)
        ok = r[p <= alpha + 1e-12]
        for i, j in zip(rows[ok].tolist(), first[ok].tolist()):
            out[i] = int(Jp[j])
        done[rows[ok]] = True
    for i in np.flatnonzero(live & ~done).tolist():
        out[i] = items_needed(int(h[i]), int(lo[i]), int(J[i]), alpha)
    return out


def median(values: list[int]) -> float | None:
    """The median of item counts (None for none), for the power note."""
    if not values:
        return None
    s = sorted(values)
    mid = len(s) // 2
    return float(s[mid]) if len(s) % 2 else (s[mid - 1] + s[mid]) / 2.0


def log10_p(p: float) -> float:
    """``-log10 p`` (p = 0, below double precision: 400)."""
    return 400.0 if p <= 0 else -math.log10(p)


__all__ = [
    "ITEMS_NEEDED_CAP",
    "ITEMS_NEEDED_OVER",
    "critical_values",
    "items_needed",
    "items_needed_many",
    "log10_p",
    "median",
    "min_disagreements",
]
