"""The report's own copy of the scopes (plugin.results.report_copy): equal to a JSON round
trip, without one when the scopes are already JSON-normal (the bundled checks' are)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from leaderboard_audit.plugin.results import json_normal, report_copy


def test_json_normal_is_what_json_loads_gives_back():
    assert json_normal({"a": [1, 2.5, None, True, "x", {"b": []}], "c": {}})
    assert not json_normal({"a": (1, 2)})  # a tuple comes back a list
    assert not json_normal({1: "x"})  # an int key comes back a str (and sorts differently)
    assert not json_normal({"a": [np.float64(0.5)]})
    assert not json_normal([{"a": {"b": [set()]}}])


def test_copy_equals_the_round_trip_and_owns_what_the_report_changes():
    normal = {"pooled": {"verdicts": [{"id": "x", "value": 0.1}], "pairs": [{"higher": "a", "ci": [0.0, 1.0]}]}}
    odd = {"mmlu": {"verdicts": [], "table": {1: (2, 3)}}}
    for scopes in (normal, odd, {**normal, **odd}):
        copy = report_copy(scopes)
        assert json.dumps(copy, sort_keys=True) == json.dumps(json.loads(json.dumps(scopes)), sort_keys=True)
        assert copy == json.loads(json.dumps(scopes))
    copy = report_copy(normal)
    copy["pooled"]["verdicts"].append({"id": "user"})
    copy["pooled"]["pairs"][0]["fragile_evidence"] = {}
    assert (
        normal["pooled"]["verdicts"] == [{"id": "x", "value": 0.1}]
        and "fragile_evidence" not in normal["pooled"]["pairs"][0]
    )


def test_the_bundled_checks_give_json_normal_scopes():
    """So the plugin's report takes the copy-free path (a 4,278-model report: 0.04 s, not 0.4 s)."""
    from leaderboard_audit.engine import audit_scopes
    from leaderboard_audit.records.simulate import demo_spec, simulate

    scopes = audit_scopes(simulate(demo_spec(items_per_benchmark=60)), n_boot=200)
    assert len(scopes) == 5 and all(json_normal(s) for s in scopes.values())


def test_progress_is_written_a_line_at_a_time_on_a_written_through_pipe(pytester):
    """With PYTHONUNBUFFERED (many CI images) pytest's one-letter-per-test writes were one
    system call each; during the run and pytest's closing summary the stream keeps them
    until pytest flushes, and at unconfigure it writes through again. The output is the same."""
    import os
    import re
    import shutil
    import subprocess
    import sys

    from helpers.paths import REPO

    records = shutil.copytree(REPO / "fixtures" / "tiny", pytester.path / "rec")
    pytester.makeconftest(
        """
        import sys
        def pytest_terminal_summary(terminalreporter):
            sys.__stdout__.write(f"during the summary: write_through={sys.__stdout__.write_through}\\n")
        def pytest_unconfigure(config):
            sys.__stdout__.write(f"after the run: write_through={sys.__stdout__.write_through}\\n")
        """
    )
    pytester.makepyfile(
        test_stream="""
        import sys
        def test_during_the_run():
            assert not sys.__stdout__.write_through
        """
    )
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-q",
        "-rA",
        "--audit",
        str(records),
        "test_stream.py",
    ]
    out = subprocess.run(cmd, cwd=pytester.path, env=env, capture_output=True, text=True, timeout=300).stdout
    assert "PASSED test_stream.py::test_during_the_run" in out, out[-3000:]
    assert "after the run: write_through=True" in out, out[-3000:]
    # pytest's closing summary (a FAILED line per failed test) is written buffered too
    assert "during the summary: write_through=False" in out, out[-3000:]
    assert re.search(r"^[.FWsx]+ +\[ *\d+%\]$", out, re.M), out[-3000:]  # progress lines as pytest writes them


@pytest.mark.slow
def test_progress_on_a_pipe_is_flushed_a_line_at_a_time(pytester):
    """pytest flushes its terminal after every test; on a pipe the audit flushes it when a
    progress line is complete (or FLUSH_EVERY_S has passed), so a run makes far fewer
    flushes than tests, and the output is what pytest writes."""
    import re
    import shutil
    import subprocess
    import sys

    from helpers.paths import REPO

    records = shutil.copytree(REPO / "fixtures" / "tiny", pytester.path / "rec")
    pytester.makeconftest(
        """
        import pytest

        class Counting:
            def __init__(self, f):
                self.f, self.flushes = f, 0
            def flush(self):
                self.flushes += 1
                self.f.flush()
            def __getattr__(self, name):
                return getattr(self.f, name)

        @pytest.hookimpl(trylast=True)
        def pytest_configure(config):
            tw = config.get_terminal_writer()
            tw._file = config._counting = Counting(tw._file)

        def pytest_unconfigure(config):
            config._counting.f.write(f"flushes={config._counting.flushes}\\n")
        """
    )
    pytester.makepyfile(
        test_many="import pytest\n@pytest.mark.parametrize('i', range(400))\ndef test_n(i):\n    pass\n"
    )
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--audit", str(records), "test_many.py"]
    out = subprocess.run(cmd, cwd=pytester.path, capture_output=True, text=True, timeout=300).stdout
    # pytest's own closing line "N passed ... in Xs" (the audit's counts line names "passed" too)
    final = [line for line in out.splitlines() if re.search(r"\d+ passed.* in [\d.]+s", line)][-1]
    tests = int(re.search(r"(\d+) passed", final).group(1)) + int((re.search(r"(\d+) failed", final) or [0, 0])[1])
    flushes = int(re.search(r"flushes=(\d+)", out).group(1))
    assert tests >= 400 and flushes < tests / 10, out[-3000:]
    assert re.search(r"^[.FWsx]+ +\[ *\d+%\]$", out, re.M), out[-3000:]
