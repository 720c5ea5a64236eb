"""Bootstrap helpers (vectorized over resamples)."""
from __future__ import annotations

import numpy as np


def paired_sign_bootstrap(n_plus: int, n_minus: int, n: int, draws: int,
                          rng: np.random.Generator) -> np.ndarray:
    """Resampled ``(plus - minus) / n`` for n items each +1, -1 or 0.

    Resampling n items with replacement only changes how many of each kind are
    drawn, so the counts are one multinomial draw per resample: no item arrays.
    """
    p_plus = n_plus / n
    p_minus_rest = 0.0 if n_plus == n else n_minus / (n - n_plus)
    plus = rng.binomial(n, p_plus, size=draws)           # multinomial as two binomials
    minus = rng.binomial(n - plus, p_minus_rest)
    return (plus - minus) / n


def percentile_ci(draws: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval (numpy's default linear interpolation)."""
    a = (1.0 - level) / 2.0
    lo, hi = np.percentile(draws, [100 * a, 100 * (1 - a)])
    return float(lo), float(hi)
