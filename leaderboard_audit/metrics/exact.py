"""Exact comparisons (docs/spec/AUDITS.md v2, "Exact comparisons"; docs/audits.md).

A fraction such as 2/100 - 0/100 is 0.020000000000000018 in floating point, so a
plain ``spread <= 0.02`` says *warn* for a spread of exactly two items out of 100.
Every comparison of a value with a threshold, and every equality between
fractions, goes through these helpers: both sides are rounded to ``DECIMALS``
decimals first (far below any item resolution a leaderboard has, far above
float noise). Where integer item counts are at hand, compare those instead.
"""

from __future__ import annotations

import numpy as np

DECIMALS = 12


def exact(x: float) -> float:
    """``x`` rounded to ``DECIMALS`` decimals (the value every comparison sees); never ``-0.0``
    (a value rounded to 0 from below is 0: a pass on a closed boundary has margin 0, v3)."""
    return round(float(x), DECIMALS) + 0.0


def exact_array(x: np.ndarray) -> np.ndarray:
    """Elementwise ``exact`` (NaN stays NaN)."""
    return np.round(np.asarray(x, dtype=float), DECIMALS)


def le(a: float, b: float) -> bool:
    """``a <= b`` after rounding both sides."""
    return exact(a) <= exact(b)


def le_array(a: np.ndarray, b: float) -> np.ndarray:
    """Elementwise ``a <= b`` after rounding both sides."""
    return exact_array(a) <= exact(b)


def ge(a: float, b: float) -> bool:
    """``a >= b`` after rounding both sides."""
    return exact(a) >= exact(b)


def gt(a: float, b: float) -> bool:
    """``a > b`` after rounding both sides."""
    return exact(a) > exact(b)


def margin(a: float, b: float) -> float:
    """``a - b`` computed on the rounded values and rounded again, so a value on the
    boundary has margin exactly 0 (not -1.8e-17)."""
    return exact(exact(a) - exact(b))
