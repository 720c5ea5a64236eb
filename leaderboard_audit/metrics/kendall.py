"""Kendall tau-b, vectorized over many columns (order agreement between configs)."""

from __future__ import annotations

import numpy as np


def kendall_tau_b(x: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Kendall tau-b between vector ``x`` (n) and each column of ``Y`` (n x K).

    NaN where either side is constant (tau-b undefined), as scipy returns.
    """
    Y = np.asarray(Y, dtype=float)
    x = np.asarray(x, dtype=float)
    iu = np.triu_indices(len(x), k=1)
    sx = np.sign(x[:, None] - x[None, :])[iu]  # pairs
    sy = np.sign(Y[:, None, :] - Y[None, :, :])[iu[0], iu[1], :]  # pairs x K
    num = (sx[:, None] * sy).sum(axis=0)
    nx = (sx != 0).sum()
    ny = (sy != 0).sum(axis=0)
    den = np.sqrt(nx * ny.astype(float))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
