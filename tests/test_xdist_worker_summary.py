"""An xdist worker's terminal summary goes to ``/dev/null``: the audit skips its failure
section and short test summary there (``xdist_worker_summary``), and the controller still
prints both."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from helpers.builders import write
from leaderboard_audit.simulate import demo_spec, simulate
from leaderboard_audit.xdist_worker_summary import skip_unseen_summary, writes_nowhere


def fake_config(stream, worker: bool = True) -> SimpleNamespace:
    tr = SimpleNamespace(_tw=SimpleNamespace(_file=stream), reportchars="fE")
    config = SimpleNamespace(
        pluginmanager=SimpleNamespace(get_plugin=lambda name: tr if name == "terminalreporter" else None),
        option=SimpleNamespace(tbstyle="auto"),
    )
    if worker:
        config.workerinput = {"workerid": "gw0"}
    return config


def test_only_a_worker_writing_to_dev_null_skips(tmp_path):
    with open(os.devnull, "w") as null, open(tmp_path / "out.txt", "w") as f:
        assert writes_nowhere(fake_config(null)) and not writes_nowhere(fake_config(f))
        for config, skips in (
            (fake_config(null), True),
            (fake_config(f), False),  # a worker whose terminal is a file someone reads
            (fake_config(null, worker=False), False),  # a controller or a serial run
        ):
            tr = config.pluginmanager.get_plugin("terminalreporter")
            assert skip_unseen_summary(config) is skips
            assert (config.option.tbstyle, tr.reportchars) == (("no", "") if skips else ("auto", "fE"))
    assert not writes_nowhere(fake_config(object()))  # no file descriptor


# what each process's terminal reporter holds when it writes its summary
SUMMARY_PROBE = """
import json, os

class Probe:
    def __init__(self, config):
        self.config = config

    def pytest_terminal_summary(self, terminalreporter):
        who = self.config.workerinput["workerid"] if hasattr(self.config, "workerinput") else "controller"
        with open(os.environ["SUMMARY_LOG"], "a") as f:
            f.write(json.dumps([who, self.config.option.tbstyle, terminalreporter.reportchars]) + "\\n")

def pytest_configure(config):
    config.pluginmanager.register(Probe(config))
"""


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    return write(simulate(demo_spec(items_per_benchmark=30)), tmp_path_factory.mktemp("demo"))


def test_workers_skip_the_summary_the_controller_prints(pytester, demo_dir, monkeypatch):
    pytester.makeconftest(SUMMARY_PROBE)
    log = pytester.path / "summary.log"
    monkeypatch.setenv("SUMMARY_LOG", str(log))
    r = pytester.runpytest_subprocess("--audit", str(demo_dir), "-p", "no:cacheprovider", "-n", "2")
    out = r.stdout.str()
    assert "INTERNALERROR" not in out
    rows = sorted(json.loads(line) for line in log.read_text().splitlines())
    assert rows == [["controller", "auto", "wfE"], ["gw0", "no", ""], ["gw1", "no", ""]], rows
    failed = r.parseoutcomes().get("failed", 0)
    assert 0 < failed <= 100, out[-2000:]  # few enough that the controller shows each failure
    assert "= FAILURES =" in out and "short test summary info" in out
    assert sum(line.startswith("FAILED ") for line in r.stdout.lines) == failed
