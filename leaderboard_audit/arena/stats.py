"""Small distribution functions without scipy (published tables need no scipy).

``t_two_sided_p`` is Student's t two-sided tail through the regularised incomplete beta
function (Lentz's continued fraction, as in Numerical Recipes ``betacf``), checked
against scipy in tests/arena/test_stats.py, as is ``chi2_sf`` (the regularised upper
incomplete gamma function).
"""

from __future__ import annotations

import math
from statistics import NormalDist

from ..metrics import special
from ..metrics.special import betainc

_N = NormalDist()


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with ``df`` degrees of freedom (normal when df is inf)."""
    if not math.isfinite(df):
        return 2.0 * _N.cdf(-abs(t))
    return betainc(df / 2.0, 0.5, df / (df + t * t), t * t / (df + t * t))


def z_of_p(p: float) -> float:
    """The |z| whose two-sided normal tail is ``p``."""
    return -_N.inv_cdf(max(p, 1e-300) / 2.0) if p < 1.0 else 0.0  # the lower tail: exact for tiny p


def chi2_sf(x: float, k: int) -> float:
    """Upper tail of chi-square(k): ``Q(k / 2, x / 2)`` (``metrics.special.chi2_sf`` of one value)."""
    return float(special.chi2_sf(x, k))


__all__ = ["betainc", "chi2_sf", "t_two_sided_p", "z_of_p"]
