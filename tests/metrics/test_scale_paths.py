"""The fast paths for big grids give the same numbers, bit for bit, as the definitions
they replace (docs/performance.md, "Leaderboard scale")."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from leaderboard_audit.checks.brittleness import variance_parts_blocked
from leaderboard_audit.metrics import per_model
from leaderboard_audit.metrics.brittleness import variance_parts
from leaderboard_audit.metrics.kendall import _tau_b_pairs, kendall_tau_b


@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 40).flatmap(
        lambda n: st.tuples(
            arrays(np.int8, n, elements=st.integers(0, 6)),
            arrays(np.int8, (n, 4), elements=st.integers(0, 9)),
        )
    ),
    st.sampled_from([1.0, 7.0, 1 / 3]),
)
def test_kendall_equals_pair_signs_with_ties(xy, scale):
    x, Y = xy
    x, Y = x.astype(float) * scale, Y.astype(float) / 7
    assert kendall_tau_b(x, Y).tobytes() == _tau_b_pairs(x, Y).tobytes()


def test_kendall_many_models_and_columns():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 3000, 700) / 3000  # many distinct values: blocks of sqrt(2B)
    Y = np.concatenate([rng.integers(0, 101, (700, 30)) / 100, rng.random((700, 3)), np.zeros((700, 1))], axis=1)
    assert kendall_tau_b(x, Y).tobytes() == _tau_b_pairs(x, Y).tobytes()
    x = np.repeat([0.2, 0.5, 0.9], [300, 1, 399])  # one long tie per block
    assert kendall_tau_b(x, Y).tobytes() == _tau_b_pairs(x, Y).tobytes()


def test_kendall_nan_keeps_the_pairwise_semantics():
    x = np.array([0.1, np.nan, 0.3, 0.2])
    Y = np.array([[0.1, 1.0], [0.2, 2.0], [0.3, 3.0], [0.0, 4.0]])
    assert kendall_tau_b(x, Y).tobytes() == _tau_b_pairs(x, Y).tobytes()


@pytest.mark.parametrize("K", [1, 5, 8, 9, 16, 26, 33])
def test_all_any_matches_numpy(K, monkeypatch):
    rng = np.random.default_rng(K)
    C = rng.random((9, 70, K)) < 0.7
    C[:, :20] = C[:, :20, :1]  # robust items
    monkeypatch.setattr(per_model, "BLOCK_CELLS", 150)  # several blocks of models
    for view in (C, C[:, 11:53], C[1:8:2, ::3], C[:, rng.permutation(70)]):
        for configs in (None, [0], list(range(0, K, 3)), [K - 1], [K - 1, 0]):
            g = list(range(K)) if configs is None else configs
            a, o = per_model.all_any(view, configs)
            assert np.array_equal(a, view[:, :, g].all(axis=2))
            assert np.array_equal(o, view[:, :, g].any(axis=2))
        groups = [list(range(K)), [0], list(range(0, K, 3)), [K - 1, 0]]
        for g, (a, o) in zip(groups, per_model.all_any_groups(view, groups)):  # one pass for all
            assert np.array_equal(a, view[:, :, g].all(axis=2))
            assert np.array_equal(o, view[:, :, g].any(axis=2))
        for g, a in zip(groups, per_model.all_right_groups(view, groups)):
            assert np.array_equal(a, view[:, :, g].all(axis=2))
        assert per_model.all_any_groups(view, groups[1:], want_any=False)[0][1] is None
        assert np.array_equal(per_model.correct_counts(view), view.sum(axis=1, dtype=np.int64))


def test_all_any_needs_a_config():
    with pytest.raises(ValueError):
        per_model.all_any(np.zeros((2, 3, 9), dtype=bool), [])


@pytest.mark.parametrize("K", [1, 9, 26])
def test_variance_parts_blocked_is_bit_identical(K, monkeypatch):
    import leaderboard_audit.checks.brittleness as br

    rng = np.random.default_rng(5)
    C = rng.random((13, 40, K)) < 0.4
    C[:, :15] = C[:, :15, :1]  # robust items: mean 0 or 1, variance 0
    C[3] = True  # a model right everywhere: V = 0
    monkeypatch.setattr(br, "BLOCK_CELLS", 3 * 40 * K)  # blocks of 3 models
    whole = variance_parts(C)
    for view in (C, Records_view(C)):
        blocked = variance_parts_blocked(view)
        for k in whole:
            assert whole[k].tobytes() == blocked[k].tobytes()


def Records_view(C: np.ndarray) -> np.ndarray:
    """A read-only view, as the audit hands to the checks (masks shared through the memo)."""
    v = C.view()
    v.flags.writeable = False
    return v


def test_derived_is_computed_once_per_read_only_array():
    C = np.random.default_rng(1).random((3, 20, 9)) < 0.5
    calls = []

    def compute():
        calls.append(1)
        return np.zeros(2)

    per_model.derived(Records_view(C), "x", compute)  # outside an audit's sharing: nothing kept
    per_model.derived(Records_view(C), "x", compute)
    assert len(calls) == 2 and per_model.current_cache() is None
    calls.clear()
    with per_model.sharing() as cache:
        _derived_once(C, compute, calls, cache)
    assert per_model.current_cache() is None  # the cache goes with the audit


def _derived_once(C, compute, calls, cache):
    ro = Records_view(C)
    first = per_model.derived(ro, "x", compute)
    assert per_model.derived(ro, "x", compute) is first and len(calls) == 1
    assert not first.flags.writeable  # a caller cannot alter a shared value
    per_model.derived(C, "x", compute)  # writeable: computed every time
    per_model.derived(C, "x", compute)
    assert len(calls) == 3
    per_model.derived(Records_view(C), "x", compute)  # the memory could still change: per view
    assert len(calls) == 4
    key = id(ro)
    del ro, first
    assert key not in cache.entries  # the entry goes with its view


def test_derived_views_of_read_only_memory_share():
    with per_model.sharing() as cache:
        _views_share(cache)


def _views_share(cache):
    C = np.random.default_rng(1).random((3, 20, 9)) < 0.5
    C.flags.writeable = False  # as the readers leave it (records.model.freeze)
    calls = []

    def compute():
        calls.append(1)
        return (np.zeros(2),)

    first = per_model.derived(Records_view(C[:, 5:]), "x", compute)
    assert per_model.derived(Records_view(C[:, 5:]), "x", compute) is first and len(calls) == 1
    per_model.derived(Records_view(C[:, 6:]), "x", compute)  # other memory
    assert len(calls) == 2
    key = id(C)
    del C, first
    assert key not in cache.entries  # the entries go with the memory's owner


def test_loaded_records_are_read_only(fixtures_dir):
    from leaderboard_audit.records import load_records

    rec = load_records(fixtures_dir / "demo")
    assert not rec.correct.flags.writeable
    assert not rec.scope(rec.benchmarks[0]).correct.flags.writeable


def test_variance_parts_split_matches_each_subset(monkeypatch):
    import leaderboard_audit.checks.brittleness as br

    rng = np.random.default_rng(8)
    C = rng.random((11, 60, 26)) < 0.5
    C[:, :25] = C[:, :25, :1]
    monkeypatch.setattr(br, "BLOCK_CELLS", 4 * 60 * 26)
    sets = [slice(0, 17), slice(17, 60), np.array([3, 9, 40, 41, 59])]
    whole, parts = br.variance_parts_split(C, sets)
    for got, want in zip([whole, *parts], [C, C[:, :17], C[:, 17:], C[:, sets[2]]]):
        ref = variance_parts(want)
        for k in ref:
            assert got[k].tobytes() == ref[k].tobytes()


def test_compliance_blocks_give_the_same_numbers(monkeypatch):
    from leaderboard_audit.metrics import compliance as cm
    from leaderboard_audit.records.grid import paper_grid

    rng = np.random.default_rng(11)
    grid = paper_grid()
    C = rng.random((9, 30, len(grid))) < 0.6
    pred = rng.integers(-2, 4, C.shape).astype(np.int16)
    classes = rng.integers(-1, 5, C.shape).astype(np.int8)
    unparsed = rng.integers(-1, 4, C.shape[:2]).astype(np.int16)
    gen = cm.generation_configs(grid)
    names = tuple(f"m{j}" for j in range(9))

    def run():
        return (
            cm.compliance(C, pred, grid, models=names, answer_class=classes),
            cm.compliance(C, None, grid, models=names, unparsed=unparsed),
            cm.class_split(C, classes, gen, cm.DEFAULT_ANSWER_CLASSES).tobytes(),
        )

    whole = run()
    monkeypatch.setattr(cm, "BLOCK_CELLS", 2 * 30 * len(grid))  # blocks of 2 models
    assert run() == whole


def test_flip_auc_bootstrap_chunks_give_the_same_numbers(monkeypatch):
    from leaderboard_audit.metrics import flip

    rng = np.random.default_rng(4)
    n_items, n_models = 40, 5
    margin = np.round(rng.random(n_items * n_models), 2)
    fragile = rng.random(margin.size) < 0.3
    cluster = np.tile(np.arange(n_items), n_models)
    weights = flip.item_resample_weights(n_items, 37, np.random.default_rng(1))
    whole = flip.auc_bootstrap(margin, fragile, cluster, weights)
    monkeypatch.setattr(flip, "_CHUNK_CELLS", 3 * margin.size)  # 3 resamples per chunk
    assert flip.auc_bootstrap(margin, fragile, cluster, weights).tobytes() == whole.tobytes()


@pytest.mark.parametrize("k,n_always", [(10, 0), (10, 40), (300, 0), (200, 100)])
def test_champion_counts_many_equals_the_definition(k, n_always, monkeypatch):
    """Counts summed in uint8/uint16 by blocks of models: the champion count of each subset
    as winners_per_config defines it on that subset's items."""
    from leaderboard_audit.metrics import champions as ch

    rng = np.random.default_rng(k + n_always)
    C = rng.random((7, 700, 5)) < 0.5
    C[2] = C[1]  # exact ties at the top
    always = rng.permutation(700)[:n_always]
    rest = np.setdiff1d(np.arange(700), always)
    subsets = np.stack([rng.permutation(rest)[:k] for _ in range(9)])
    got = ch.champion_counts_many(C, subsets, always=always if n_always else None)
    want = [ch.champion_count(C[:, np.concatenate([s, always]), :]) for s in subsets]
    assert got.tolist() == want


def test_pooled_pair_counts_are_the_sum_of_the_benchmarks_computed_once(monkeypatch):
    """The identified and harness-averaged orders of the pooled scope sum their benchmarks'
    item counts (``per_model.summed_over_items``): the same orders as from the whole tensor,
    and each benchmark's counts computed once for both scopes."""
    from leaderboard_audit.metrics import averaged, identified

    rng = np.random.default_rng(5)
    C = rng.random((9, 300, 6)) < rng.random((9, 1, 1))
    C[:, :60] = C[:, :60, :1]  # some items answered alike under every config
    C.flags.writeable = False  # as the readers load records: views of it share what they derive
    bounds = [(0, 70), (70, 71), (71, 300)]  # a one-item benchmark too
    parts = [C[:, lo:hi] for lo, hi in bounds]
    names = [f"m{i}" for i in range(9)]
    calls = {"above": 0, "only": 0}
    real_above, real_only = averaged.above_counts, identified.robust_only_counts

    def above(*a, **k):
        calls["above"] += 1
        return real_above(*a, **k)

    def only(*a, **k):
        calls["only"] += 1
        return real_only(*a, **k)

    whole_io = identified.identified_order(C.copy(), models=names)
    whole_ao = averaged.averaged_order(C.copy(), models=names)
    monkeypatch.setattr(averaged, "above_counts", above)
    monkeypatch.setattr(identified, "robust_only_counts", only)
    with per_model.sharing():
        _pooled_sums(C, parts, names, whole_io, whole_ao, calls, identified, averaged)


def _pooled_sums(C, parts, names, whole_io, whole_ao, calls, identified, averaged):
    io = identified.identified_order(C, models=names, parts=parts)
    ao = averaged.averaged_order(C, models=names, parts=parts)
    for got, want in ((io, whole_io), (ao, whole_ao)):
        assert got.only.tobytes() == want.only.tobytes() and got.only.dtype == want.only.dtype
        assert np.array_equal(got.p_holm, want.p_holm) and got.tiers == want.tiers
    assert calls == {"above": 3, "only": 3}
    for P in parts:  # each benchmark's own scope: no new product
        identified.identified_order(P, models=names)
        averaged.averaged_order(P, models=names)
    assert calls == {"above": 3, "only": 3}


@settings(max_examples=100, deadline=None)
@given(
    st.tuples(st.integers(0, 4), st.integers(0, 12), st.integers(1, 5)),
    st.sampled_from([bool, np.float32, np.int16, np.float64]),
    st.data(),
)
def test_take_items_equals_fancy_indexing(shape, dtype, data):
    """Records.select_items' fast copy (each cell's configs as one opaque element) is a[:, idx]."""
    from leaderboard_audit.records.model import take_items

    a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape).astype(dtype)
    idx = np.array(
        data.draw(st.lists(st.integers(0, max(0, shape[1] - 1)), max_size=15 if shape[1] else 0)), dtype=np.intp
    )
    got, want = take_items(a, idx), a[:, idx]
    assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)
    f = np.asfortranarray(a)  # not C-contiguous: numpy's own path
    assert np.array_equal(take_items(f, idx), f[:, idx])


def test_reduced_sets_read_their_masks_from_the_parent(monkeypatch):
    """A reduced set declared as parent[:, idx] (``per_model.items_of``, mix's leave-one-out
    sets and random drops) gets the parent's item-by-item masks, equal to scanning its own
    tensor, without the scan."""
    rng = np.random.default_rng(3)
    parent = rng.random((5, 40, 9)) < 0.6
    parent[:, :10] = parent[:, :10, :1]
    parent.flags.writeable = False
    idx = np.sort(rng.permutation(40)[:25])
    child = parent[:, idx]
    child.flags.writeable = False
    want = per_model.all_any_groups(child, [list(range(9))])[0]
    scans = []
    real = per_model.all_any_groups
    monkeypatch.setattr(per_model, "all_any_groups", lambda *a, **k: scans.append(1) or real(*a, **k))
    with per_model.sharing():
        per_model.items_of(child, parent, idx)
        got = per_model.all_any(child)
        rc, rw, fr = per_model.robust_masks(child)
    assert len(scans) == 1  # the parent's, once
    assert all(np.array_equal(g, w) for g, w in zip(got, want))
    assert np.array_equal(rc, want[0]) and np.array_equal(rw, ~want[1]) and np.array_equal(fr, want[1] & ~want[0])
    with per_model.sharing():  # not declared: the child's own scan
        per_model.all_any(child)
    assert len(scans) == 2


@pytest.mark.parametrize("robust_share", [0.0, 0.5, 0.9])
def test_above_counts_equal_the_definition_when_robust_items_drop_out(robust_share):
    """``above[a, b] = #{i: R[a, i] > R[b, i]}``; the items no model has at a level are left
    out of that level's product (most items, where every model is robust): the same counts."""
    from leaderboard_audit.metrics.averaged import above_counts

    rng = np.random.default_rng(int(robust_share * 10))
    K, M, N = 6, 9, 400
    R = rng.integers(0, K + 1, (M, N))
    robust = rng.random(N) < robust_share
    R[:, robust] = np.where(rng.random((M, int(robust.sum()))) < 0.5, 0, K)
    want = (R[:, None, :] > R[None, :, :]).sum(axis=2)
    assert above_counts(R.astype(np.uint8), K).tolist() == want.tolist()


@settings(max_examples=100, deadline=None)
@given(
    M=st.integers(1, 7),
    N=st.integers(1, 200),
    K=st.integers(1, 30),
    seed=st.integers(0, 2**32 - 1),
    block=st.sampled_from([1, 64, 1 << 20]),
    read_only=st.booleans(),
)
def test_counts_within_equals_the_sum_over_the_marked_items(M, N, K, seed, block, read_only):
    """A random drop's counts from per-config bits equal summing the kept items' cells,
    for item counts that are not multiples of 64 or 8, any block of models, and arrays the
    derived cache does or does not keep."""
    rng = np.random.default_rng(seed)
    C = rng.random((M, N, K)) < rng.random()
    C.flags.writeable = not read_only
    within = rng.random(N) < rng.random()
    old = per_model.BLOCK_CELLS
    per_model.BLOCK_CELLS = block
    try:
        with per_model.sharing():
            got = per_model.counts_within(C, within)
            again = per_model.counts_within(C, ~within)  # the words reused (read-only) or remade
    finally:
        per_model.BLOCK_CELLS = old
    assert got.dtype == np.int64
    assert np.array_equal(got, C[:, within].sum(axis=1))
    assert np.array_equal(again, C[:, ~within].sum(axis=1))


def test_release_forgets_a_view_and_keeps_the_rest():
    """``released(view)`` drops what was derived from that view of read-only memory (and its
    parent link), so it is computed again if asked; the owner's other views keep theirs."""
    rng = np.random.default_rng(5)
    C = rng.random((4, 40, 6)) < 0.5
    C.flags.writeable = False
    calls = []

    def count(view):
        return per_model.derived(view, "n", lambda: calls.append(view.shape) or view.sum())

    with per_model.sharing() as cache:
        tail, head = C[:, 10:], C[:, :30]
        per_model.items_of(tail, C, np.arange(10, 40))
        count(tail), count(head), count(tail), count(head)
        assert calls == [(4, 30, 6), (4, 30, 6)]
        assert cache.source_of(tail) is not None
        per_model.released(tail)
        assert cache.source_of(tail) is None
        count(tail), count(head)
        assert calls == [(4, 30, 6), (4, 30, 6), (4, 30, 6)]  # the tail again, the head still cached


def test_a_leave_one_out_sets_variance_parts_are_the_pooled_ones_bit_for_bit():
    """A reduced set takes its right counts from its parent (``right_counts``); its
    benchmarks' variance parts are then the very bits the pooled pass gives them, so under
    xdist it does not matter which of the two computes a part first. (Taken as the parent's
    columns, the counts came in Fortran order, and the rows' float reductions rounded
    differently: a ``-k mix -n 2`` report differed from the serial one now and then.)"""
    from leaderboard_audit.checks.brittleness import pooled_parts
    from leaderboard_audit.metrics.leave_one_out import without_benchmark
    from leaderboard_audit.records.model import freeze
    from leaderboard_audit.records.simulate import demo_spec, simulate

    r = freeze(simulate(demo_spec(items_per_benchmark=40)))
    with per_model.sharing():
        _, pooled = pooled_parts(r)
    for b in r.benchmarks:
        red = without_benchmark(r, b)
        with per_model.sharing():
            per_model.items_of(red.correct, r.correct, np.flatnonzero(r.items.benchmark != b))
            right = per_model.right_counts(red.correct)
            _, parts = pooled_parts(red)
        assert right.flags.c_contiguous and np.array_equal(right, red.correct.sum(axis=2))
        for x, got in zip([x for x in r.benchmarks if x != b], parts):
            want = pooled[r.benchmarks.index(x)]
            assert all(got[k].tobytes() == want[k].tobytes() for k in want), (b, x)
