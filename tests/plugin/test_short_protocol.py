"""Audit tests that look their verdict up run the short protocol (``short_protocol``): the
same reports, outcomes, JUnit XML and audit report as under pytest's own protocol, which
every test gets wherever a plugin, a fixture, a mark or an option needs the phases."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers.builders import write
from leaderboard_audit import short_protocol
from leaderboard_audit.simulate import demo_spec, simulate

ARGS = ("-p", "no:cacheprovider", "-q")
#: a conftest with a phase hook of its own: pytest's protocol for every test
PHASE_HOOK = "def pytest_runtest_setup(item):\n    pass\n"


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    return write(simulate(demo_spec(items_per_benchmark=60)), tmp_path_factory.mktemp("demo"))


@pytest.fixture
def short_runs(monkeypatch) -> list[str]:
    """The node ids the short protocol ran (pytester's in-process runs share the module)."""
    ran: list[str] = []
    run = short_protocol.run

    def counted(item, nextitem, check):
        ran.append(item.nodeid)
        return run(item, nextitem, check)

    monkeypatch.setattr(short_protocol, "run", counted)
    return ran


def audit(pytester, demo_dir, out: Path, *extra: str):
    out.mkdir()
    return pytester.runpytest(
        "--audit",
        str(demo_dir),
        "--junitxml",
        str(out / "junit.xml"),
        "--audit-report",
        str(out / "report.json"),
        *ARGS,
        *extra,
    )


def junit(path: Path) -> str:
    """The JUnit XML without what differs between any two runs (times, host)."""
    return re.sub(r' (time|timestamp|hostname)="[^"]*"', "", path.read_text())


def test_lookups_report_as_they_do_under_pytests_protocol(pytester, demo_dir, tmp_path, short_runs):
    short = audit(pytester, demo_dir, tmp_path / "short")
    ran = list(short_runs)
    short_runs.clear()
    pytester.makeconftest(PHASE_HOOK)
    full = audit(pytester, demo_dir, tmp_path / "full")
    assert short_runs == []
    outcomes = short.parseoutcomes()
    tests = sum(v for k, v in outcomes.items() if k not in ("warnings", "warning", "deselected"))
    # every test but the first of each scope (which computes it) looked its verdict up
    assert 0 < len(ran) < tests and len(ran) > tests * 0.8
    assert outcomes == full.parseoutcomes() and outcomes["failed"] > 0 and outcomes["warn"] > 0
    assert short.ret == full.ret == 1
    assert junit(tmp_path / "short" / "junit.xml") == junit(tmp_path / "full" / "junit.xml")
    assert 'name="audit_margin"' in junit(tmp_path / "short" / "junit.xml")
    assert (tmp_path / "short" / "report.json").read_bytes() == (tmp_path / "full" / "report.json").read_bytes()

    # the progress letters, failures and closing summary; timings and output paths aside
    def lines(r, out):
        return [re.sub(r" in [0-9.]+s", "", x.replace(str(tmp_path / out), "OUT")) for x in r.stdout.lines]

    assert lines(short, "short") == lines(full, "full")


def test_an_autouse_fixture_or_a_mark_gets_pytests_protocol(pytester, demo_dir, tmp_path, short_runs):
    # a plugin's autouse fixture (a conftest's reaches only its own directory's tests)
    seen = tmp_path / "seen.txt"
    pytester.makepyfile(
        every_test=f"""
import pytest

@pytest.fixture(autouse=True)
def every_test(request):
    with open({str(seen)!r}, "a") as f:
        f.write(request.node.nodeid + "\\n")
"""
    )
    pytester.syspathinsert()
    result = audit(pytester, demo_dir, tmp_path / "run", "-p", "every_test")
    assert short_runs == []
    tests = sum(v for k, v in result.parseoutcomes().items() if k not in ("warnings", "warning", "deselected"))
    assert len(seen.read_text().splitlines()) == tests

    pytester.makeconftest(
        """
import pytest

def pytest_collection_modifyitems(items):
    for item in items:
        if item.originalname == "test_band":
            item.add_marker(pytest.mark.skip(reason="not this time"))
"""
    )
    marked = audit(pytester, demo_dir, tmp_path / "marks", "-rs")
    assert marked.parseoutcomes()["skipped"] > 0
    marked.stdout.fnmatch_lines(["*not this time*"])
    assert short_runs and not any("test_band" in n for n in short_runs)


@pytest.mark.parametrize("option", ["--setup-show", "--setup-plan"])
def test_options_that_show_the_phases_get_pytests_protocol(pytester, demo_dir, tmp_path, short_runs, option):
    audit(pytester, demo_dir, tmp_path / "run", option)
    assert short_runs == []


def test_exitfirst_stops_at_the_first_failure(pytester, demo_dir, tmp_path, short_runs):
    result = audit(pytester, demo_dir, tmp_path / "run", "-x", "-k", "band")
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] == 1 and result.ret == 1


def test_a_session_fixture_is_torn_down_in_the_last_lookups_teardown(pytester, demo_dir, short_runs):
    """pytest tears a session fixture down in the teardown of the last test that runs, and
    reports its finalizer's error there: so does the short protocol, with the same traceback."""
    pytester.makepyfile(
        test_user="""
import pytest

@pytest.fixture(scope="session")
def resource():
    yield
    raise RuntimeError("finalizer failed")

def test_uses_it(resource):
    pass
"""
    )
    args = ("test_user.py", "--audit", str(demo_dir), *ARGS, "-rE")
    result = pytester.runpytest(*args)
    assert short_runs and "test_user" not in short_runs[-1]  # the last test is an audit lookup
    assert result.parseoutcomes()["errors"] == 1
    last = short_runs[-1].split("::")[-1].replace("[", "[[]")
    result.stdout.fnmatch_lines([f"*ERROR at teardown of {last}*", f"ERROR *::{last} - RuntimeError: finalizer*"])
    short_runs.clear()
    pytester.makeconftest(PHASE_HOOK)
    full = pytester.runpytest(*args)
    assert short_runs == []

    def errors(r):
        text = r.stdout.str()
        return text[text.index("= ERRORS =") : text.index("= FAILURES =")]

    assert errors(result) == errors(full)


def test_shared_locations_are_pytests_own(pytester, demo_dir):
    seen: dict[str, tuple] = {}

    class Check:
        def pytest_collection_finish(self, session):
            for item in session.items:
                got = item.__dict__.pop("location", None)
                if got is not None:
                    seen[item.nodeid] = (got, item.location)

    pytester.inline_run("--audit", str(demo_dir), "--collect-only", *ARGS, plugins=[Check()])
    assert len(seen) > 40
    assert all(shared == own for shared, own in seen.values())
