"""pytest-xdist scheduling of the audit: work units with a cost model, placed largest first (LPT).

A work unit is one scope's tests (a scope is computed once per process: its tests must share
the process that computes it). Each unit gets a predicted cost from the records' shape
(``unit_costs``: models x items x configs, with the pairwise terms that grow with the models
squared, the pooled scope's ``mix`` reruns and pytest's per-test cost), and the units are
placed once, statically and deterministically, largest first on the least loaded worker
(``lpt``): which worker computes which scope is the same on every run. pytest-xdist's own
``loadscope`` sends two units to each worker before it knows how long any takes, which on the
audit put the pooled scope and a benchmark on one worker and left the other idle.

xdist's own ``--dist loadgroup`` would group from ``xdist_group`` marks, but with pytest >= 9
its nodeid suffix no longer takes effect (pytest-xdist issue 1386), so the plugin hands xdist
a ``LoadScopeScheduling`` subclass. Tests that are not audit cases keep one unit each.

``-n auto``: ``auto_workers`` answers serial (0) below ``AUTO_MIN_SECONDS`` of predicted
statistics: starting workers costs ~0.7-1 s on a 2-core machine (each imports pytest, numpy
and the audit and loads the records), and below ~120 predicted seconds two workers did not
beat one process (docs/performance.md, "xdist").
"""

from __future__ import annotations

import heapq
from typing import Any
from collections.abc import Mapping, Sequence

from xdist.scheduler import LoadScopeScheduling

#: seconds per (model x item x config) cell of one scope's checks, and per
#: (model x model x config) term (pairs, bands, identified order): calibrated on this repository's
#: 2-core machine (1,000 x 8,000 x 26: a benchmark of 2,000 items ~10 s, pooled without mix ~18 s)
CELL_S = 5.0e-8
PAIR_S = 2.0e-7
#: one benchmark left out by ``mix`` (verdicts only, plus its random drops), relative to a scope
#: of the remaining items
MIX_SHARE = 0.45
SCOPE_S = 0.2  # fixed cost of one scope's (or one mix reduced set's) checks, whatever its size
TEST_S = 4.0e-4  # pytest's per-test protocol, each side
#: below this many predicted seconds of statistics ``-n auto`` stays serial. Measured on this
#: repository's 2-core machine (docs/performance.md, "xdist"): -n 2 / -n 0 was 1.12 on the
#: paper-sized grid x4 items (predicted 9 s), 1.01 at 1,000 x 8,000 x 26 (predicted 72 s) and
#: 0.95 at 1,000 x 30,000 x 26 (predicted 167 s): the pooled scope with mix's reruns is one
#: unit holding ~3/4 of the statistics, and the serial run shares the pooled scope's pair
#: counts with its benchmarks, which two workers cannot
AUTO_MIN_SECONDS = 120.0


def scope_cost(n_models: int, n_items: int, n_configs: int) -> float:
    """Predicted seconds of one scope's checks (without ``mix``)."""
    return SCOPE_S + n_configs * n_models * (CELL_S * n_items + PAIR_S * n_models)


def audit_cost(n_models: int, n_items: Mapping[str, int], n_configs: int) -> dict[str, float]:
    """Predicted seconds per scope: ``n_items`` maps each benchmark to its item count; the pooled
    scope (present with two or more benchmarks) includes its ``mix`` reruns with three or more."""
    out = {b: scope_cost(n_models, n, n_configs) for b, n in n_items.items()}
    total = sum(n_items.values())
    if len(n_items) >= 2:
        pooled = scope_cost(n_models, total, n_configs)
        if len(n_items) >= 3:
            pooled += sum(MIX_SHARE * scope_cost(n_models, total - n, n_configs) for n in n_items.values())
        out["pooled"] = pooled
    return out


def lpt(costs: Mapping[str, float], workers: int) -> list[list[str]]:
    """Longest processing time first: each unit, largest first (ties by name), to the worker with
    the least predicted load (ties: the lower index). Deterministic."""
    loads = [(0.0, w) for w in range(max(1, workers))]
    heapq.heapify(loads)
    out: list[list[str]] = [[] for _ in loads]
    for unit in sorted(costs, key=lambda u: (-costs[u], u)):
        load, w = heapq.heappop(loads)
        out[w].append(unit)
        heapq.heappush(loads, (load + costs[unit], w))
    return out


def case_of(nodeid: str) -> tuple[str, str] | None:
    """(test function name, parameter id) of ``path::test_x[id]``, or None."""
    name = nodeid.rsplit("::", 1)[-1]
    if "[" not in name or not name.endswith("]"):
        return None
    func, _, rest = name.partition("[")
    return func, rest[:-1]


UNIT_PREFIX = "leaderboard-audit::"


class ScopeScheduling(LoadScopeScheduling):
    """One unit per scope, placed by ``lpt`` on the predicted costs when collection is done."""

    def __init__(
        self,
        config: Any,
        log: Any,
        groups: Mapping[tuple[str, str], str],
        costs: Mapping[str, float] | None = None,
    ) -> None:
        super().__init__(config, log)
        self.groups = dict(groups)
        self.costs = dict(costs or {})

    def _split_scope(self, nodeid: str) -> str:
        key = case_of(nodeid)
        group = self.groups.get(key) if key is not None else None
        return f"{UNIT_PREFIX}{group}" if group is not None else nodeid

    def unit_cost(self, unit: str, tests: int) -> float:
        scope = unit[len(UNIT_PREFIX) :] if unit.startswith(UNIT_PREFIX) else None
        return self.costs.get(scope, 0.0) + TEST_S * tests if scope is not None else TEST_S * tests

    def schedule(self) -> None:
        if self.collection is not None or not self.collection_is_completed:
            return super().schedule()
        if not self._check_nodes_have_same_collection():
            return super().schedule()  # logs and aborts as xdist does
        self.collection = list(next(iter(self.registered_collections.values())))
        if not self.collection:
            return
        units: dict[str, dict[str, bool]] = {}
        for nodeid in self.collection:
            units.setdefault(self._split_scope(nodeid), {})[nodeid] = False
        nodes = list(self.nodes)
        plan = lpt({u: self.unit_cost(u, len(t)) for u, t in units.items()}, len(nodes))
        for node, mine in zip(nodes, plan):
            if not mine:
                self.assigned_work.pop(node, None)
                node.shutdown()
                continue
            assigned = self.assigned_work.setdefault(node, {})
            index = {nodeid: i for i, nodeid in enumerate(self.registered_collections[node])}
            todo: list[int] = []
            for u in mine:
                assigned[u] = units[u]
                todo += [index[nodeid] for nodeid in units[u]]
            node.send_runtest_some(todo)
            node.shutdown()  # the worker runs what it was sent, then stops


def plan_summary(costs: Mapping[str, float], workers: int) -> Sequence[tuple[list[str], float]]:
    """(units, predicted seconds) per worker: what ``lpt`` does with the scope costs."""
    return [(p, sum(costs[u] for u in p)) for p in lpt(costs, workers)]


__all__ = [
    "AUTO_MIN_SECONDS",
    "ScopeScheduling",
    "audit_cost",
    "case_of",
    "lpt",
    "plan_summary",
    "scope_cost",
]


#: bytes of records on disk per (model, item, config) cell when the shape cannot be read
#: cheaply: records-v1 JSONL ~27 (the paper-sized grid: 31 MB for 1.15M cells); a long table
#: (CSV ~40, Parquet less) is taken as 8, erring towards workers
BYTES_PER_CELL = {"dir": 27.0, "table": 8.0}


def predicted_seconds(path: str) -> float | None:
    """The audit's predicted statistics seconds from the records on disk, without loading them:
    the packed form's metadata gives the shape and each benchmark's items; other forms are
    estimated from their size (``BYTES_PER_CELL``, every scope counted as twice the cells).
    None when the path cannot be read."""
    import json
    import os
    from pathlib import Path

    p = Path(path)
    try:
        from .records.packed import META_KEY, is_packed

        if is_packed(p):
            import pyarrow as pa

            with pa.memory_map(str(p)) as src:
                meta = json.loads(pa.ipc.open_file(src).schema.metadata[META_KEY])
            M, _, K = meta["shape"]
            counts: dict[str, int] = {}
            for b in meta["items"]["benchmark"]:
                counts[b] = counts.get(b, 0) + 1
            return sum(audit_cost(M, counts, K).values())
        if p.is_dir():
            size = sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
            cells = size / BYTES_PER_CELL["dir"]
        else:
            cells = os.path.getsize(p) / BYTES_PER_CELL["table"]
    except (OSError, ValueError, KeyError, TypeError, ImportError):
        return None
    return 2 * CELL_S * cells + 5 * SCOPE_S  # pooled and (say) four benchmarks


def auto_workers(path: str | None, cpus: int) -> int | None:
    """``-n auto``: 0 (serial) when the predicted statistics are below ``AUTO_MIN_SECONDS``,
    else None (xdist's own choice: one worker per CPU)."""
    if not path:
        return None
    est = predicted_seconds(path)
    if est is not None and (est < AUTO_MIN_SECONDS or cpus < 2):
        return 0
    return None
