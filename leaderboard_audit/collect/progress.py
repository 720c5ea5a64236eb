"""Progress for long collections: items/s, item-configs/s and ETA on stderr."""

from __future__ import annotations

import sys
import time
from typing import TextIO


def _fmt_s(s: float) -> str:
    if s != s or s == float("inf"):
        return "?"
    s = int(round(s))
    h, r = divmod(s, 3600)
    m, s = divmod(r, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s"


class Progress:
    """Counts items done out of ``total``; ``skip`` counts items resumed from disk."""

    def __init__(
        self, total: int, n_configs: int, *, enabled: bool = True, stream: TextIO | None = None, clock=time.monotonic
    ) -> None:
        self.total = total
        self.n_configs = n_configs
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.clock = clock
        self.t0 = clock()
        self.done = 0
        self.resumed = 0
        self.computed = 0
        self.seen: set[tuple[str, str, int]] = set()  # chunks already counted

    def skip(self, n: int, what: str = "") -> None:
        self.done += n
        self.resumed += n
        if self.enabled and n:
            print(f"[collect] resumed {n} items from disk {what}".rstrip(), file=self.stream, flush=True)

    def advance(self, n: int, what: str = "") -> None:
        self.done += n
        self.computed += n
        if self.enabled:
            print(self.line(what), file=self.stream, flush=True)

    @property
    def elapsed(self) -> float:
        return self.clock() - self.t0

    def rate(self) -> float:
        el = self.elapsed
        return self.computed / el if el > 0 else float("nan")

    def line(self, what: str = "") -> str:
        r = self.rate()
        left = self.total - self.done
        eta = left / r if r and r == r and r > 0 else float("nan")
        pct = 100.0 * self.done / self.total if self.total else 100.0
        return (
            f"[collect] {self.done}/{self.total} items ({pct:.0f}%) {what} | "
            f"{r:.2f} items/s, {r * self.n_configs:.1f} item-configs/s | "
            f"elapsed {_fmt_s(self.elapsed)}, ETA {_fmt_s(eta)}"
        )
