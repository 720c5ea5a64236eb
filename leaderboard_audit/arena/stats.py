"""Small distribution functions without scipy (published tables need no scipy).

``t_two_sided_p`` is Student's t two-sided tail through the regularised incomplete beta
function (Lentz's continued fraction, as in Numerical Recipes ``betacf``), checked
against scipy in tests/arena/test_stats.py, as is ``chi2_sf`` (the regularised upper
incomplete gamma function).
"""

from __future__ import annotations

import math
from statistics import NormalDist

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


def gammaincc(a: float, x: float) -> float:
    """The regularised upper incomplete gamma function Q(a, x) (series below a + 1,
    Lentz's continued fraction above, as Numerical Recipes ``gser``/``gcf``)."""
    if x <= 0.0:
        return 1.0
    lead = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1.0:
        term = total = 1.0 / a
        ap = a
        for _ in range(1000):
            ap += 1.0
            term *= x / ap
            total += term
            if abs(term) < abs(total) * 3e-16:
                break
        return max(0.0, 1.0 - total * math.exp(lead))
    tiny = 1e-300
    b = x + 1.0 - a
    c, d = 1.0 / tiny, 1.0 / b
    h = d
    for i in range(1, 1000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = b + an / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 3e-16:
            break
    return math.exp(lead) * h


def chi2_sf(x: float, k: int) -> float:
    """Upper tail of chi-square(k): ``Q(k / 2, x / 2)``."""
    if k <= 0:
        return 1.0
    return gammaincc(k / 2.0, x / 2.0)


__all__ = ["betainc", "chi2_sf", "gammaincc", "t_two_sided_p", "z_of_p"]
