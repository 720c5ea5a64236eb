"""The chi-square tail of the v4 tests (``special.chi2_sf``, ``special.gammaincc``)
against scipy's ``chdtrc``, and no scipy import on an audit's way."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from leaderboard_audit.metrics.special import chi2_sf


def test_chi2_tail_equals_scipys():
    from scipy.special import chdtrc

    df = np.array([1, 2, 3, 5, 11, 25, 50, 99, 299, 999, 2999])
    x = np.concatenate([np.linspace(0.0, 3 * df.max() + 60, 400), [1e-9, 0.5, 1.0, 12.0, 30.0, 4000.0]])
    X, D = np.meshgrid(x, df)
    got, want = chi2_sf(X, D), chdtrc(D.astype(float), X)
    assert got.shape == X.shape
    tiny = want > 1e-300
    assert np.abs(got - want)[tiny].max() <= 1e-11 * want[tiny].max()
    assert (np.abs(got - want)[tiny] / want[tiny]).max() < 1e-10  # relative, in the far tail too
    assert np.all(got[~tiny] < 1e-290)
    # the array steps are the scalar function's, bit for bit
    from leaderboard_audit.metrics.special import gammaincc

    assert got.ravel().tolist() == [gammaincc(d / 2, max(v, 0.0) / 2) for d, v in zip(D.ravel(), X.ravel())]
    assert X.size > 64  # past special._SCALAR_UPTO: numpy's steps
    # NaN -> 1 (Q undefined: no config-fragile item), negative -> 1, broadcasting a scalar df
    assert chi2_sf(np.array([np.nan, -3.0, 0.0]), 4).tolist() == [1.0, 1.0, 1.0]


def test_an_audit_imports_no_scipy(tmp_path):
    code = (
        "import sys\n"
        "from leaderboard_audit.records import load_records\n"
        "from leaderboard_audit.engine.run import audit\n"
        f"audit(load_records({str(tmp_path / 'r')!r}))\n"
        "print('scipy' in sys.modules)\n"
    )
    from leaderboard_audit.records.simulate import demo_spec, simulate
    from leaderboard_audit.records.writer import write_records

    write_records(simulate(demo_spec(items_per_benchmark=20)), tmp_path / "r")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().splitlines()[-1] == "False"
