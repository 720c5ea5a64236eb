"""Bootstrap helpers (vectorized over resamples and over pairs)."""
from __future__ import annotations

import numpy as np


def paired_sign_bootstrap(n_plus: np.ndarray, n_minus: np.ndarray, n: np.ndarray, draws: int,
                          rng: np.random.Generator) -> np.ndarray:
    """Resampled ``(plus - minus) / n`` for P pairs, each of ``n`` items that are +1, -1 or 0.

    Returns a P x ``draws`` array. Resampling a pair's n items with replacement only
    changes how many of each kind are drawn, so a resample is one multinomial draw of
    the three counts, here as ``plus ~ Bin(n, p+)`` then ``minus ~ Bin(n - plus,
    p- / (1 - p+))`` (the multinomial's exact factorisation; two *independent*
    binomials would be a different, narrower distribution). One call draws every
    pair of a scope. Every ``n`` must be positive.
    """
    n_plus = np.asarray(n_plus, dtype=np.int64).reshape(-1, 1)
    n_minus = np.asarray(n_minus, dtype=np.int64).reshape(-1, 1)
    n = np.asarray(n, dtype=np.int64).reshape(-1, 1)
    if np.any(n <= 0):
        raise ValueError("paired_sign_bootstrap needs at least one item per pair")
    rest = n - n_plus
    p_plus = n_plus / n
    p_minus_rest = np.where(rest > 0, n_minus / np.maximum(rest, 1), 0.0)
    shape = (n.shape[0], int(draws))
    plus = rng.binomial(np.broadcast_to(n, shape), np.broadcast_to(p_plus, shape))
    minus = rng.binomial(n - plus, np.broadcast_to(p_minus_rest, shape))
    return (plus - minus) / n


def percentile_ci(draws: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of a 1-D sample (numpy's default linear interpolation)."""
    a = (1.0 - level) / 2.0
    lo, hi = np.percentile(draws, [100 * a, 100 * (1 - a)])
    return float(lo), float(hi)


def percentile_ci_rows(draws: np.ndarray, level: float = 0.95) -> np.ndarray:
    """Percentile interval of each row of a 2-D sample: rows x 2 (low, high)."""
    a = (1.0 - level) / 2.0
    return np.percentile(draws, [100 * a, 100 * (1 - a)], axis=1).T
