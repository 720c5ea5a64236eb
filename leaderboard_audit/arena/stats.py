"""Small distribution functions without scipy (published tables need no scipy).

``t_two_sided_p`` is Student's t two-sided tail through the regularised incomplete beta
function (Lentz's continued fraction, as in Numerical Recipes ``betacf``), checked
against scipy in tests/arena/test_stats.py, as is ``chi2_sf`` (the regularised upper
incomplete gamma function).
"""

from __future__ import annotations

import math
from statistics import NormalDist

_N = NormalDist()


def _betacf(a: float, b: float, x: float) -> float:
    tiny, eps = 1e-300, 3e-16
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < eps:
            break
    return h


def betainc(a: float, b: float, x: float, y: float | None = None) -> float:
    """The regularised incomplete beta function I_x(a, b); ``y`` = 1 - x when the caller
    has it without cancellation."""
    y = 1.0 - x if y is None else y
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(y)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lbt) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * _betacf(b, a, y) / b


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
