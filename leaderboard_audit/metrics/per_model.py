"""Per-model quantities: the paper's Table 1 and Figure 1 (section 4.1)."""

from __future__ import annotations

import numpy as np


def accuracy(C: np.ndarray) -> np.ndarray:
    """``acc[m, k] = mean_i C[m, i, k]`` (models x configs)."""
    return C.sum(axis=1, dtype=np.int64) / C.shape[1]


def correct_counts(C: np.ndarray) -> np.ndarray:
    """Number of items right per model and config (integers, for exact item counts)."""
    return C.sum(axis=1, dtype=np.int64)


def robust_masks(C: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(robust-correct, robust-wrong, config-fragile) masks, models x items (section 3.4)."""
    # One AND/OR pass per config: about twice as fast as all()/any() over the short last axis.
    all_right = np.array(C[:, :, 0], dtype=bool)
    any_right = all_right.copy()
    for k in range(1, C.shape[2]):
        all_right &= C[:, :, k]
        any_right |= C[:, :, k]
    return all_right, ~any_right, any_right & ~all_right


def band(C: np.ndarray, ref: int) -> dict[str, np.ndarray]:
    """Table 1 / Figure 1: reference, min, max, spread, robust, optimistic, config-lucky.

    ``config_lucky = #{i: C[m,i,r]=1 and i fragile for m} / #{i: C[m,i,r]=1}``
    (NaN where the model gets no item right under the reference).
    """
    acc = accuracy(C)
    rc, _, fragile = robust_masks(C)
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
        "optimistic": C.any(axis=2).mean(axis=1),
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
