"""Hypothesis's terminal summary, left out of an audit run where it has nothing to say.

Hypothesis registers a pytest plugin wherever it is installed (the audit's own test extra
installs it). At the end of every session, in every process (the serial run, the xdist
controller and each worker), that plugin's ``pytest_terminal_summary`` imports
``hypothesis.internal.observability``, which imports the whole hypothesis package: 0.21 s
here (docs/performance.md, "Issue 24, stop 40"). On an xdist worker that import falls
between the worker's last test and the ``workerfinished`` event the controller waits for,
and the controller then pays it again: `-n 2` paid it twice in a row on the critical path,
a serial run once.

The summary has nothing to report when, in this process:

- the hypothesis package was never imported: no ``@given`` test ran here and nothing was
  written for Hypothesis's observability (its list of written files lives in that package);
- no report carries the plugin's statistics or failing examples (an xdist controller gets
  them from the workers' reports without importing hypothesis itself);
- ``--hypothesis-show-statistics`` is not given (its section heading prints even when empty).

Then the plugin is unregistered in ``pytest_sessionfinish``, before the terminal reporter
calls the summary hooks; ``pytest_terminal_summary`` is the last hook it implements, so no
other of its hooks is lost. Anywhere else it runs as it always does.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

#: the plugin's name (its entry point: ``-p no:hypothesispytest`` disables it)
PLUGIN = "hypothesispytest"
STATISTICS_OPTION = "--hypothesis-show-statistics"


def _report_keys(plugin: Any) -> tuple[str, ...]:
    """The keys the plugin stores on reports (statistics, failing examples)."""
    return tuple(k for k in (getattr(plugin, "STATS_KEY", None), getattr(plugin, "FAILING_EXAMPLES_KEY", None)) if k)


def summary_is_idle(config: pytest.Config, reports: Any = ()) -> bool:
    """Whether Hypothesis's terminal summary would print and write nothing in this process:
    the package never imported here, none of ``reports`` carrying its keys, no statistics
    asked for. Unknown plugin internals (no report keys found) count as not idle."""
    plugin = config.pluginmanager.get_plugin(PLUGIN)
    if plugin is None or "hypothesis" in sys.modules:
        return False
    try:
        if config.getoption(STATISTICS_OPTION):
            return False
    except ValueError:  # the option is not registered: some other plugin by that name
        return False
    keys = _report_keys(plugin)
    if len(keys) != 2:
        return False
    return not any(k in getattr(r, "__dict__", {}) for r in reports for k in keys)


def skip_idle_summary(config: pytest.Config) -> bool:
    """Unregister Hypothesis's plugin if its summary is idle (``summary_is_idle``); call from
    ``pytest_sessionfinish``. Returns whether it did. Only an xdist controller's reports come
    from other processes: there they are looked through; elsewhere a report can carry the
    plugin's keys only if this process imported hypothesis."""
    tr = config.pluginmanager.get_plugin("terminalreporter")
    from_workers = config.pluginmanager.has_plugin("dsession")
    reports = (r for rs in getattr(tr, "stats", {}).values() for r in rs) if from_workers else ()
    if not summary_is_idle(config, reports):
        return False
    config.pluginmanager.unregister(name=PLUGIN)
    return True
