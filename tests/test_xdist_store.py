"""What xdist workers hand each other (``xdist_store``): a result computed by one process and
read by the others, a busy key skipped instead of waited on, a grown table continued from, and
the benchmarks' summed counts named alike in every process that loads the same records."""

from __future__ import annotations

import fcntl
import multiprocessing as mp
import threading

import numpy as np
import pytest

from helpers.builders import write
from leaderboard_audit.metrics import per_model
from leaderboard_audit.metrics.averaged import above_of
from leaderboard_audit.metrics.identified import count_dtype, robust_only_of
from leaderboard_audit.metrics.power import _CriticalTable
from leaderboard_audit.records import load_records
from leaderboard_audit.simulate import demo_spec, simulate
from leaderboard_audit.xdist_store import SharedArrays, SharedResults


def test_array_once_computes_once_and_hands_the_others_a_read_only_copy(tmp_path):
    store = SharedResults(tmp_path)
    calls = []

    def compute():
        calls.append(1)
        return np.arange(12, dtype=np.int32).reshape(3, 4)

    first = store.array_once("above-x", compute)
    second = store.array_once("above-x", compute)
    assert calls == [1]
    assert np.array_equal(first, second) and second.dtype == np.int32
    assert not first.flags.writeable and not second.flags.writeable
    # both map the one file (the process that computed it too): the workers hold one copy
    assert _mapped(first) and _mapped(second) and type(first) is type(second) is np.ndarray
    assert not any(p.name.endswith(".tmp") for p in tmp_path.iterdir())  # written whole, renamed


def _mapped(a: np.ndarray) -> bool:
    import mmap

    while isinstance(a, np.ndarray):
        a = a.base
    return isinstance(a, mmap.mmap)


def test_an_empty_array_is_read_where_it_cannot_be_mapped(tmp_path):
    store = SharedResults(tmp_path)
    got = [store.array_once("empty", lambda: np.zeros((0, 3), dtype=bool)) for _ in range(2)]
    assert all(g.shape == (0, 3) and g.dtype == bool and not g.flags.writeable for g in got)


def test_a_key_another_process_holds_is_busy_without_waiting(tmp_path):
    store = SharedResults(tmp_path)
    with open(tmp_path / "k.lock", "a") as held:  # another open file: flock conflicts as across processes
        fcntl.flock(held, fcntl.LOCK_EX)
        assert store.array_once("k", lambda: pytest.fail("computed while another holds the key"), wait=False) is None
        fcntl.flock(held, fcntl.LOCK_UN)
    assert store.array_once("k", lambda: np.ones(2), wait=False).tolist() == [1.0, 1.0]


def test_once_returns_whether_this_process_computed_it(tmp_path):
    store = SharedResults(tmp_path)
    assert store.once("pooled-core", lambda: {"a": [1, 2]}) == ({"a": [1, 2]}, True)
    assert store.once("pooled-core", lambda: pytest.fail("computed twice")) == ({"a": [1, 2]}, False)
    assert store.read("pooled-core") == {"a": [1, 2]}  # the controller's read of what a worker wrote
    assert store.read("never-written") is None
    with pytest.raises(ValueError, match="letters, digits"):
        store.once("../escape", dict)


def _grow_in_child(root: str, nmax: int) -> None:
    SharedResults(root).grow("critical-0.05", _CriticalTable(0.05), nmax)


def test_a_grown_table_is_continued_from_with_the_same_bits(tmp_path):
    """One process grows the sign test's critical values and writes them; another continues
    from its table instead of starting at n = 0: every value equals a table grown alone."""
    ctx = mp.get_context("fork")
    child = ctx.Process(target=_grow_in_child, args=(str(tmp_path), 5_000))
    child.start()
    child.join(30)
    assert child.exitcode == 0
    here = _CriticalTable(0.05)
    SharedResults(tmp_path).grow("critical-0.05", here, 1_000)
    assert here.c.size > 5_000  # read, not computed up to 1,000 only
    SharedResults(tmp_path).grow("critical-0.05", here, 20_000)  # and grown on from there
    alone = _CriticalTable(0.05)
    assert np.array_equal(here.upto(20_000), alone.upto(20_000))


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    from leaderboard_audit.records.packed import write_packed

    d = tmp_path_factory.mktemp("rec")
    rec = load_records(write(simulate(demo_spec(items_per_benchmark=30)), d / "demo"))
    return write_packed(rec, d / "demo.packed")


def test_a_benchmarks_view_has_one_name_in_every_process_and_a_copy_none(tmp_path, packed):
    a, b = load_records(packed), load_records(packed)  # two processes' loads of the same file
    sa = SharedArrays(SharedResults(tmp_path), a.correct, "sha")
    sb = SharedArrays(SharedResults(tmp_path), b.correct, "sha")
    arc_a, arc_b = a.scope("arc").correct, b.scope("arc").correct
    assert sa.key(arc_a, "above") == sb.key(arc_b, "above") is not None
    assert sa.key(arc_a, "above") != sa.key(a.scope("mmlu").correct, "above")
    assert sa.key(arc_a, "above") != sa.key(arc_a, "robust_only")
    assert sa.key(np.array(arc_a), "above") is None  # a copy (mix's reduced sets): not shared
    assert sb.key(arc_a, "above") is None  # another process's tensor


def test_summed_counts_shared_between_workers_equal_their_own(tmp_path, packed):
    """Two "workers" (two caches over one store): the second reads every benchmark's counts
    the first wrote, and the pooled sums equal those computed with nothing shared."""
    records = [load_records(packed) for _ in range(3)]
    parts = [[r.scope(b).correct for b in r.benchmarks] for r in records]
    pooled = [r.read_only().correct for r in records]
    N = records[0].shape[1]
    with per_model.sharing(per_model.DerivedCache()):
        alone = (
            per_model.summed_over_items(pooled[0], "above", above_of, parts[0]),
            per_model.summed_over_items(pooled[0], "robust_only", robust_only_of, parts[0], count_dtype(N)),
        )
    got = []
    computed = []
    for r, P, C in zip(records[1:], parts[1:], pooled[1:]):
        cache = per_model.DerivedCache()
        cache.shared = SharedArrays(SharedResults(tmp_path), r.correct, "sha")

        def counted(fn, calls=computed):
            def compute(X):
                calls.append(fn.__name__)
                return fn(X)

            return compute

        with per_model.sharing(cache):
            got.append(
                (
                    per_model.summed_over_items(C, "above", counted(above_of), P),
                    per_model.summed_over_items(C, "robust_only", counted(robust_only_of), P, count_dtype(N)),
                )
            )
    n_benchmarks = len(parts[0])
    assert computed.count("above_of") == n_benchmarks  # by the first worker only
    assert computed.count("robust_only_of") == n_benchmarks
    for above, only in got:
        assert np.array_equal(above, alone[0]) and above.dtype == alone[0].dtype
        assert np.array_equal(only, alone[1]) and only.dtype == alone[1].dtype


def test_the_base_quantities_are_computed_by_one_worker_and_read_alike(tmp_path, packed, monkeypatch):
    """What every check of a scope starts from (right counts, config words, correct counts, the
    all / any masks) is computed once over a store, for the whole tensor, a benchmark's view
    and a reduced set's view alike (issue 24: nothing recomputed because of how units were cut),
    and what the second worker reads is what it would compute: same values, dtypes, layout, and
    the masks as a pair again."""
    records = [load_records(packed) for _ in range(3)]

    def views(r):
        C = r.read_only().correct
        return {"pooled": C, "arc": r.scope("arc").correct, "tail": C[:, C.shape[1] // 3 :]}

    def quantities(C):
        return {
            "right_counts": per_model.right_counts(C),
            "config_words": per_model.config_words(C),
            "counts": per_model.correct_counts(C),
            "all_any": per_model.all_any(C),
        }

    with per_model.sharing(per_model.DerivedCache()):
        alone = {v: quantities(C) for v, C in views(records[0]).items()}
    computed: list[str] = []
    real_get = SharedResults.array_once

    def counting(self, key, compute, *, wait=True):
        return real_get(self, key, lambda: computed.append(key.split("-")[0]) or compute(), wait=wait)

    monkeypatch.setattr(SharedResults, "array_once", counting)
    got = []
    for r in records[1:]:
        cache = per_model.DerivedCache()
        cache.shared = SharedArrays(SharedResults(tmp_path), r.correct, "sha")
        with per_model.sharing(cache):
            got.append({v: quantities(C) for v, C in views(r).items()})
    for name in ("right_counts", "config_words", "counts", "all_any"):
        assert computed.count(name) == 3, (name, computed)  # three views, by the first worker only
    for worker in got:
        for v, q in worker.items():
            for name, value in q.items():
                want = alone[v][name]
                if name == "all_any":
                    assert type(value) is tuple and len(value) == 2
                    pairs = zip(value, want)
                else:
                    pairs = [(value, want)]
                for a, b in pairs:
                    assert np.array_equal(a, b) and a.dtype == b.dtype and a.flags.c_contiguous == b.flags.c_contiguous
                    assert not a.flags.writeable


def test_a_write_that_fails_leaves_nothing_and_the_value_still_returns(tmp_path, monkeypatch):
    """A full disk: the computing worker keeps its result, nothing half-written is left, and
    the next worker computes it itself."""
    import leaderboard_audit.xdist_store as store_mod

    def full(path, value):
        path.write_bytes(b"partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store_mod, "_write_array", full)
    store = SharedResults(tmp_path)
    assert store.array_once("k", lambda: np.arange(3)).tolist() == [0, 1, 2]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.lock"]
    monkeypatch.undo()
    assert store.array_once("k", lambda: np.arange(4)).tolist() == [0, 1, 2, 3]  # computed again


def _rows_of(full: np.ndarray, calls: list | None = None):
    """A ``fill`` for ``array_filled_once`` that copies ``full``'s rows, noting each call."""

    def fill(rows, lo, hi):
        assert rows.flags.writeable and rows.shape == full[lo:hi].shape
        rows[...] = full[lo:hi]
        if calls is not None:
            calls.append((lo, hi))

    return fill


def test_a_filled_array_is_mapped_read_only_and_filled_once(tmp_path):
    full = np.random.default_rng(0).random((37, 5, 3)) < 0.5
    store = SharedResults(tmp_path)
    calls: list = []
    got = store.array_filled_once("t", full.shape, bool, _rows_of(full, calls), parts=4, first=1)
    assert np.array_equal(got, full) and got.dtype == bool and not got.flags.writeable and _mapped(got)
    # parts start at multiples of 8 rows; this process began with its own (part 1) and took every free one
    assert calls == [(16, 32), (32, 37), (0, 16)]
    again = store.array_filled_once("t", full.shape, bool, lambda *a: pytest.fail("filled twice"))
    assert np.array_equal(again, full)
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith((".lock", ".done"))) == ["t.npy"]


def test_a_filled_arrays_key_is_checked(tmp_path):
    with pytest.raises(ValueError, match="letters, digits"):
        SharedResults(tmp_path).array_filled_once("../t", (8,), bool, _rows_of(np.zeros(8, bool)))


def test_row_parts_cover_the_rows_at_aligned_starts():
    from leaderboard_audit.xdist_store import _row_parts

    for n in (0, 1, 7, 8, 9, 64, 1000, 1001):
        for parts in (1, 2, 3, 8):
            got = _row_parts(n, parts, 8)
            assert len(got) <= max(1, parts)
            assert all(lo % 8 == 0 for lo, _ in got)
            assert [i for lo, hi in got for i in range(lo, hi)] == list(range(n))


def _fill_part_in_child(root: str, full: np.ndarray, first: int, started, release) -> None:
    def fill(rows, lo, hi):
        started.set()
        release.wait(30)
        rows[...] = full[lo:hi]

    SharedResults(root).array_filled_once("t", full.shape, bool, fill, parts=2, first=first)


def test_two_processes_fill_a_part_each_and_a_waiter_reads_the_other(tmp_path):
    """While another process fills its part, this one fills the other part and then waits
    for it, instead of filling the whole array or waiting for all of it."""
    full = np.random.default_rng(1).random((16, 4, 2)) < 0.5
    ctx = mp.get_context("fork")
    started, release = ctx.Event(), ctx.Event()
    child = ctx.Process(target=_fill_part_in_child, args=(str(tmp_path), full, 1, started, release))
    child.start()
    assert started.wait(30)  # the child holds part 1 (rows 8:16)
    calls: list = []
    threading.Timer(0.3, release.set).start()
    got = SharedResults(tmp_path).array_filled_once("t", full.shape, bool, _rows_of(full, calls), parts=2, first=0)
    child.join(30)
    assert child.exitcode == 0
    assert calls == [(0, 8)]  # its own part only: the child's it waited for
    assert np.array_equal(got, full)


def _die_filling(root: str, full: np.ndarray) -> None:
    import os

    def fill(rows, lo, hi):
        os._exit(3)  # dies holding the part's lock, nothing written

    SharedResults(root).array_filled_once("t", full.shape, bool, fill, parts=2, first=1)


def test_a_part_whose_filler_died_is_filled_by_the_next_process(tmp_path):
    full = np.random.default_rng(2).random((16, 3, 2)) < 0.5
    ctx = mp.get_context("fork")
    child = ctx.Process(target=_die_filling, args=(str(tmp_path), full))
    child.start()
    child.join(30)
    assert child.exitcode == 3
    calls: list = []
    got = SharedResults(tmp_path).array_filled_once("t", full.shape, bool, _rows_of(full, calls), parts=2, first=0)
    assert sorted(calls) == [(0, 8), (8, 16)] and np.array_equal(got, full)


def test_a_filled_array_is_private_where_no_file_can_be_allocated(tmp_path, monkeypatch):
    """A full disk (or no posix_fallocate): this process fills its own array, nothing is left
    half-written, and the next process tries again."""
    import leaderboard_audit.xdist_store as store_mod

    def full_disk(path, shape, dtype):
        path.write_bytes(b"partial")
        raise OSError(28, "No space left on device")

    full = np.arange(24, dtype=np.int16).reshape(8, 3)
    monkeypatch.setattr(store_mod, "_allocated_npy", full_disk)
    got = SharedResults(tmp_path).array_filled_once("t", full.shape, np.int16, _rows_of(full))
    assert np.array_equal(got, full) and not got.flags.writeable and not _mapped(got)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.lock"]
    monkeypatch.undo()
    assert _mapped(SharedResults(tmp_path).array_filled_once("t", full.shape, np.int16, _rows_of(full)))


def test_packed_bits_unpack_any_range_of_models_as_the_reader_does(packed):
    from leaderboard_audit.records.packed import PackedBits, read_packed, read_packed_deferred

    want = read_packed(packed).correct
    rec = read_packed_deferred(packed, keep_bits=True)
    bits = rec._load
    assert isinstance(bits, PackedBits) and bits.shape == want.shape
    M = want.shape[0]
    for lo, hi in ((0, M), (0, 1), (1, M), (M - 1, M)):
        dest = np.zeros((hi - lo, *want.shape[1:]), dtype=bool)
        bits.rows(dest, lo, hi)
        assert np.array_equal(dest, want[lo:hi])
    with pytest.raises(ValueError, match="expected contiguous bool"):
        bits.rows(np.zeros((M, *want.shape[1:]), dtype=bool)[:, ::2], 0, M)
    assert np.array_equal(rec.correct, want) and not rec.correct.flags.writeable
    bits.release()
    with pytest.raises(RuntimeError, match="released"):
        bits.rows(np.zeros(want.shape, dtype=bool), 0, M)
    assert not isinstance(read_packed_deferred(packed)._load, PackedBits)  # the controller keeps none
