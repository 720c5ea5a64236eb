"""An audit test that only looks its verdict up runs a shorter protocol than pytest's.

At 1,000 models an audit is 10,024 tests, and all but the ~20 that compute a scope look a
verdict up. pytest's protocol costs each of them ~0.6 ms serially and ~1.4 ms on an xdist
worker (docs/performance.md, "Issue 24, stop 37"): three phase hooks with seven plugins'
implementations and wrappers (output capture suspended and resumed, log capture, marks
evaluated, ``PYTEST_CURRENT_TEST`` written), and the fixture machinery's request objects.
None of that does anything for a test whose whole body is a dictionary lookup.

The short protocol keeps every hook a report goes through: ``pytest_runtest_logstart``,
``pytest_runtest_makereport`` and ``pytest_runtest_logreport`` for setup, call and teardown,
``pytest_runtest_logfinish``, and the protocol's own wrappers (warnings, faulthandler). So
the terminal, JUnit XML, ``--lf``, ``-x``, xdist and the audit's own report see the same
reports, with the same outcomes, as under pytest's protocol. It leaves out the phase hooks
(``pytest_runtest_setup``/``call``/``teardown``), and so runs only where:

- every plugin implementing those is one whose work there an audit lookup does not need
  (``PHASE_PLUGINS``); any other plugin (pytest-timeout, pytest-randomly, a project's
  conftest) gets pytest's protocol for every test;
- no option needs the phases (``--pdb``, ``--trace``, ``--setup-show``, ``--setup-only``,
  ``--setup-plan``);
- the test uses the ``audit_check`` fixture and no other (no autouse fixture, no
  ``usefixtures``) and carries no ``skip``, ``skipif`` or ``xfail`` mark.

A test that computes a scope always takes pytest's protocol: its output, logging and
warnings are captured as any test's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

#: the plugins whose ``pytest_runtest_setup``/``call``/``teardown`` a lookup may leave out,
#: and what they do there: pytest's runner (fixtures, ``PYTEST_CURRENT_TEST``), marks
#: (``skipping``: this protocol only runs unmarked tests), output and log capture (a lookup
#: writes nothing), threads' and unraisable exceptions (a lookup starts no thread and frees
#: nothing), Hypothesis (acts on ``@given`` tests only), and the audit's own (flushes before a
#: test that is not an audit test)
PHASE_PLUGINS = frozenset(
    {
        "runner",
        "skipping",
        "capturemanager",
        "logging-plugin",
        "threadexception",
        "unraisableexception",
        "hypothesispytest",
    }
)
PHASE_HOOKS = ("pytest_runtest_setup", "pytest_runtest_call", "pytest_runtest_teardown")
#: options under which the phases must run: a debugger, or showing the fixtures' setup
PHASE_OPTIONS = ("usepdb", "trace", "setupshow", "setuponly", "setupplan")
FIXTURES = frozenset({"audit_check", "request"})
MARKS = frozenset({"skip", "skipif", "xfail"})


def session_allows(config: pytest.Config, own_plugin: str) -> bool:
    """Whether this run's plugins and options let lookups take the short protocol."""
    if any(config.getoption(name, False) for name in PHASE_OPTIONS):
        return False
    allowed = PHASE_PLUGINS | {own_plugin}
    return all(
        impl.plugin_name in allowed for hook in PHASE_HOOKS for impl in getattr(config.hook, hook).get_hookimpls()
    )


def item_allows(item: pytest.Item) -> bool:
    """Whether ``item`` is an audit test with nothing but ``audit_check`` to set up."""
    names = getattr(item, "fixturenames", None)
    if names is None or len(names) != len(FIXTURES) or not FIXTURES.issuperset(names):
        return False
    return not any(mark.name in MARKS for mark in item.iter_markers())


def run(item: pytest.Function, nextitem: pytest.Item | None, check: Callable[[], Any]) -> bool:
    """Run ``item`` with ``check()`` as its ``audit_check``, reporting as pytest's
    ``runtestprotocol`` does (``_pytest.runner``); returns True (the protocol ran)."""
    from _pytest.runner import CallInfo, check_interactive_exception, get_reraise_exceptions

    ihook = item.ihook
    location = item.location
    ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=location)
    reraise = get_reraise_exceptions(item.config)

    def phase(when: str, body: Callable[[], Any]) -> pytest.TestReport:
        call = CallInfo.from_call(body, when=when, reraise=reraise)  # type: ignore[arg-type]
        report = ihook.pytest_runtest_makereport(item=item, call=call)
        ihook.pytest_runtest_logreport(report=report)
        if check_interactive_exception(call, report):
            ihook.pytest_exception_interact(node=item, call=call, report=report)
        return report

    # __tracebackhide__: an error's traceback starts where pytest's protocol would start it
    def setup() -> None:
        __tracebackhide__ = True
        item.funcargs = {"audit_check": check()}

    def call() -> None:
        __tracebackhide__ = True
        item.runtest()

    def teardown() -> None:
        # what pytest's teardown does besides the phases' hooks: what earlier tests set up
        # (a session fixture, a module's) is torn down once ``nextitem`` no longer needs it
        __tracebackhide__ = True
        item.session._setupstate.teardown_exact(nextitem)

    try:
        if phase("setup", setup).passed:
            phase("call", call)
        if item.session.shouldfail or item.session.shouldstop:
            nextitem = None
        phase("teardown", teardown)
    finally:
        item._request = False  # type: ignore[attr-defined]
        item.funcargs = None  # type: ignore[assignment]
    ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=location)
    return True


def share_locations(items: list[pytest.Item]) -> None:
    """Give each parametrized audit test its ``location`` from the first of its function's.

    pytest derives every item's ``(file, line, name)`` anew (``Item.location``: the function's
    source file and line looked up, the path resolved and made relative, ~0.1 ms a test), where
    the cases of one function differ only in their names. An item that is not a plain
    ``pytest.Function`` (its ``reportinfo`` or ``location`` overridden) keeps pytest's own."""
    first: dict[tuple[int, int], tuple[str, int | None, str]] = {}  # (file, line, name's prefix)
    for item in items:
        if type(item).reportinfo is not pytest.Function.reportinfo or "location" in item.__dict__:
            continue
        if type(item).location is not pytest.Function.location:  # type: ignore[comparison-overlap]
            continue
        key = (id(item.parent), id(getattr(item, "obj", None)))
        known = first.get(key)
        if known is None:
            path, line, domain = item.location
            if domain.endswith(item.name):
                first[key] = (path, line, domain[: len(domain) - len(item.name)])
            continue
        path, line, prefix = known
        item.__dict__["location"] = (path, line, prefix + item.name)
