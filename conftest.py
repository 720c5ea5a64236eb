"""Top-level conftest: fixtures shared by the test suite and by ad-hoc audits of the
bundled fixtures. (pytester is enabled with ``-p pytester`` in pyproject's addopts,
because ``pytest_plugins`` here would break audits collected from an editable install.)"""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """The committed records fixtures (tiny hand-made set, simulated demo, real grid)."""
    return FIXTURES
