"""The package and the pytest11 module stay import-light (no numpy/pandas/scipy)."""

import subprocess
import sys

import pytest


@pytest.mark.parametrize("module", ["leaderboard_audit", "leaderboard_audit.plugin"])
def test_import_is_light(module):
    code = (
        f"import sys, {module}; heavy = [m for m in ('numpy', 'pandas', 'scipy') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_lazy_attributes_resolve():
    import leaderboard_audit

    assert callable(leaderboard_audit.audit) and callable(leaderboard_audit.load_records)
    with pytest.raises(AttributeError, match="module 'leaderboard_audit' has no attribute 'does_not_exist'"):
        leaderboard_audit.does_not_exist
