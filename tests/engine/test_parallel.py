"""``audit(records, workers=N)``: the statistics' three stages in forked processes
(``engine/parallel.py``) give the serial run's bytes, and compute no derived quantity of the
records' tensor twice."""

from __future__ import annotations

import os

import numpy as np
import pytest

from leaderboard_audit.engine import audit, dumps_report
from leaderboard_audit.engine import parallel
from leaderboard_audit.metrics import per_model
from leaderboard_audit.records.simulate import demo_spec, simulate

pytestmark = pytest.mark.skipif(not parallel.can_fork(), reason="no fork start method here")


@pytest.fixture(scope="module")
def demo():
    """Records whose tensor is read-only memory, as the readers load them (the audit's cache
    then matches views by the memory they show)."""
    records = simulate(demo_spec(items_per_benchmark=30))
    owner = records.correct
    while owner.base is not None:
        owner = owner.base
    owner.flags.writeable = False
    return records


@pytest.mark.slow
def test_workers_give_the_serial_bytes(demo):
    serial = dumps_report(audit(demo, n_boot=300))
    assert parallel.mix_splits(demo)  # four benchmarks: mix runs as the third stage
    for n in (2, 3):
        assert dumps_report(audit(demo, n_boot=300, workers=n)) == serial


def test_two_benchmarks_and_one_benchmark_give_the_serial_bytes(demo):
    two = demo.select_items(np.flatnonzero(np.isin(demo.items.benchmark, ["arc", "mmlu"])))
    one = demo.scope("arc")
    assert list(two.benchmarks) == ["arc", "mmlu"] and not parallel.mix_splits(two)
    for records in (two, one):
        assert dumps_report(audit(records, n_boot=200, workers=2)) == dumps_report(audit(records, n_boot=200))


@pytest.mark.slow
def test_without_fork_the_scopes_are_computed_serially(demo, monkeypatch):
    monkeypatch.setattr(parallel, "can_fork", lambda: False)
    monkeypatch.setattr(parallel, "_pool", lambda workers: pytest.fail("a pool was made"))
    assert dumps_report(audit(demo, n_boot=300, workers=2)) == dumps_report(audit(demo, n_boot=300))


@pytest.mark.slow
def test_no_quantity_of_the_records_tensor_is_computed_twice(demo, tmp_path, monkeypatch):
    """Every derived value of the records' own tensor (a view of its memory: the benchmarks'
    slices, the pooled tensor) is computed by one process only; the parent adopts what the
    benchmarks' processes computed, and the leave-one-out sets inherit the parent's."""
    log = tmp_path / "computed.log"
    owner = demo.correct
    while owner.base is not None:
        owner = owner.base
    get = per_model.DerivedCache.get

    def logged(self, C, name, compute):
        values = self._values(C)
        key = (C.__array_interface__["data"][0], C.shape, C.strides, C.dtype.str, name)
        base = C
        while base.base is not None:
            base = base.base
        if key not in values and base is owner:
            with open(log, "a") as f:
                f.write(f"{os.getpid()} {key}\n")
        return get(self, C, name, compute)

    monkeypatch.setattr(per_model.DerivedCache, "get", logged)
    audit(demo, n_boot=300, workers=2)
    rows = [line.split(" ", 1) for line in log.read_text().splitlines()]
    assert len({pid for pid, _ in rows}) >= 2  # the work was spread
    keys = [key for _, key in rows]
    assert len(keys) == len(set(keys)), sorted(k for k in set(keys) if keys.count(k) > 1)


def test_auto_uses_processes_only_on_a_grid_big_enough_to_pay():
    """``-n auto`` / ``--audit-workers auto``: forking costs a few tenths of a second, so a grid
    below ``AUTO_MIN_CELLS`` cells (or with one benchmark) is computed in one process."""
    from helpers.records import make_records

    small = make_records(benches=(("arc", 5), ("mmlu", 4)), pred=False, margin=False, text=False)
    assert parallel.auto_workers(small, 4) == 1
    M, _, K = small.shape
    n_big = -(-parallel.AUTO_MIN_CELLS // (M * K))  # items enough for AUTO_MIN_CELLS cells
    big = make_records(benches=(("arc", n_big // 2 + 1), ("mmlu", n_big // 2)), pred=False, margin=False, text=False)
    assert big.shape[0] * big.shape[1] * big.shape[2] >= parallel.AUTO_MIN_CELLS
    assert parallel.auto_workers(big, 4) == 4 and parallel.auto_workers(big, 1) == 1
    one = make_records(benches=(("arc", n_big + 1),), pred=False, margin=False, text=False)
    assert parallel.auto_workers(one, 4) == 1  # one benchmark: one scope to compute
