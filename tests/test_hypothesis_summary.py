"""Hypothesis's terminal summary is left out of an audit run where it has nothing to say
(``hypothesis_summary``): the package is then never imported, in any process, and where a
Hypothesis test runs beside the audit its summary is kept."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from helpers.builders import write
from leaderboard_audit import hypothesis_summary
from leaderboard_audit.hypothesis_summary import PLUGIN, summary_is_idle
from leaderboard_audit.simulate import demo_spec, simulate

pytest.importorskip("_hypothesis_pytestplugin")
import _hypothesis_pytestplugin  # noqa: E402


def fake_config(plugin, stats: bool = False) -> SimpleNamespace:
    def getoption(name):
        if name != hypothesis_summary.STATISTICS_OPTION:
            raise ValueError(name)
        return stats

    return SimpleNamespace(
        pluginmanager=SimpleNamespace(get_plugin=lambda name: plugin if name == PLUGIN else None),
        getoption=getoption,
    )


def test_idle_only_without_the_package_its_report_keys_and_statistics(monkeypatch):
    plain = SimpleNamespace(outcome="passed")
    with_stats = SimpleNamespace(**{_hypothesis_pytestplugin.STATS_KEY: "stats"})
    with_example = SimpleNamespace(**{_hypothesis_pytestplugin.FAILING_EXAMPLES_KEY: "[]"})
    monkeypatch.setitem(sys.modules, "hypothesis", sys.modules.get("hypothesis") or SimpleNamespace())
    assert not summary_is_idle(fake_config(_hypothesis_pytestplugin), [plain])  # a @given test ran here
    monkeypatch.delitem(sys.modules, "hypothesis")
    assert summary_is_idle(fake_config(_hypothesis_pytestplugin), [plain])
    assert not summary_is_idle(fake_config(_hypothesis_pytestplugin), [plain, with_stats])
    assert not summary_is_idle(fake_config(_hypothesis_pytestplugin), [with_example])
    assert not summary_is_idle(fake_config(_hypothesis_pytestplugin, stats=True), [plain])
    assert not summary_is_idle(fake_config(None), [plain])  # no plugin: nothing to skip
    assert not summary_is_idle(fake_config(object()), [plain])  # not the plugin it knows


# each process says, as it ends, whether it imported hypothesis and kept its plugin
IMPORT_PROBE = """
import json, os, sys

def pytest_unconfigure(config):
    who = config.workerinput["workerid"] if hasattr(config, "workerinput") else "main"
    kept = config.pluginmanager.get_plugin("hypothesispytest") is not None
    with open(os.environ["IMPORT_LOG"], "a") as f:
        f.write(json.dumps([who, "hypothesis" in sys.modules, kept]) + "\\n")
"""

GIVEN_TEST = """
from hypothesis import given, strategies as st

@given(st.integers())
def test_given(x):
    assert x == x
"""


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    return write(simulate(demo_spec(items_per_benchmark=30)), tmp_path_factory.mktemp("demo"))


@pytest.mark.parametrize("n", ["0", "2"])
def test_an_audit_run_never_imports_hypothesis(pytester, demo_dir, monkeypatch, n):
    pytester.makeconftest(IMPORT_PROBE)
    log = pytester.path / "import.log"
    monkeypatch.setenv("IMPORT_LOG", str(log))
    r = pytester.runpytest_subprocess("--audit", str(demo_dir), "-p", "no:cacheprovider", "-n", n)
    assert "INTERNALERROR" not in r.stdout.str()
    assert r.parseoutcomes().get("passed", 0) > 0
    rows = sorted(json.loads(line) for line in log.read_text().splitlines())
    who = ["main"] if n == "0" else ["gw0", "gw1", "main"]
    assert rows == [[w, False, False] for w in who], rows


@pytest.mark.parametrize("n", ["0", "2"])
def test_a_hypothesis_test_beside_the_audit_keeps_its_summary(pytester, demo_dir, monkeypatch, n):
    pytester.makeconftest(IMPORT_PROBE)
    pytester.makepyfile(test_prop=GIVEN_TEST)
    log = pytester.path / "import.log"
    monkeypatch.setenv("IMPORT_LOG", str(log))
    r = pytester.runpytest_subprocess(
        "--audit", str(demo_dir), "-p", "no:cacheprovider", "-n", n, "--hypothesis-show-statistics", "test_prop.py"
    )
    out = r.stdout.str()
    assert "INTERNALERROR" not in out
    assert "Hypothesis Statistics" in out and "test_prop.py::test_given" in out, out[-3000:]
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert all(kept for _, _, kept in rows), rows  # the statistics asked for: the plugin stays
