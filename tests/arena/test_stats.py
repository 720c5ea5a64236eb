"""The scipy-free distribution functions against scipy."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leaderboard_audit.arena.stats import chi2_sf, t_two_sided_p, z_of_p


@settings(max_examples=200, deadline=None)
@given(st.floats(-60, 60), st.floats(1, 5000))
def test_t_tail_equals_scipy(t, df):
    from scipy.stats import t as student

    # rel 1e-9, and 1e-8 absolute near t = 0 (where the series' last terms leave ~2e-9)
    assert t_two_sided_p(t, df) == pytest.approx(2 * student.sf(abs(t), df), rel=1e-9, abs=1e-8)


@given(st.floats(1e-300, 1.0, exclude_max=True))
def test_z_of_p_inverts_the_normal_tail(p):
    from scipy.stats import norm

    assert 2 * norm.sf(z_of_p(p)) == pytest.approx(p, rel=1e-6)


@settings(max_examples=200, deadline=None)
@given(st.floats(0, 2000), st.integers(1, 1000))
def test_chi2_tail_equals_scipy(x, k):
    from scipy.stats import chi2

    assert chi2_sf(x, k) == pytest.approx(chi2.sf(x, k), rel=1e-8, abs=1e-300)
