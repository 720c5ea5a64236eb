"""Per-model quantities: the paper's Table 1 and Figure 1 (section 4.1)."""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np


class DerivedCache:
    """Quantities several checks derive from the same read-only tensor, for the lifetime of one
    audit (``sharing``): per array that owns the memory, id -> (weak reference to it,
    {(where the view starts, shape, strides, dtype, name): value}). Entries go when the
    owner does, and all of them with the cache."""

    def __init__(self) -> None:
        self.entries: dict[int, tuple[weakref.ref, dict[tuple[Any, ...], Any]]] = {}
        #: id(child) -> (weak reference to it, parent, item index): child == parent[:, index]
        self.sources: dict[int, tuple[weakref.ref, np.ndarray, np.ndarray]] = {}

    def link(self, child: np.ndarray, parent: np.ndarray, idx: np.ndarray) -> None:
        key = id(child)
        self.sources[key] = (weakref.ref(child, lambda _r, k=key: self.sources.pop(k, None)), parent, idx)

    def source_of(self, C: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        found = self.sources.get(id(C))
        return None if found is None or found[0]() is not C else (found[1], found[2])

    def _forget(self, key: int, ref: weakref.ref) -> None:
        entry = self.entries.get(key)
        if entry is not None and entry[0] is ref:
            del self.entries[key]

    def release(self, C: np.ndarray) -> None:
        """Drop what was derived from the view ``C`` (every name), and its link to a parent: a
        view's values live as long as the memory's owner, and a leave-one-out set that is a
        view of the pooled tensor (``Records.select_items``) is done with before the owner."""
        owner = C
        while isinstance(owner.base, np.ndarray):
            owner = owner.base
        if owner.flags.writeable:
            owner = C  # as ``get`` keys it
        entry = self.entries.get(id(owner))
        if entry is not None and entry[0]() is owner:
            view = (C.__array_interface__["data"][0], C.shape, C.strides, C.dtype.str)
            for key in [k for k in entry[1] if k[:4] == view]:
                del entry[1][key]
        self.sources.pop(id(C), None)

    def _values(self, C: np.ndarray, create: bool = True) -> dict[tuple[Any, ...], Any] | None:
        """The values derived from the memory ``C`` shows, keyed by (view start, shape, strides,
        dtype, name); memory that can still change through another array: ``C``'s own."""
        owner = C
        while isinstance(owner.base, np.ndarray):
            owner = owner.base
        if owner.flags.writeable:
            owner = C  # memory that can still change through another array: this view only
        okey = id(owner)
        entry = self.entries.get(okey)
        if entry is None or entry[0]() is not owner:
            if not create:
                return None
            entry = (weakref.ref(owner, functools.partial(self._forget, okey)), {})
            self.entries[okey] = entry
        return entry[1]

    def get(self, C: np.ndarray, name: str, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per (memory, view, name)."""
        values = self._values(C)
        assert values is not None
        key = (C.__array_interface__["data"][0], C.shape, C.strides, C.dtype.str, name)
        if key not in values:
            values[key] = _read_only(compute())
        return values[key]

    def owned(self, C: np.ndarray) -> dict[tuple[Any, ...], Any]:
        """A copy of what was derived from the read-only memory ``C`` shows, every view of it
        (empty where that memory is writeable: its values are per view object)."""
        values = self._values(C, create=False)
        return dict(values) if values is not None and not C.flags.writeable else {}

    def adopt(self, C: np.ndarray, values: dict[tuple[Any, ...], Any]) -> None:
        """Take ``values`` derived from the same memory as ``C`` by a process forked from this
        one (which sees that memory at the same addresses, so ``owned``'s keys hold here)."""
        mine = self._values(C) if values and not C.flags.writeable else None
        if mine is not None:
            for key, value in values.items():
                mine.setdefault(key, _read_only(value))


def _read_only(value: Any) -> Any:
    """``value`` (an array, or a dict or tuple of them) with its arrays made read-only."""
    for a in value.values() if isinstance(value, dict) else value if isinstance(value, tuple) else (value,):
        if isinstance(a, np.ndarray):
            a.flags.writeable = False
    return value


#: the cache of the audit running in this context (None: nothing is shared, every call computes);
#: set only by ``sharing``, which the audit enters with the cache it owns
_CURRENT: ContextVar[DerivedCache | None] = ContextVar("leaderboard_audit_derived", default=None)


def current_cache() -> DerivedCache | None:
    """The cache of the audit sharing now (``sharing``), or None."""
    return _CURRENT.get()


@contextmanager
def sharing(cache: DerivedCache | None = None) -> Iterator[DerivedCache]:
    """Share derived quantities inside the ``with`` block: in ``cache``, else in the one already
    active, else in a new one. The auditor enters it for one scope (``audit_scope_computed``),
    the plugin's session and ``auditor.audit`` for all of a run's scopes (so the pooled scope
    and its benchmarks share), the report for its pair evidence."""
    use = cache or _CURRENT.get() or DerivedCache()
    token = _CURRENT.set(use)
    try:
        yield use
    finally:
        _CURRENT.reset(token)


def items_of(child: np.ndarray, parent: np.ndarray, idx: np.ndarray) -> None:
    """Declare ``child`` to be ``parent[:, idx]`` (a reduced set's tensor: ``mix``'s leave-one-out
    sets and random drops), for the audit sharing now: what is computed item by item
    (``all_any``, hence the robust masks) is then read from the parent's instead of scanning
    the child's tensor again (~1 s a set at 1,000 x 30,000 x 26)."""
    cache = _CURRENT.get()
    if cache is not None and not child.flags.writeable and not parent.flags.writeable:
        cache.link(child, parent, np.asarray(idx))


def released(C: np.ndarray) -> None:
    """``DerivedCache.release`` in the audit sharing now (nothing outside one)."""
    cache = _CURRENT.get()
    if cache is not None:
        cache.release(C)


def derived(C: np.ndarray, name: str, compute: Callable[[], Any]) -> Any:
    """``compute()``, once per read-only array ``C`` while an audit shares (``sharing``); a
    writeable array could change, so it is computed every time, as is anything outside one.

    The audit hands the checks read-only views (``scopes.scope_records``). The band,
    the pairs, compression, the robust subset, the identified order, the flip predictor
    and the pair evidence all start from the same robust masks (~0.3 s each on a 1,000
    x 30,000 x 26 grid), and the pooled brittleness needs each benchmark's parts, which
    that benchmark's scope computes too. When the memory itself is read-only (records
    as the readers load them), views are matched by the memory they show (owner,
    start, shape, strides, dtype), so two views of one benchmark's slice share;
    otherwise (the owner could still be written through) only the same view object
    does. Cached arrays are made read-only, so a caller cannot alter them.
    """
    cache = _CURRENT.get()
    if cache is None or C.flags.writeable:
        return compute()
    return cache.get(C, name, compute)


def summed_over_items(
    C: np.ndarray,
    name: str,
    compute: Callable[[np.ndarray], np.ndarray],
    parts: Sequence[np.ndarray] | None = None,
    dtype: Any = None,
) -> np.ndarray:
    """``compute(C)`` for a count that is a sum over items (pair counts over items, ...), once
    per read-only array (``derived``).

    ``parts``: views of ``C``'s items that partition them (the pooled scope's benchmarks,
    ``scopes.scope_records``). The pooled count is then the sum of each part's, and each
    part's is the one its benchmark's scope computes, so the items are counted once per
    process instead of twice (the M x M products of the identified and harness-averaged
    orders: half their cost in a serial audit). Integer counts: the sum is exact, cast to
    ``dtype`` (what ``compute(C)`` would give; default the first part's)."""
    if not parts or len(parts) < 2 or sum(P.shape[1] for P in parts) != C.shape[1]:
        return derived(C, name, lambda: compute(C))
    values = [derived(P, name, lambda P=P: compute(P)) for P in parts]
    total = np.sum([v.astype(np.int64) for v in values], axis=0)
    out = total.astype(dtype or values[0].dtype)
    out.flags.writeable = False
    return out


def accuracy(C: np.ndarray) -> np.ndarray:
    """``acc[m, k] = mean_i C[m, i, k]`` (models x configs)."""
    return correct_counts(C) / C.shape[1]


def correct_counts(C: np.ndarray, parts: Sequence[np.ndarray] | None = None) -> np.ndarray:
    """Number of items right per model and config (integers, for exact item counts).

    ``parts``: views that partition C's items (``Scope.parts``): the counts are the sum of
    theirs, which their benchmarks' scopes count anyway (the pooled scope and ``mix``'s
    leave-one-out sets then count no item twice)."""
    if C.dtype.kind == "f":  # graded outcomes: sums of scores, rounded so equal sums tie exactly
        return derived(C, "counts", lambda: graded_sum(C, axis=1))
    if C.dtype != bool or C.size == 0:
        return C.sum(axis=1, dtype=np.int64)
    if parts and len(parts) >= 2 and sum(P.shape[1] for P in parts) == C.shape[1]:
        return derived(C, "counts", lambda: np.sum([correct_counts(P) for P in parts], axis=0, dtype=np.int64))
    # einsum over bytes: ~1.7x faster than sum(axis=1) on a 1,000 x 30,000 x 26 grid
    return derived(C, "counts", lambda: np.einsum("mik->mk", C.view(np.uint8), dtype=np.int64))


BLOCK_CELLS = 1 << 20  # (model, item) cells per block of the config scans


def right_counts(C: np.ndarray) -> np.ndarray:
    """``R[m, i]`` = configurations under which model ``m`` gets item ``i`` right (uint8 up
    to 255 configs), once per read-only array (``derived``); a reduced set's (``items_of``)
    are its parent's columns, not a new sum over its tensor (the harness-averaged order and
    the variance parts both start from them)."""

    def compute() -> np.ndarray:
        cache = _CURRENT.get()
        src = cache.source_of(C) if cache is not None else None
        if src is not None:
            parent, idx = src
            # in C order, as the sum gives it: indexing the item axis returns Fortran order, and
            # float reductions along a row of it (the variance parts) round differently
            return np.ascontiguousarray(right_counts(parent)[:, idx])
        if C.dtype.kind == "f":
            return graded_sum(C, axis=2)
        return C.sum(axis=2, dtype=np.int32 if C.shape[2] > 255 else np.uint8)

    return derived(C, "right_counts", compute)


GRADED_DECIMALS = 9


def graded_sum(S: np.ndarray, axis: int) -> np.ndarray:
    """A sum of graded outcomes (docs/audits.md, "Graded outcomes"), rounded to 9 decimals:
    1/9 + 2/9 and 3/9 are then one number, so ties between models are exact as with counts."""
    return np.round(S.sum(axis=axis, dtype=np.float64), GRADED_DECIMALS)


def as_words(mask: np.ndarray) -> np.ndarray:
    """A boolean models x items mask as bits, one row per model in uint64 words (items
    rounded up to 64, the padding bits 0): counts over items (``pairs.robust_pair_counts``,
    ``counts_within``) are then a few word-wise ANDs and popcounts, 1/64 of the element
    operations (~40x faster at 1,000 x 30,000)."""
    b = np.packbits(mask, axis=1)
    pad = (-b.shape[1]) % 8
    if pad:
        b = np.concatenate([b, np.zeros((b.shape[0], pad), dtype=np.uint8)], axis=1)
    return np.ascontiguousarray(b).view(np.uint64)


def config_words(C: np.ndarray) -> np.ndarray:
    """``C``'s bits per (model, config) over its items, in uint64 words (models x configs x
    words; items rounded up to 64, padding bits 0), once per read-only array (``derived``):
    a count over any subset of items is then a popcount of ANDed words (``counts_within``)."""

    def compute() -> np.ndarray:
        M, N, K = C.shape
        W = -(-N // 64)
        out = np.empty((M, K, W), dtype=np.uint64)
        step = max(1, BLOCK_CELLS // max(1, N))
        for lo in range(0, M, step):
            hi = min(M, lo + step)
            # packed along a contiguous axis: along the strided item axis it is ~5x slower
            rows = np.ascontiguousarray(C[lo:hi].transpose(0, 2, 1)).reshape((hi - lo) * K, N)
            out[lo:hi] = as_words(rows).reshape(hi - lo, K, W)
        return out

    return derived(C, "config_words", compute)


def counts_within(C: np.ndarray, within: np.ndarray) -> np.ndarray:
    """``correct_counts`` over the items the boolean ``within`` marks (a random drop's kept
    items, ``checks.drop_scope``), from ``config_words``: exact integers without copying the
    marked items' cells (~0.25 s a drop at 1,000 x 30,000 x 26 copied and summed; ~0.03 s
    as words, once the words are made, ~0.5 s)."""
    if C.dtype != bool or C.size == 0:
        return C[:, within].sum(axis=1, dtype=np.int64)
    words = config_words(C)
    bits = as_words(np.asarray(within, dtype=bool)[None, :])[0]
    M, K = C.shape[0], C.shape[2]
    out = np.empty((M, K), dtype=np.int64)
    step = max(1, BLOCK_CELLS // max(1, 8 * words.shape[2]))  # the ANDed words stay cache-sized
    for lo in range(0, M, step):
        hi = min(M, lo + step)
        out[lo:hi] = np.bitwise_count(words[lo:hi] & bits).sum(axis=2, dtype=np.int64)
    return out


def all_any(C: np.ndarray, configs: list[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(right under every config, right under some config) of ``configs`` (default all),
    models x items (``all_any_groups`` for one group; the default one is computed once
    per read-only array)."""
    if configs is None:

        def compute() -> tuple[np.ndarray, np.ndarray]:
            cache = _CURRENT.get()
            src = cache.source_of(C) if cache is not None else None
            if src is not None:  # a reduced set: its items' masks are the parent's
                parent, idx = src
                right, some = all_any(parent)
                return right[:, idx], some[:, idx]
            return all_any_groups(C, [list(range(C.shape[2]))])[0]

        return derived(C, "all_any", compute)
    return all_any_groups(C, [list(configs)])[0]


def all_right_groups(C: np.ndarray, groups: list[list[int]]) -> list[np.ndarray]:
    """Right under every config of each group (models x items), in one pass; the group of
    all configs comes from the shared ``all_any(C)``."""
    full = sorted(range(C.shape[2]))
    rest = [g for g in groups if sorted(g) != full]
    found = iter(all_any_groups(C, rest, want_any=False)) if rest else iter(())
    return [all_any(C)[0] if sorted(g) == full else next(found)[0] for g in groups]


def all_any_groups(
    C: np.ndarray, groups: list[list[int]], *, want_any: bool = True
) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """``all_any`` for several groups of configs in one pass over the tensor (``want_any=False``:
    only "right under all", the second mask None).

    A model's answers to one item under its K configs are K adjacent bytes (bool, 0 or
    1), so for K >= 8 they are read as a few overlapping 8-byte words: "right under all"
    is every byte of the words equal to 1 under the group's byte mask, "some" is any
    byte nonzero under it. Blocks of models, each word read once for every group: ~4.5x
    faster than one strided pass per config, and the same masks.
    """
    M, N, K = C.shape
    if any(not g for g in groups):
        raise ValueError("all_any needs at least one configuration per group")
    if C.dtype != bool or K < 8 or C.strides[2] != 1 or C.size == 0:
        out: list[tuple[np.ndarray, np.ndarray | None]] = []
        for ks in groups:
            all_right = np.array(C[:, :, ks[0]], dtype=bool)
            any_right = all_right.copy() if want_any else None
            for k in ks[1:]:
                all_right &= C[:, :, k]
                if any_right is not None:
                    any_right |= C[:, :, k]
            out.append((all_right, any_right))
        return out
    offsets = list(range(0, K - 7, 8))
    if offsets[-1] != K - 8:
        offsets.append(K - 8)  # the last word overlaps the one before
    masks = []  # per group: (word index, byte mask of its configs in that word, in memory order)
    for ks in groups:
        chosen = np.zeros(K, dtype=bool)
        chosen[ks] = True
        masks.append(
            [
                (j, m)
                for j, o in enumerate(offsets)
                if (m := np.frombuffer(chosen[o : o + 8].astype(np.uint8).tobytes(), dtype=np.uint64)[0])
            ]
        )
    out = [(np.empty((M, N), dtype=bool), np.empty((M, N), dtype=bool) if want_any else None) for _ in groups]
    u = C.view(np.uint8)
    step = max(1, BLOCK_CELLS // max(N, 1))
    for lo in range(0, M, step):
        blk = u[lo : lo + step]
        words = [np.array(blk[:, :, o : o + 8].view(np.uint64)[:, :, 0]) for o in offsets]  # aligned copies
        for (all_right, any_right), group in zip(out, masks):
            acc_all = acc_any = None
            for j, m in group:
                w = words[j] & m
                if acc_all is None:
                    acc_all, acc_any = w == m, (w != 0) if want_any else None
                else:
                    acc_all &= w == m
                    if want_any:
                        acc_any |= w != 0
            all_right[lo : lo + step] = acc_all
            if any_right is not None:
                any_right[lo : lo + step] = acc_any
    return out


def robust_masks(C: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(robust-correct, robust-wrong, config-fragile) masks, models x items (section 3.4)."""

    def masks() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        all_right, any_right = all_any(C)
        return all_right, ~any_right, any_right & ~all_right

    return derived(C, "robust_masks", masks)


def band(C: np.ndarray, ref: int, counts: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Table 1 / Figure 1: reference, min, max, spread, robust, optimistic, config-lucky.

    ``config_lucky = #{i: C[m,i,r]=1 and i fragile for m} / #{i: C[m,i,r]=1}``
    (NaN where the model gets no item right under the reference). ``counts``: C's
    ``correct_counts`` where the caller has them (a scope sums its benchmarks' parts).
    """
    acc = accuracy(C) if counts is None else counts / C.shape[1]
    rc, _, fragile = robust_masks(C)
    any_right = all_any(C)[1]
    ref_right = C[:, :, ref]
    n_ref = ref_right.sum(axis=1)
    lucky = (ref_right & fragile).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        config_lucky = np.where(n_ref > 0, lucky / np.maximum(n_ref, 1), np.nan)
    lo, hi = acc.min(axis=1), acc.max(axis=1)
    return {
        "reference": acc[:, ref],
        "min": lo,
        "max": hi,
        "spread": hi - lo,
        "robust": rc.mean(axis=1),
        "optimistic": any_right.mean(axis=1),
        "config_lucky": config_lucky,
    }


def leaderboard_order(reference: np.ndarray, models: tuple[str, ...] | list[str]) -> np.ndarray:
    """Models by reference accuracy descending; ties broken by name ascending."""
    return np.array(sorted(range(len(models)), key=lambda m: (-reference[m], models[m])), dtype=np.intp)


def competition_rank(acc: np.ndarray) -> np.ndarray:
    """``rank = 1 + #models with strictly higher acc``, per column (models x configs)."""
    if acc.ndim == 1:
        return competition_rank(acc[:, None])[:, 0]
    return 1 + (acc[None, :, :] > acc[:, None, :]).sum(axis=1)
