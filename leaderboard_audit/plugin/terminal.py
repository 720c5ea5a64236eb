"""The terminal's stream where it is a pipe or a file (CI, ``subprocess``): progress written
whole lines at a time, flushes throttled.

Private pytest internals, both read-only and guarded (a pytest without them: left alone):
``TerminalWriter._file`` (which stream the terminal writes to) and ``_current_line`` (whether
a line is open). pytest has no public way to ask either, nor to buffer its per-test writes to
a pipe (pytest-dev/pytest#1886 discusses the buffering); ``TerminalReporter.flush`` is
replaced on the instance for the run and restored after it."""

from __future__ import annotations

from typing import Any

import pytest


def buffer_piped_stdout(config: pytest.Config) -> Any:
    """Stop writing through the terminal's stream if it is a written-through pipe (or file);
    returns what restores it (``AuditSession.pytest_runtestloop``)."""
    import io
    import sys

    out = sys.__stdout__
    tw = config.get_terminal_writer() if config.pluginmanager.has_plugin("terminalreporter") else None
    if (
        tw is None
        or getattr(tw, "_file", None) is not out
        or not isinstance(out, io.TextIOWrapper)
        or not out.write_through
        or out.isatty()
    ):
        return lambda: None
    out.reconfigure(write_through=False)

    def restore() -> None:
        out.flush()
        out.reconfigure(write_through=True)

    return restore


#: how long progress may wait in the buffer, mid-line, where the terminal is a pipe or a file
FLUSH_EVERY_S = 0.5


def throttle_terminal_flush(config: pytest.Config) -> Any:
    """pytest flushes its terminal after every test's report: where that terminal is a pipe
    or a file (CI, ``subprocess``), one system call per test (10,000 at 1,000 models: ~0.3 s
    serially, ~0.8 s of the controller's CPU under ``-n 2``, taken from the workers' cores).
    During the run it flushes when a line is complete (pytest's progress lines: every ~80
    tests with ``-q``) or once ``FLUSH_EVERY_S`` has passed; a terminal that is a TTY is
    left alone. Returns (what restores it and flushes, what flushes now: before a
    computation, so the progress shown is current while it runs), or (None, None)."""
    import time

    tr = config.pluginmanager.get_plugin("terminalreporter")
    flush = getattr(tr, "flush", None)
    if tr is None or not callable(flush) or "flush" in vars(tr):
        return None, None
    tw = config.get_terminal_writer()
    stream = getattr(tw, "_file", None)
    try:
        if stream is None or stream.isatty():
            return None, None
    except (AttributeError, ValueError):
        return None, None
    last = [time.monotonic()]

    def throttled() -> None:
        now = time.monotonic()
        if not getattr(tw, "_current_line", "") or now - last[0] >= FLUSH_EVERY_S:
            last[0] = now
            flush()

    tr.flush = throttled

    def restore() -> None:
        if vars(tr).get("flush") is throttled:
            del tr.flush
        flush()

    return restore, flush


__all__ = ["FLUSH_EVERY_S", "buffer_piped_stdout", "throttle_terminal_flush"]
