"""The harness-averaged order: every pair of models compared item by item on their
accuracy averaged over the grid (docs/spec/AUDITS.md v3, "The harness-averaged order";
docs/audits.md).

``a_i = mean_k C[a,i,k]``; for two models ``above = #{i: a_i > b_i}``, ``below =
#{i: a_i < b_i}``; the exact two-sided sign test, Holm over all pairs at ``alpha``;
edges, tiers and winner as for the identified order (``identified.order_from_counts``).
It answers "averaged over the grid, is a better, beyond item sampling?", where the
identified order answers "is a better on the items both answer stably?" (the paper's
section 4.2). Each pair also carries ``configs_won = #{k: acc[a,k] > acc[b,k]}``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .identified import IdentifiedOrder, count_dtype, order_from_counts, robust_only_of
from .per_model import correct_counts, right_counts, summed_over_items

METHOD = "holm-sign-test-averaged"


def above_counts(R: np.ndarray, levels: int) -> np.ndarray:
    """``above[a, b] = #{i: R[a, i] > R[b, i]}`` for integer levels ``0..levels``.

    ``[x > y] = sum_{v=1..levels} [x = v][y < v]``: one matrix product per level (the
    strictly lower-triangular matrix of ones has rank ``levels``, so no fewer products
    do it exactly). float32 holds the counts exactly below 2**24 items."""
    M, N = R.shape
    dtype = np.float32 if N < 2**24 else np.float64
    out = np.zeros((M, M), dtype=dtype)
    below = R < 1  # [R < v], grown level by level
    for v in range(1, levels + 1):
        at = R == v
        used = at.any(axis=0)  # items some model has at level v: the others add nothing
        if used.any() and below.any():
            if 4 * int(used.sum()) < 3 * N:  # items robust for every model drop out of levels 1..K-1
                out += at[:, used].astype(dtype) @ below[:, used].T.astype(dtype)
            else:
                out += at.astype(dtype) @ below.T.astype(dtype)
        below |= at
    return out.astype(np.int32 if N < 2**31 else np.int64)


def configs_won(C: np.ndarray, pairs: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """``won[a, b] = #{k: acc[a, k] > acc[b, k]}`` (item counts: exact), M x M; with ``pairs``
    ``(a, b)`` (index arrays), only those pairs' (the report reads the adjacent ones: the
    M x M x K comparison took 0.6 s on a 4,278-model board)."""
    counts = correct_counts(C)  # M x K
    if pairs is not None:
        a, b = (np.asarray(x, dtype=np.intp) for x in pairs)
        return (counts[a] > counts[b]).sum(axis=1)
    return (counts[:, None, :] > counts[None, :, :]).sum(axis=2)


def above_of(C: np.ndarray) -> np.ndarray:
    """``above_counts`` of a correctness tensor's right counts; on graded outcomes (float,
    docs/audits.md "Graded outcomes") ``#{i: R[a, i] > R[b, i]}`` of their sums over configs."""
    if C.dtype.kind == "f":
        R = right_counts(C)
        out = np.empty((R.shape[0], R.shape[0]), dtype=np.int64)
        for a in range(R.shape[0]):
            out[a] = (R[a][None, :] > R).sum(axis=1)
        return out
    return above_counts(right_counts(C), C.shape[2])


def averaged_order(
    C: np.ndarray,
    *,
    models: Sequence[str],
    alpha: float = 0.05,
    display: np.ndarray | None = None,
    parts: Sequence[np.ndarray] | None = None,
) -> IdentifiedOrder:
    """The harness-averaged order of one scope (models x items x configs).

    ``parts``: views of C's items that partition them: ``above`` is a sum over items, so the
    pooled scope's is the sum of its benchmarks' (``per_model.summed_over_items``)."""
    N = C.shape[1]
    one_config = C.shape[2] == 1 and C.dtype == bool
    if one_config:
        # one configuration: an item's averaged score is its one bit, so ``above`` is the
        # identified order's robust-only count, and the tests read the counts it computed
        above = summed_over_items(C, "robust_only", robust_only_of, parts, count_dtype(N))
    else:
        above = summed_over_items(C, "above", above_of, parts, np.int32 if N < 2**31 else np.int64)
    return order_from_counts(
        above,
        None,
        C.shape[1],
        models=models,
        alpha=alpha,
        display=display,
        basis="harness-averaged items",
        shared=one_config,
    )


__all__ = ["METHOD", "above_counts", "above_of", "averaged_order", "configs_won", "right_counts"]
