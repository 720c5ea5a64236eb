"""An xdist worker's terminal summary is written to ``/dev/null``: skip its costly sections.

execnet starts a worker with its standard output (fd 1) on ``/dev/null`` (the pipe to the
controller is a copy of the original fd), and pytest's terminal reporter on the worker writes
there. Everything the user sees comes from the controller, which gets every report. Yet the
worker's reporter still builds its summary at the end of the session, and two of its sections
cost time that grows with the failures:

- the failure section looks up each failed test's teardown reports by scanning every report
  (``TerminalReporter._get_teardown_reports``): at 1,000 models (7,428 failed audit tests,
  ~30,000 reports) ~10 s of each worker's CPU, after the worker has sent its results, so the
  controller waits for it to exit (``-n 2``: 24.7 s against 22.9 s serially);
- the short test summary ("FAILED ..." lines, one per failed test): ~0.5 s there.

The controller prints both as a serial run does (the audit leaves pytest's failure section
out above ``FAILURE_DETAILS_LIMIT`` failures, on the controller and serially alike).
"""

from __future__ import annotations

import os

import pytest


def writes_nowhere(config: pytest.Config) -> bool:
    """Whether this process's terminal reporter writes to ``/dev/null``."""
    tr = config.pluginmanager.get_plugin("terminalreporter")
    stream = getattr(getattr(tr, "_tw", None), "_file", None)
    try:
        fd = stream.fileno()  # type: ignore[union-attr]
        return os.path.samestat(os.fstat(fd), os.stat(os.devnull))
    except (AttributeError, OSError, ValueError):
        return False


def skip_unseen_summary(config: pytest.Config) -> bool:
    """On an xdist worker whose terminal writes nowhere: no failure section and no short
    test summary (called from the worker's ``pytest_sessionfinish``, after its last report,
    before the terminal reporter's summary). Returns whether it skipped them."""
    tr = config.pluginmanager.get_plugin("terminalreporter")
    if tr is None or not hasattr(config, "workerinput") or not writes_nowhere(config):
        return False
    config.option.tbstyle = "no"
    tr.reportchars = ""
    return True
