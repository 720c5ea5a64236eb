import sys
from pathlib import Path

# numpy.fft imported here, before any in-process pytester run: pytester removes the modules a
# run imported, and scipy cannot re-import numpy.fft's extension afterwards ("cannot load
# module more than once per process"), which failed tests depending on their order on a worker.
import numpy.fft  # noqa: F401

# pandas likewise: imported first inside an in-process run, then dropped from sys.modules and
# imported again, its C parser no longer knows the string dtype (read_csv(dtype=str): "the dtype
# str is not supported for parsing"), which failed tests/records/test_graded.py after
# tests/plugin/test_incomplete_audited.py on one worker.
import pandas  # noqa: F401

sys.path.insert(0, str(Path(__file__).parent))

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory) -> Path:
    """This checkout's wheel, built once per run for every test and xdist worker that installs it."""
    from helpers.wheel import wheel_once

    return wheel_once(tmp_path_factory)


@pytest.fixture(autouse=True)
def _child_pytest_runs_without_hypothesis(request, monkeypatch):
    """The pytest runs a test starts (pytester's, ``python -m pytest`` subprocesses, a venv's)
    load no hypothesis plugin: its import is 0.25 of the 1.4 s a run on fixtures/tiny takes,
    and no such run uses it. pytester clears ``PYTEST_ADDOPTS`` as it starts, so it starts first."""
    if "pytester" in request.fixturenames:
        request.getfixturevalue("pytester")
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:hypothesispytest")
