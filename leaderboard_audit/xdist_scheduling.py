"""pytest-xdist scheduling of the audit: work units with a cost model, placed largest first (LPT).

A work unit is one scope's tests (a scope is computed once per process: its tests must share
the process that computes it). Each unit gets a predicted cost from the records' shape
(``unit_costs``: models x items x configs, with the pairwise terms that grow with the models
squared, the pooled scope's ``mix`` reruns and pytest's per-test cost), and the units are
placed once, statically and deterministically, largest first on the least loaded worker
(``lpt``): which scopes share a worker is the same on every run (which worker takes which
share is the order their collections arrive: the first gets the largest, at once). pytest-xdist's own
``loadscope`` sends two units to each worker before it knows how long any takes, which on the
audit put the pooled scope and a benchmark on one worker and left the other idle.

Where workers share results (``xdist_store``), each of ``mix``'s leave-one-out sets is a unit
of its own (``mix_units``), not placed up front but sent, largest predicted first, to
whichever worker runs out of work first: a set's cost is not known until it runs (its random
drops run only where a verdict changes: 0.2 s or 1.4 s on the paper-sized grid x4 items).

xdist's own ``--dist loadgroup`` would group from ``xdist_group`` marks, but with pytest >= 9
its nodeid suffix no longer takes effect (pytest-xdist issue 1386), so the plugin hands xdist
a ``LoadScopeScheduling`` subclass. Tests that are not audit cases keep one unit each.

``-n auto``: ``auto_workers`` answers serial (0) below ``AUTO_MIN_SECONDS`` of predicted
statistics: starting workers costs ~1 s on a 2-core machine (each imports pytest, numpy and
the audit and loads the records), each test's report crosses to the controller, and below
~10 predicted seconds two workers did not beat one process (docs/performance.md, "xdist").
The predicted seconds keep the calibration of stop 28: the statistics have since become
2-4x faster at 1,000 models (71.6 predicted seconds for ~18 s of statistics at 1,000 x
8,000 x 26), less on small grids, so they rank units and mark the break-even (measured
again at stop 35, below) rather than tell the wall time.
"""

from __future__ import annotations

import heapq
from typing import Any
from collections.abc import Mapping, Sequence

from xdist.scheduler import LoadScopeScheduling

from .mix_units import unit_name

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
FILLER_MIN = 16  # the smallest chunk of the filler (``ScopeScheduling._refill``): ~10 ms of tests
#: below this many predicted seconds of statistics ``-n auto`` stays serial. Measured on this
#: repository's 2-core machine (docs/performance.md, "xdist"; medians of 3 alternating pairs
#: of -n 2 / -n 0, stop 35): 1.02 at 100 x 8,000 x 26 (predicted 5.2 s), 0.95 at 250 x
#: 8,000 (12.3 s), 0.86 at 500 x 8,000 (27.6 s) and 0.86 at 1,000 x 8,000 (71.6 s); the
#: paper-sized grid x4 items (2 s) about 1.0. Workers start in ~0.5-1 s and each test's
#: reports still cross to the controller (in batches), which the shared statistics repay
#: from between 5 and 12 predicted seconds (stop 33: the same bracket, 1.11 and 0.92;
#: stop 36: 1.04 and 0.89)
AUTO_MIN_SECONDS = 10.0


def scope_cost(n_models: int, n_items: int, n_configs: int) -> float:
    """Predicted seconds of one scope's checks (without ``mix``)."""
    return SCOPE_S + n_configs * n_models * (CELL_S * n_items + PAIR_S * n_models)


def audit_cost(
    n_models: int, n_items: Mapping[str, int], n_configs: int, *, split_mix: bool = False
) -> dict[str, float]:
    """Predicted seconds per unit: ``n_items`` maps each benchmark to its item count; the pooled
    scope (present with two or more benchmarks) includes its ``mix`` reruns with three or more,
    or, ``split_mix``, each benchmark's leave-one-out set is a unit ``mix:<benchmark>`` of its
    own (``mix_units``)."""
    out = {b: scope_cost(n_models, n, n_configs) for b, n in n_items.items()}
    total = sum(n_items.values())
    if len(n_items) >= 2:
        out["pooled"] = scope_cost(n_models, total, n_configs)
        if len(n_items) >= 3:
            for b, n in n_items.items():
                cost = MIX_SHARE * scope_cost(n_models, total - n, n_configs)
                if split_mix:
                    out[unit_name(b)] = cost
                else:
                    out["pooled"] += cost
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
    """One unit per scope, placed by ``lpt`` on the predicted costs when collection is done;
    late units (``last``) sent one at a time to the worker that runs out of work."""

    def __init__(
        self,
        config: Any,
        log: Any,
        groups: Mapping[tuple[str, str], str] | None,
        costs: Mapping[str, float] | None = None,
        last: str | None = None,
        tail: str | None = None,
        resolve: Any = None,
    ) -> None:
        super().__init__(config, log)
        #: ``groups`` None: ``resolve()`` gives (groups, costs) once the workers have collected
        #: (the controller that did not load the records takes the units the workers sent)
        self.groups: dict[tuple[str, str], str] | None = None if groups is None else dict(groups)
        self.costs = dict(costs or {})
        self._resolve = resolve
        #: units whose name starts with this are late: not placed up front but sent to whichever
        #: worker runs out of work (mix's leave-one-out sets: ``schedule``)
        self.last = f"{UNIT_PREFIX}{last}" if last else None
        #: the unit whose last tests follow the late units' (one each), so that a worker runs
        #: a late unit's test as soon as it is sent (``schedule``)
        self.tail = f"{UNIT_PREFIX}{tail}" if tail else None
        self._pending: dict[Any, int] = {}  # node -> tests sent and not reported (once placed)
        self._late: list[tuple[str, dict[str, bool]]] = []  # late units not yet sent, largest first
        self._filler: list[str] = []  # the tail unit's tests sent last, a chunk at a time (``schedule``)
        self._chunks = 0  # filler chunks sent: each its own unit, so a crash puts back only its own
        self._index: dict[Any, dict[str, int]] = {}  # node -> nodeid -> its index in the node's collection
        self._sent_in: dict[str, dict[str, bool]] = {}  # nodeid -> the unit it was sent in (a late unit's tail too)
        #: the plan's shares (each a list of (unit, tests)) for workers that have not collected yet
        self._held: list[list[tuple[str, dict[str, bool]]]] = []
        self._lost = 0  # workers gone (or refused) before they collected: no share is held for them

    def _split_scope(self, nodeid: str) -> str:
        if self.groups is None:
            groups, costs = self._resolve()
            self.groups, self.costs = dict(groups), dict(costs)
        key = case_of(nodeid)
        group = self.groups.get(key) if key is not None else None
        return f"{UNIT_PREFIX}{group}" if group is not None else nodeid

    def unit_cost(self, unit: str, tests: int) -> float:
        scope = unit[len(UNIT_PREFIX) :] if unit.startswith(UNIT_PREFIX) else None
        return self.costs.get(scope, 0.0) + TEST_S * tests if scope is not None else TEST_S * tests

    # A worker starts its share as soon as it has collected, not once every worker has: xdist
    # starts the workers one after the other, and the first waited for the last one's
    # collection (0.1 to 0.2 s on 2 cores: docs/performance.md, "Issue 24, stop 39"). The plan
    # is made for every expected worker when the first collection arrives; the shares of the
    # workers still collecting are held until each arrives, the largest share to the first.
    @property
    def collection_is_completed(self) -> bool:
        return bool(self.registered_collections)

    def add_node_collection(self, node: Any, collection: Sequence[str]) -> None:
        if self.collection is not None and list(collection) != self.collection:
            self._refuse(node, collection)
            return
        self.registered_collections[node] = list(collection)

    def _refuse(self, node: Any, collection: Sequence[str]) -> None:
        """A worker that collected other tests than the first: reported as xdist reports it (a
        failed collection, so the run fails), given no work and stopped; its share goes to the
        others as late units."""
        import pytest
        from xdist.scheduler.loadscope import report_collection_diff

        first = next(iter(self.registered_collections))
        msg = report_collection_diff(self.collection, collection, first.gateway.id, node.gateway.id)
        self.log(msg)
        rep = pytest.CollectReport(nodeid=node.gateway.id, outcome="failed", longrepr=msg, result=[])
        self.config.hook.pytest_collectreport(report=rep)
        self.assigned_work.pop(node, None)
        node.shutdown()
        self._lost += 1
        self._release_orphans()

    def _release_orphans(self) -> None:
        """Held shares beyond the workers still to collect go, as late units, to whichever
        worker runs out of work (a worker died or was refused before it collected)."""
        waiting = max(0, self.numnodes - len(self.registered_collections) - self._lost)
        if len(self._held) <= waiting:
            return
        while len(self._held) > waiting:
            self._late[:0] = self._held.pop(0)
        for node in self._pending:
            self._refill(node)
        self._shutdown_if_done()

    def schedule(self) -> None:
        if self.collection is not None:
            # a worker that collected since: one of the plan's, or one started again after a
            # crash (xdist keeps a removed worker's collection: only live ones are new)
            newcomers = [n for n in self.registered_collections if n not in self._pending and n in self.assigned_work]
            if not newcomers:  # a refused collection: nothing new to place
                return
            for node in newcomers:
                self._give(node, self._held.pop(0) if self._held else [])
                self._settle(node)
            self._shutdown_if_done()
            return
        self.collection = list(next(iter(self.registered_collections.values())))
        if not self.collection:
            return
        units: dict[str, dict[str, bool]] = {}
        for nodeid in self.collection:
            units.setdefault(self._split_scope(nodeid), {})[nodeid] = False
        costs = {u: self.unit_cost(u, len(t)) for u, t in units.items()}
        late = sorted(
            (u for u in units if self.last is not None and u.startswith(self.last)), key=lambda u: (-costs[u], u)
        )
        # The late units (mix's leave-one-out sets) go, largest predicted first, to whichever
        # worker runs out of work first: how long one takes is not known before it runs
        # (random drops only where a verdict changes), and each needs the pooled scope anyway.
        # A worker runs a test only once it knows the next one (or is told to stop), so each
        # late unit is followed by one of the tail unit's tests (``tail``: the pooled scope's,
        # which the late units' worker reads anyway): its own test then runs at once, and the
        # one held back is a verdict already computed.
        spare = [n for n in units.get(self.tail, {})][-len(late) :] if self.tail in units and late else []
        for nodeid in spare:
            del units[self.tail][nodeid]
        # The tail unit's other tests but its first two (the first computes it; a worker runs a
        # test once it knows the next) are the run's filler: sent once no late unit is left, in
        # shrinking chunks, to whichever worker is idle.
        # Each only looks up a verdict of the one scope every late unit's worker reads, so the
        # workers end within a chunk of each other instead of a late unit (~1 s) apart.
        self._filler = list(units.get(self.tail, {}))[2:] if late else []
        for nodeid in self._filler:
            del units[self.tail][nodeid]
        if self._filler:
            costs[self.tail] = self.unit_cost(self.tail, len(units[self.tail]))
        nodes = list(self.registered_collections)
        plan = lpt({u: c for u, c in costs.items() if u not in late}, max(self.numnodes, len(nodes)))
        self._late = []
        for i, u in enumerate(late):
            tests = dict(units[u])
            if i < len(spare):
                tests[spare[i]] = False
            self._late.append((u, tests))
        shares = [[(u, units[u]) for u in mine if units[u]] for mine in plan]
        self._held = shares[len(nodes) :]
        self._release_orphans()
        for node, mine in zip(nodes, shares):
            self._give(node, mine)
        for node in nodes:
            self._settle(node)
        self._shutdown_if_done()

    def _give(self, node: Any, share: list[tuple[str, dict[str, bool]]]) -> None:
        """A worker that has collected: its collection indexed, its share of the plan sent."""
        self._index[node] = {nodeid: i for i, nodeid in enumerate(self.registered_collections[node])}
        self._pending[node] = 0
        for u, tests in share:
            self._send(node, u, tests)

    def _settle(self, node: Any) -> None:
        """A late unit if the worker is idle; stopped if it got nothing (more workers than units)."""
        self._refill(node)
        if not self._pending[node]:
            self.assigned_work.pop(node, None)
            node.shutdown()

    def _refill(self, node: Any) -> None:
        """A late unit for a worker that holds at most its last test (is idle); once none is
        left, a chunk of the filler (guided: what is left over twice the workers, at least
        ``FILLER_MIN`` tests)."""
        while self._late and self._pending.get(node, 0) <= 1 and not node.shutting_down:
            self._send(node, *self._late.pop(0))
        if not self._late and self._filler and self._pending.get(node, 0) <= 1 and not node.shutting_down:
            n = max(FILLER_MIN, len(self._filler) // (2 * max(1, len(self._pending))))
            chunk, self._filler = self._filler[:n], self._filler[n:]
            self._chunks += 1
            self._send(node, f"{self.tail}#{self._chunks}", dict.fromkeys(chunk, False))

    def _send(self, node: Any, unit: str, tests: dict[str, bool]) -> None:
        self.assigned_work.setdefault(node, {})[unit] = tests
        for nodeid in tests:
            self._sent_in[nodeid] = tests
        todo = [self._index[node][nodeid] for nodeid in tests]
        self._pending[node] += len(todo)
        node.send_runtest_some(todo)

    def _shutdown_if_done(self) -> None:
        """Once no late unit is left and every share is given, every worker runs what it was
        sent, then stops."""
        if self._late or self._held or self._filler:
            return
        for node in self.nodes:
            if not node.shutting_down:
                node.shutdown()

    # xdist's ``loadscope`` counts a node's pending tests by walking all of its tests, on every
    # report: quadratic, ~2.4 s of the controller's CPU at 10,000 tests. Counted as they finish.
    def mark_test_complete(self, node: Any, item_index: int, duration: float = 0) -> None:
        nodeid = self.registered_collections[node][item_index]
        unit = self._sent_in.get(nodeid) or self.assigned_work[node][self._split_scope(nodeid)]
        if node in self._pending and not unit[nodeid]:
            self._pending[node] -= 1
        unit[nodeid] = True  # nothing to reschedule: placed units are sent whole, late ones below
        if self._late or self._filler:
            self._refill(node)
            self._shutdown_if_done()

    @property
    def tests_finished(self) -> bool:
        if self.collection is None:  # nothing placed yet
            return super().tests_finished
        # not xdist's test on its own queue and workers: late units and held shares wait for a
        # worker (one still starting, or the one started in place of a crashed one)
        return (
            not self.workqueue
            and not self._late
            and not self._held
            and not self._filler
            and all(n < 2 for n in self._pending.values())
        )

    def _reschedule(self, node: Any) -> None:
        """Called by xdist's ``remove_node`` after a crash, for each remaining worker: the
        crashed worker's unfinished tests, which it put back in its queue, become late units
        (sent, counted, to whichever worker runs out of work, or to the worker started in its
        place). xdist's own would send them uncounted, one unit per call, and never to a worker
        still collecting (its collection is not there to index: a ``KeyError``)."""
        self._requeue()
        if node in self._pending:
            self._refill(node)

    def _requeue(self) -> None:
        while self.workqueue:
            unit, tests = self.workqueue.popitem(last=False)
            todo = {nodeid: False for nodeid, done in tests.items() if not done}
            if todo:
                self._late.insert(0, (unit, todo))

    def remove_node(self, node: Any) -> Any:
        self._pending.pop(node, None)
        crashitem = super().remove_node(node)
        self._requeue()  # when no other worker was left for xdist to offer them to
        if node not in self.registered_collections:  # it died before it collected
            self._lost += 1
            self._release_orphans()
        return crashitem


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
