"""The audit's scopes computed in processes: the three-stage DAG the statistics have.

1. the benchmarks' scopes, in a pool of forked processes; each returns its scope, its pairs'
   evidence and what it derived from its view of the tensor (the M x M counts, the masks);
2. the pooled scope without ``mix``, and mix's basis, here, reusing those values (the parent's
   cache adopts them: a forked process sees the tensor at the same addresses);
3. mix's leave-one-out sets, here, one at a time (each holds a copy of the items it keeps:
   two at once put the summed memory of a 1,000 x 8,000 x 26 audit at 1.58x of serial, for
   2.5 of its 65 s), then their random drops in a pool forked after them, which inherits the
   cache and the tensor copy-on-write; the pooled scope then gets mix's section and verdicts
   back, in the serial order.

Nothing is computed twice, nothing is shared through files, and the report is the bytes a
serial run writes (tests/engine/test_parallel.py). Where processes cannot be forked (no
``fork`` start method) the scopes are computed serially.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from ..checks import POOLED, registry
from ..metrics.per_model import DerivedCache, sharing
from ..records import Records

MIX = "mix"

#: what the forked processes read (set before a pool forks, cleared after)
_JOB: dict[str, Any] = {}


#: ``auto``: below this many (model, item, config) cells the scopes are computed in one process:
#: forking and returning each benchmark's values cost a few tenths of a second, as much as the
#: statistics of such a grid (fixtures/real under ``-n auto`` took 1.17x to 1.40x of serial at
#: load 1, the paper-sized grid x4, 4.6M cells, 1.02x; 1,000 x 400 x 26, 10.4M cells, 0.77x)
AUTO_MIN_CELLS = 8_000_000


def auto_workers(records: Records, cpus: int) -> int:
    """The processes ``-n auto`` / ``--audit-workers auto`` use for ``records``: ``cpus`` where
    the grid has ``AUTO_MIN_CELLS`` cells or more and more than one benchmark, else 1."""
    M, N, K = records.shape
    return max(1, cpus) if M * N * K >= AUTO_MIN_CELLS and len(records.benchmarks) > 1 else 1


def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def _pool(workers: int) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"))


def mix_splits(records: Records) -> bool:
    """Whether ``mix`` runs as stage 3: it applies to the pooled scope (3+ benchmarks), is not
    skipped there, and is the registry's last check, so its section and verdicts come last."""
    from .scope import make_scope

    reg = registry()
    if MIX not in reg or list(reg)[-1] != MIX:
        return False
    check = reg[MIX]
    return check.applies_to(POOLED, records) and check.skip_reason(make_scope(records, POOLED)) is None


def _benchmark(b: str) -> tuple[dict[str, Any], list[Any] | None, dict[Any, Any], dict[float, Any]]:
    """Stage 1, in a forked process: benchmark ``b``'s scope, its pairs' evidence, what it
    derived from the tensor, and the critical-value tables it grew."""
    from .evidence import scope_pair_evidence
    from ..metrics.power import critical_tables
    from .scope import audit_scope_computed

    records, cache, ids, kw = _JOB["records"], _JOB["cache"], _JOB["ids"], _JOB["kw"]
    before = cache.owned(records.correct)
    with sharing(cache):
        s, _ = audit_scope_computed(records, b, ids=ids.get(b), cache=cache, **kw)
        pairs = s.get("pairs")
        evidence = scope_pair_evidence(records, b, pairs) if isinstance(pairs, list) else None
    derived = {k: v for k, v in cache.owned(records.correct).items() if k not in before}
    return s, evidence, derived, critical_tables()


def _drops(b: str) -> dict[str, Any]:
    """Stage 3, in a forked process: that entry's random drops at the board's level (AUDITS v4:
    the level counts every benchmark's changed verdicts, so it is known only once every
    leave-one-out set is)."""
    check, sc, basis, cache = registry()[MIX], _JOB["pooled"], _JOB["basis"], _JOB["cache"]
    entry = _JOB["entries"][b]
    with sharing(cache):
        check.drop_entry(sc, b, entry, basis, level=_JOB["level"], draws=_JOB["draws"])
    return entry


def _run(fn: Callable[[str], Any], names: Sequence[str], workers: int, **job: Any) -> dict[str, Any]:
    import gc

    _JOB.update(job)
    # the heap forked as it is: a child's collections would otherwise walk (and so copy) every
    # page of the parent's objects
    frozen = gc.isenabled() and gc.get_freeze_count() == 0  # a caller's own freeze is left as it is
    if frozen:
        gc.freeze()
    try:
        with _pool(min(workers, len(names))) as pool:
            futures = {n: pool.submit(fn, n) for n in names}
            return {n: f.result() for n, f in futures.items()}
    finally:
        _JOB.clear()
        if frozen:
            gc.unfreeze()


def parallel_scopes(
    records: Records,
    names: Sequence[str],
    *,
    workers: int,
    ids: dict[str, dict[tuple[str, int], str]],
    cache: DerivedCache,
    kw: dict[str, Any],
) -> tuple[dict[str, dict[str, Any]], dict[str, list[Any]]]:
    """(scope -> its report part, scope -> its pairs' evidence) for ``names``, computed by
    ``workers`` processes as the module docstring says. With one benchmark the pooled scope is
    that benchmark's alias (``alias_of``): the caller computes such records serially."""
    from ..metrics.power import adopt_critical_tables
    from .scope import audit_scope_computed

    benchmarks = [b for b in names if b != POOLED]
    scopes: dict[str, dict[str, Any]] = {}
    evidence: dict[str, list[Any]] = {}
    # largest first, so the last benchmark to start is a small one
    size = {b: int((records.items.benchmark == b).sum()) for b in benchmarks}
    order = sorted(benchmarks, key=lambda b: (-size[b], b))
    if order:
        got = _run(_benchmark, order, workers, records=records, cache=cache, ids=ids, kw=kw)
        for b in benchmarks:
            s, ev, derived, tables = got[b]
            scopes[b] = s
            if ev is not None:
                evidence[b] = ev
            cache.adopt(records.correct, derived)
            adopt_critical_tables(tables)
    if POOLED not in names:
        return scopes, evidence
    with sharing(cache):
        split = mix_splits(records)
        only = [n for n in registry() if n != MIX] if split else None
        pooled, handle = audit_scope_computed(records, POOLED, ids=ids.get(POOLED), only=only, cache=cache, **kw)
        if split:
            from ..metrics.per_model import config_words

            check = registry()[MIX]
            basis = check.basis(handle)
            config_words(handle.C)  # the sets' random drops count from it: once, before the fork
            from ..checks.mix import board_draws, specific_level

            benchmarks = list(records.benchmarks)
            entries = {b: check.reduced_entry(handle, b, lambda: basis) for b in benchmarks}
            family = check.family(handle, basis)  # AUDITS v5: fixed before the data, not the changes
            level = specific_level(family)
            draws = board_draws(int(handle.thresholds.mix_draws), family)
            changed = [b for b in benchmarks if entries[b]["status_changes"]]
            if changed:
                entries.update(
                    _run(
                        _drops,
                        changed,
                        workers,
                        pooled=handle,
                        basis=basis,
                        cache=cache,
                        entries=entries,
                        level=level,
                        draws=draws,
                    )
                )
            section = check.section_of(handle, basis, {b: entries[b] for b in benchmarks})
            mine = ids.get(POOLED, {})
            verdicts = []
            for j, b in enumerate(benchmarks):
                v = check.judge_one(handle, section, b)
                if (MIX, j) in mine:
                    v["id"] = mine[(MIX, j)]
                verdicts.append(v)
            if records.missing is not None:  # as audit_scope_computed does (checks/incomplete.py)
                from ..checks.incomplete import decide

                verdicts = decide(check, handle, verdicts)
            core = pooled["verdicts"]
            pooled = {k: v for k, v in pooled.items() if k != "verdicts"}
            pooled[MIX] = handle.sections[MIX] = section
            pooled["verdicts"] = [*core, *verdicts]
            if records.missing is not None:
                from ..checks.incomplete import is_incomplete
                from ..checks.incomplete_sections import partial_scope_report

                if is_incomplete(handle):  # mix's section too (engine/scope.py does the rest)
                    pooled = partial_scope_report(handle, pooled)
    scopes[POOLED] = pooled
    return scopes, evidence


__all__ = ["can_fork", "mix_splits", "parallel_scopes"]
