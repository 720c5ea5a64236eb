"""The order the data identifies: every pair of models compared on its jointly robust
items (docs/spec/AUDITS.md v2, "The identified order"; docs/audits.md). The paper's section 6
asks for "an aggregation rule that returns a configuration-robust winner"; this is
the order such a rule can defend.

For models ``a``, ``b``: ``J_ab`` = items robust (correct or wrong) for both,
``a_only`` = items of ``J_ab`` only ``a`` gets right. Since an item of ``J_ab`` that
``b`` does not get right is robust-wrong for ``b``, ``a_only = (R @ W.T)[a, b]`` with
``R`` / ``W`` the robust-correct / robust-wrong indicators (models x items): one
matrix product gives every pair. Exact two-sided sign test on ``a_only`` vs
``b_only``, Holm step-down over all ``M(M-1)/2`` pairs at family-wise ``alpha``.

A pair's p-value depends only on its cell ``(a_only, b_only)``, and with ``N`` items
there are at most ``(N+1)^2`` cells: a 4,278-model leaderboard on 102 items has 9.1M
pairs but about a thousand distinct cells. So each distinct cell is tested once, Holm
runs on the distinct p-values with their multiplicities, and the M x M results are
read back from per-cell tables (``tested_by_cell``); the values are the ones the
per-pair computation (``tested_by_pair``) gives, bit for bit (tests/metrics/test_identified.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .exact import exact_array
from .per_model import derived, robust_masks, summed_over_items

METHOD = "holm-sign-test"


@dataclass(frozen=True)
class IdentifiedOrder:
    """The identified partial order of one scope (indices into the scope's models)."""

    alpha: float
    only: np.ndarray  # M x M ints: only[a, b] = items of J_ab only a gets right
    p_holm: PairValues  # M x M Holm-adjusted sign-test p-values (1 on the diagonal)
    above: np.ndarray  # M x M bool: above[a, b] = edge a -> b (a identified better)
    edges: np.ndarray  # E x 2 (above, below), sorted by above then below
    tiers: list[list[int]]  # topological layers, each in the given display order
    robust_winner: int | None
    reason: str | None  # why there is no robust winner (None when there is one)
    cycle: bool  # the edges contain a directed cycle (the last tier holds it)
    cells: Any = None  # ``pair_cells`` of ``only`` when tested by cell (the board reads them too)


def robust_only_counts(rc: np.ndarray, rw: np.ndarray) -> np.ndarray:
    """``only[a, b]`` = items robust-correct for ``a`` and robust-wrong for ``b``
    (= items of J_ab only ``a`` gets right), as one matrix product over items.

    float32 holds every count exactly below 2**24 items; float64 beyond that. The
    products are whole numbers, so the cast is exact; the counts are at most the items,
    so the smallest integer type that holds the item count is enough.
    """
    N = rc.shape[1]
    dtype = np.float32 if N < 2**24 else np.float64
    prod = rc.astype(dtype) @ rw.astype(dtype).T
    return prod.astype(count_dtype(N))


def count_dtype(n_items: int) -> type:
    """The smallest integer type that holds a count of up to ``n_items`` items."""
    return np.int16 if n_items < 2**15 else np.int32 if n_items < 2**31 else np.int64


#: a sign-test p-value whose Hoeffding bound is below this is written as 0: it sits far
#: below any Holm threshold (alpha / number of pairs is above 1e-13 for a million models)
NEGLIGIBLE_P = 1e-40
_LN_WINDOW = 140.0  # terms below exp(-140) ~ 1e-61 of the tail's scale are left out


TABLE_CELLS = 1 << 22


def _log_factorials(nmax: int) -> np.ndarray:
    """log(x!) for x = 0..nmax in extended precision (x87 long double where the platform has it).

    A read-only prefix of one table grown geometrically: ``items_needed`` asks for it once
    per candidate size, thousands of times an audit. The values are a cumulative sum, so a
    prefix of a longer table holds the same bits as a table computed to ``nmax``."""
    table = _LOG_FACTORIALS[0]
    if table.size <= nmax:
        n = max(nmax, 2 * (table.size - 1), 1024)
        table = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, n + 1, dtype=np.longdouble)))])
        table.setflags(write=False)
        _LOG_FACTORIALS[0] = table
    return table[: nmax + 1]


#: the longest log-factorial table computed so far (a pure function's values: a cache, not state)
_LOG_FACTORIALS = [np.zeros(1, dtype=np.longdouble)]


def _cdf_table(nmax: int) -> np.ndarray:
    """``T[n, k] = P(Bin(n, 1/2) <= k)`` for ``n <= nmax``, ``k <= n / 2`` (other cells 1)."""
    lg = _log_factorials(nmax)
    log2 = np.log(np.longdouble(2))
    table = np.ones((nmax + 1, nmax // 2 + 1))
    for nn in range(1, nmax + 1):
        j = np.arange(nn // 2 + 1)
        table[nn, : j.size] = np.minimum(
            np.cumsum(np.exp((lg[nn] - lg[j] - lg[nn - j] - nn * log2).astype(np.float64))), 1.0
        )
    return table


def binom_half_cdf(k: np.ndarray, n: np.ndarray, *, pairs: int | None = None) -> np.ndarray:
    """``P(X <= k)`` for ``X ~ Bin(n, 1/2)``, elementwise, for ``0 <= k <= n / 2``.

    Many pairs over few items (the table fits in ``TABLE_CELLS``): one cumulative table
    for every ``n``, read once per pair. ``pairs`` is how many pairs the values stand
    for when they are the distinct cells of a larger family (default: their number):
    the method is chosen by it, so a cell gets the same bits whether it is computed
    once or once per pair. Otherwise exact term sums, one cumulative sum per
    distinct ``n`` over ``j`` in a window below ``k``. ``log C(n, j)`` comes from a
    long-double log-factorial table: relative error about 1e-13 at n = 10,000, against
    scipy's ``bdtr`` 5e-12. Where Hoeffding's bound
    ``exp(-2 (n/2 - k)^2 / n)`` is below ``NEGLIGIBLE_P / 2`` the result is 0; the
    window starts where Hoeffding puts the rest of the tail below ``exp(-140)``.
    """
    k = np.asarray(k, dtype=np.int64)
    n = np.asarray(n, dtype=np.int64)
    out = np.ones(k.shape)
    if k.size == 0:
        return out
    if np.any(2 * k > n) or np.any(k < 0):
        raise ValueError("binom_half_cdf needs 0 <= k <= n / 2")
    nmax = int(n.max())
    many = k.size if pairs is None else pairs
    if (nmax + 1) * (nmax // 2 + 1) <= TABLE_CELLS and many > TABLE_CELLS // 8:
        return _cdf_table(nmax)[n, k]  # many pairs, few items: one lookup each
    dist = n / 2.0 - k
    with np.errstate(divide="ignore", invalid="ignore"):
        log_bound = np.where(n > 0, -2.0 * dist * dist / np.maximum(n, 1), 0.0)
    negligible = log_bound < np.log(NEGLIGIBLE_P / 2)
    out[negligible] = 0.0
    live = np.flatnonzero(~negligible & (n > 0))
    if live.size == 0:
        return out
    kf, nf = k[live], n[live]
    lg = _log_factorials(int(nf.max()))
    log2 = np.log(np.longdouble(2))
    order = np.lexsort((kf, nf))
    ks, ns = kf[order], nf[order]
    res = _window_sums(ks, ns, lg, log2)
    vals = np.empty(kf.size)
    vals[order] = res
    out[live] = np.minimum(vals, 1.0)
    return out


#: (distinct n x window) terms summed at once by ``_window_sums``
_WINDOW_CELLS = 1 << 20


def _window_sums(ks: np.ndarray, ns: np.ndarray, lg: np.ndarray, log2: np.longdouble) -> np.ndarray:
    """``binom_half_cdf``'s exact sums for ``ks``, ``ns`` sorted by (n, k): per distinct n one
    cumulative sum of the pmf from the window's start to its largest k, the distinct n's as
    rows of one padded block (a 1,000-model board has thousands of distinct n per call; a
    Python loop over them was most of a mix drop's sign tests). Each row is summed left to
    right from its own start, as a one-dimensional cumsum would: the same bits."""
    out = np.empty(ks.size)
    starts = np.flatnonzero(np.r_[True, ns[1:] != ns[:-1]])
    ends = np.r_[starts[1:], ns.size]
    n_d = ns[starts]
    lo = np.floor(n_d / 2.0 - np.sqrt((_LN_WINDOW - np.log(NEGLIGIBLE_P)) * n_d / 2.0)).astype(np.int64)
    lo = np.minimum(np.maximum(lo, 0), ks[starts])
    width = ks[ends - 1] - lo + 1
    group = np.repeat(np.arange(n_d.size), ends - starts)
    a = 0
    while a < n_d.size:
        # rows [a, b): as many as fit in _WINDOW_CELLS at the widest row's width (at least one)
        wmax = np.maximum.accumulate(width[a:])
        b = a + max(1, int(np.searchsorted(wmax * np.arange(1, wmax.size + 1), _WINDOW_CELLS, side="right")))
        w = int(wmax[b - a - 1])
        col = np.arange(w)
        j = lo[a:b, None] + np.minimum(col[None, :], width[a:b, None] - 1)  # past a row's end: its last j
        nn = n_d[a:b, None]
        logpmf = (lg[nn] - lg[j] - lg[nn - j] - nn * log2).astype(np.float64)
        sums = np.cumsum(np.exp(logpmf), axis=1)
        at = slice(starts[a], ends[b - 1])
        out[at] = sums[group[at] - a, ks[at] - lo[group[at]]]
        a = b
    return out


def sign_test_p(a_only: np.ndarray, b_only: np.ndarray, *, pairs: int | None = None) -> np.ndarray:
    """Exact two-sided sign test: ``min(1, 2 * BinomCDF(min(a, b); a + b, 1/2))``
    (1 when ``a + b = 0``), elementwise. ``pairs``: see ``binom_half_cdf``."""
    a = np.asarray(a_only, dtype=np.int64)
    b = np.asarray(b_only, dtype=np.int64)
    n = a + b
    p = 2.0 * binom_half_cdf(np.minimum(a, b), n, pairs=pairs)
    return np.where(n > 0, np.minimum(p, 1.0), 1.0)


def holm_adjust(p: np.ndarray) -> np.ndarray:
    """Holm step-down adjusted p-values: ``max_{i <= j} min(1, (m - i + 1) p_(i))`` in
    sorted order, mapped back. ``adjusted <= alpha`` is Holm's rejection at ``alpha``.

    p = 0 sorts first and stays 0, p = 1 sorts last and stays 1, so only the values in
    between are sorted (a large leaderboard has millions of pairs, most at 0 or 1). Tied
    p-values get equal adjusted values whatever their order."""
    p = np.asarray(p, dtype=float)
    m = p.size
    out = np.where(p >= 1.0, 1.0, 0.0)
    mid = np.flatnonzero((p > 0.0) & (p < 1.0))
    if mid.size:
        zeros = int((p <= 0.0).sum())
        idx = mid[np.argsort(p[mid], kind="stable")]
        stepped = np.minimum(1.0, (m - zeros - np.arange(idx.size)) * p[idx])
        out[idx] = np.maximum.accumulate(stepped)
    return out


def holm_adjust_distinct(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``holm_adjust`` of a family given as its distinct p-values (sorted ascending, no
    repeats) with their multiplicities: the adjusted value of each distinct value.

    Within a run of equal p-values the first step is the largest, so each value's
    adjusted p is the running max of ``min(1, (m - zeros - start) * p)`` with ``start``
    the number of smaller values in between 0 and 1: the same products, hence the same
    bits, as ``holm_adjust`` over the expanded family."""
    values = np.asarray(values, dtype=float)
    counts = np.asarray(counts, dtype=np.int64)
    m = int(counts.sum())
    out = np.where(values >= 1.0, 1.0, 0.0)
    mid = np.flatnonzero((values > 0.0) & (values < 1.0))
    if mid.size:
        zeros = int(counts[values <= 0.0].sum())
        c = counts[mid]
        start = np.cumsum(c) - c
        out[mid] = np.maximum.accumulate(np.minimum(1.0, (m - zeros - start) * values[mid]))
    return out


class PairValues:
    """A value per ordered pair of models, read like an M x M array (``p[a, b]``,
    ``p[rows, cols]``, ``np.asarray(p)``): ``table[index[a, b]]``, so a few thousand
    cells stand for millions of pairs until a full M x M array is asked for; without
    ``index``, ``table`` is that array."""

    def __init__(self, table: np.ndarray, index: np.ndarray | None = None):
        self.table, self.index = table, index

    @property
    def shape(self) -> tuple[int, ...]:
        return self.table.shape if self.index is None else self.index.shape

    def __getitem__(self, key: Any) -> Any:
        return self.table[key] if self.index is None else self.table[self.index[key]]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        full = self.table if self.index is None else self.table[self.index]
        return full if dtype is None else full.astype(dtype, copy=False)


#: most cells ``(N + 1)^2`` tested cell by cell (up to 2,047 items); beyond it the cells
#: are too many to count in a table, and each pair is tested on its own
CELL_TABLE_MAX = 1 << 22
#: codes counted per ``bincount`` call (it copies its input to 64-bit integers)
COUNT_CHUNK = 1 << 20


def transposed(a: np.ndarray, block: int = 128) -> np.ndarray:
    """``np.ascontiguousarray(a.T)`` of a 2-D array, copied in square blocks that stay in the
    CPU cache (~4x faster on a 4,278-model board's M x M counts)."""
    rows, cols = a.shape
    out = np.empty((cols, rows), dtype=a.dtype)
    for i in range(0, rows, block):
        for j in range(0, cols, block):
            out[j : j + block, i : i + block] = a[i : i + block, j : j + block].T
    return out


def pair_cells(
    only: np.ndarray, n_items: int, only_t: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(code, counts, x, y, p)`` of the pair counts ``only``: ``code[a, b] = only[a, b] *
    (N + 1) + only[b, a]`` (int16 up to 180 items), ``counts`` how many ordered pairs sit
    in each cell present, ``x, y`` that cell's (a_only, b_only) and ``p`` its exact sign test
    (``pairs`` = the family's size, so the p-value has the per-pair bits). The order's Holm
    (``tested_by_cell``) and the board's Benjamini-Hochberg (``board.bh_edges``) read the same
    cells: the order carries them (``IdentifiedOrder.cells``) as long as it lives."""
    M = only.shape[0]
    width = n_items + 1
    cells_n = width * width
    code = np.multiply(only, width, dtype=np.int16 if cells_n <= 2**15 else np.int32)
    code += transposed(only) if only_t is None else only_t
    flat = code.reshape(-1)
    ordered = np.zeros(cells_n, dtype=np.int64)
    for start in range(0, flat.size, COUNT_CHUNK):
        ordered += np.bincount(flat[start : start + COUNT_CHUNK], minlength=cells_n)
    ordered[0] -= M  # the diagonal: only[a, a] = 0
    cells = np.flatnonzero(ordered)
    x, y = np.divmod(cells, width)  # a_only, b_only of the pairs in each cell
    p = sign_test_p(x, y, pairs=M * (M - 1) // 2)
    return code, ordered[cells], x, y, p


def tested_by_pair(only: np.ndarray, alpha: float) -> tuple[PairValues, np.ndarray]:
    """``(p_holm, above)`` (both M x M) for the pair counts ``only``, one pair at a time (the
    definition): the exact sign test of every pair, Holm over all ``M(M-1)/2`` of them, an edge
    where the adjusted p is at most ``alpha``."""
    M = only.shape[0]
    iu, ju = np.triu_indices(M, k=1)
    a_only, b_only = only[iu, ju], only[ju, iu]
    adj = holm_adjust(sign_test_p(a_only, b_only))
    reject = exact_array(adj) <= exact_array(alpha)
    p_holm = np.ones((M, M))
    p_holm[iu, ju] = adj
    p_holm[ju, iu] = adj
    above = np.zeros((M, M), dtype=bool)
    up = reject & (a_only > b_only)
    down = reject & (b_only > a_only)
    above[iu[up], ju[up]] = True
    above[ju[down], iu[down]] = True
    return PairValues(p_holm), above


def tested_by_cell(
    only: np.ndarray, n_items: int, alpha: float, only_t: np.ndarray | None = None, cells: Any = None
) -> tuple[PairValues, np.ndarray]:
    """``tested_by_pair``'s results (the same bits), one cell ``(a_only, b_only)`` at a time: ``code[a, b] = only[a, b] *
    (N + 1) + only[b, a]`` (int16 up to 180 items), ``bincount`` gives how many ordered
    pairs sit in each cell; each cell present is tested once (``pairs`` = the family's
    size, so the p-value has the per-pair bits), Holm runs on the distinct p-values with
    their multiplicities (a pair and its mirror are two ordered pairs with one p-value:
    halved), and the results are per-cell tables read through ``code``. ``cells``: the
    counts' ``pair_cells`` when at hand."""
    width = n_items + 1
    code, ordered, x, y, p = pair_cells(only, n_items, only_t) if cells is None else cells
    values, which = np.unique(p, return_inverse=True)
    per_value = np.bincount(which, weights=ordered, minlength=values.size)
    adj = holm_adjust_distinct(values, np.rint(per_value).astype(np.int64) // 2)[which]
    reject = exact_array(adj) <= exact_array(alpha)
    cells = x * width + y
    p_table = np.ones(width * width)  # code 0 (the diagonal, or a pair with no item) has p = 1
    p_table[cells] = adj
    edge_table = np.zeros(width * width, dtype=bool)
    edge_table[cells] = reject & (x > y)
    return PairValues(p_table, code), edge_table[code]


def topological_tiers(above: np.ndarray, display: np.ndarray) -> tuple[list[list[int]], bool]:
    """Tier 1 = models with no edge into them; remove them and repeat.

    Vectorized Kahn layering (total work M^2). A directed cycle (possible in
    principle: each pair is tested on its own items) leaves no model without an
    incoming edge: the rest then form one last tier and ``cycle`` is True.
    ``display`` is the model order within a tier (positions, e.g. the reference order).
    """
    M = above.shape[0]
    pos = np.empty(M, dtype=np.intp)
    pos[np.asarray(display, dtype=np.intp)] = np.arange(M)
    indeg = above.sum(axis=0).astype(np.int64)
    remaining = np.ones(M, dtype=bool)
    tiers: list[list[int]] = []
    cycle = False
    while remaining.any():
        layer = remaining & (indeg == 0)
        if not layer.any():
            layer, cycle = remaining.copy(), True
        members = np.flatnonzero(layer)
        tiers.append(members[np.argsort(pos[members], kind="stable")].tolist())
        remaining &= ~layer
        indeg -= above[members].sum(axis=0)
    return tiers, cycle


def _names(ms: Sequence[int], models: Sequence[str], limit: int = 6) -> str:
    shown = [models[m] for m in ms[:limit]]
    more = f" and {len(ms) - limit} more" if len(ms) > limit else ""
    return ", ".join(shown) + more


def identified_from_masks(
    rc: np.ndarray, rw: np.ndarray, *, models: Sequence[str], alpha: float = 0.05, display: np.ndarray | None = None
) -> IdentifiedOrder:
    """The identified order from robust-correct / robust-wrong masks (models x items)."""
    only = robust_only_counts(rc, rw)
    return order_from_counts(only, None, rc.shape[1], models=models, alpha=alpha, display=display)


def order_from_counts(
    only: np.ndarray,
    only_t: np.ndarray | None,
    n_items: int,
    *,
    models: Sequence[str],
    alpha: float = 0.05,
    display: np.ndarray | None = None,
    basis: str = "robust items",
    shared: bool = False,
) -> IdentifiedOrder:
    """Sign tests, Holm, edges, tiers and winner from per-pair counts ``only[a, b]`` (items
    on which ``a`` beats ``b``; ``only_t`` = its transpose, C-contiguous, or None). ``basis`` names
    what the counts compare on, for the reasons ("robust items", "harness-averaged items").
    ``shared``: another order tests the same read-only counts in this audit (one
    configuration: the harness-averaged order's counts are the identified order's), so the
    tests are kept in the audit's cache (``derived``) and done once."""
    M = only.shape[0]
    display = np.arange(M) if display is None else np.asarray(display, dtype=np.intp)
    if shared:
        p_holm, above, edges, cells = derived(
            only, f"tested {n_items} {float(alpha)!r}", lambda: _tested(only, n_items, alpha, only_t)
        )
    else:  # the tests hold an (N + 1)^2 table: kept only where another order reads them
        p_holm, above, edges, cells = _tested(only, n_items, alpha, only_t)
    tiers, cycle = topological_tiers(above, display)
    out_deg = above.sum(axis=1)
    winners = np.flatnonzero(out_deg == M - 1)
    winner = int(winners[0]) if winners.size == 1 else None
    if winner is not None:
        reason = None
    elif cycle:
        reason = (
            f"the identified edges contain a cycle (each pair is tested on its own {basis}); "
            f"the last tier holds {_names(tiers[-1], models)}"
        )
    elif len(tiers[0]) > 1:
        reason = (
            f"no model is identified above every other: the top tier holds {len(tiers[0])} models the "
            f"{basis} do not separate ({_names(tiers[0], models)})"
        )
    else:
        top = tiers[0][0]
        missing = [m for m in display.tolist() if m != top and not above[top, m]]
        reason = f"{models[top]} heads the top tier but is not identified above {_names(missing, models)}"
    return IdentifiedOrder(
        alpha=float(alpha),
        only=only,
        p_holm=p_holm,
        above=above,
        edges=edges,
        tiers=tiers,
        robust_winner=winner,
        reason=reason,
        cycle=cycle,
        cells=cells,
    )


def _tested(
    only: np.ndarray, n_items: int, alpha: float, only_t: np.ndarray | None
) -> tuple[PairValues, np.ndarray, np.ndarray, Any]:
    """The pair tests (``tested_by_cell`` when the ``(N + 1)^2`` cells are few, else
    ``tested_by_pair``), the edges, row-major (already sorted), and the pair cells when the
    pairs were tested by cell (else None)."""
    if (n_items + 1) ** 2 <= CELL_TABLE_MAX:
        cells = pair_cells(only, n_items, only_t)
        p_holm, above = tested_by_cell(only, n_items, alpha, cells=cells)
    else:
        cells = None
        p_holm, above = tested_by_pair(only, alpha)
    return p_holm, above, np.argwhere(above), cells


def robust_only_of(C: np.ndarray) -> np.ndarray:
    """``robust_only_counts`` of a correctness tensor's robust masks."""
    rc, rw, _ = robust_masks(C)
    return robust_only_counts(rc, rw)


def identified_order(
    C: np.ndarray,
    *,
    models: Sequence[str],
    alpha: float = 0.05,
    display: np.ndarray | None = None,
    parts: Sequence[np.ndarray] | None = None,
) -> IdentifiedOrder:
    """The identified order of one scope from its correctness tensor (models x items x configs).

    ``display``: the order of models within a tier (the printed reference order).
    ``parts``: views of C's items that partition them (``per_model.summed_over_items``): the
    pooled scope's counts as the sum of its benchmarks'. ``only[b, a]`` is ``only[a, b]``
    with the roles swapped, so one product gives both directions."""
    N = C.shape[1]
    only = summed_over_items(C, "robust_only", robust_only_of, parts, count_dtype(N))
    return order_from_counts(
        only, None, N, models=models, alpha=alpha, display=display, shared=C.shape[2] == 1 and C.dtype == bool
    )


#: edges listed in the report; beyond it the list is cut (a 4,278-model leaderboard has
#: ~2M edges: a 290 MB report) and ``edges_total`` / ``edges_truncated`` say so
EDGES_LISTED = 10_000


def identified_report(
    io: IdentifiedOrder, models: Sequence[str], edges_listed: int = EDGES_LISTED, method: str = METHOD
) -> dict[str, Any]:
    """The report's ``identified`` entry (names; edges sorted by name, the first
    ``edges_listed`` of them)."""
    names = np.array(list(models), dtype=object)
    e = io.edges
    if e.size:  # rows in name order until edges_listed are in, columns in name order
        by_name = np.argsort(names.astype(str), kind="stable")
        rows = int(np.searchsorted(np.cumsum(io.above.sum(axis=1)[by_name]), edges_listed)) + 1
        r, c = np.nonzero(io.above[by_name[:rows]][:, by_name])
        e = np.stack([by_name[r], by_name[c]], axis=1)[:edges_listed]
    return {
        "alpha": io.alpha,
        "method": method,
        "edges": names[e].tolist() if e.size else [],
        "edges_total": int(io.edges.shape[0]),
        "edges_truncated": bool(io.edges.shape[0] > edges_listed),
        "tiers": [[models[m] for m in tier] for tier in io.tiers],
        "robust_winner": None if io.robust_winner is None else models[io.robust_winner],
        "reason": io.reason,
        "cycle": io.cycle,
    }
