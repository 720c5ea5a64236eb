"""A ``-p`` plugin: where each process of a ``pytest --audit`` run spends its CPU, by phase.

Loaded as ``-p xdist_timeline`` with this directory on ``PYTHONPATH`` (``bench_big.py
--timeline`` does that); under xdist the workers load it too. Each process (the serial run,
or the controller and every worker) appends one JSON line to ``$TIMELINE_OUT``:

- ``cpu``: this process's CPU seconds (all its threads) at each phase's start:
  ``configure``, ``sessionstart``, ``collected`` (collection finished), ``loop``,
  ``sessionfinish``, ``end`` (unconfigure);
- ``wall``: the same points in wall seconds from ``$TIMELINE_T0`` (the runner's clock when it
  started the run), so the processes line up;
- ``statistics``: CPU seconds inside the audit's verdict lookups, which compute a scope the
  first time one is needed (``AuditSession._check_for``);
- ``user``, ``sys``, ``minflt`` (page faults), ``maxrss_gib``.

Wall time on a shared 2-core host moves by 10 to 30% from one run to the next; the CPU a
phase takes moves less, and says which process and which phase a change moved
(docs/performance.md, "Issue 24, stop 38"). Not a test, and not part of the package.
"""

from __future__ import annotations

import json
import os
import resource
import time

import pytest

_CPU: dict[str, float] = {}
_WALL: dict[str, float] = {}
_STATS = [0.0, 0]  # CPU seconds in the verdict lookups, nesting depth


def _mark(point: str) -> None:
    _CPU[point] = time.process_time()
    _WALL[point] = time.time()


_mark("start")


def pytest_configure(config: pytest.Config) -> None:
    _mark("configure")
    session_type = _audit_session_type()
    if session_type is None:
        return
    lookup = session_type._check_for

    def timed(self, *args, **kwargs):
        t = time.process_time()
        _STATS[1] += 1
        try:
            return lookup(self, *args, **kwargs)
        finally:
            _STATS[1] -= 1
            if not _STATS[1]:
                _STATS[0] += time.process_time() - t

    session_type._check_for = timed


def _audit_session_type():
    try:
        from leaderboard_audit.audit_session import AuditSession
    except ImportError:
        return None
    return AuditSession


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    _mark("sessionstart")


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    _mark("collected")


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    _mark("loop")


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    _mark("sessionfinish")


def pytest_unconfigure(config: pytest.Config) -> None:
    _mark("end")
    out = os.environ.get("TIMELINE_OUT")
    if not out:
        return
    t0 = float(os.environ.get("TIMELINE_T0", _WALL["start"]))
    ru = resource.getrusage(resource.RUSAGE_SELF)
    row = {
        "process": os.environ.get("PYTEST_XDIST_WORKER", "controller" if _is_controller(config) else "serial"),
        "cpu": {k: round(v, 3) for k, v in _CPU.items()},
        "wall": {k: round(v - t0, 3) for k, v in _WALL.items()},
        "statistics": round(_STATS[0], 3),
        "user": round(ru.ru_utime, 3),
        "sys": round(ru.ru_stime, 3),
        "minflt": ru.ru_minflt,
        "maxrss_gib": round(ru.ru_maxrss / 2**20, 3),
    }
    with open(out, "a") as f:
        f.write(json.dumps(row) + "\n")


def _is_controller(config: pytest.Config) -> bool:
    n = config.getoption("numprocesses", None)
    return bool(n) and config.getoption("dist", "no") != "no"
