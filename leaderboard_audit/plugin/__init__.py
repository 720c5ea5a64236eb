"""pytest plugin (entry point ``pytest11``): ``pytest --audit RECORDS``.

Import-light on purpose: this module loads at every pytest start, so numpy and the
audit code are imported inside hooks and fixtures, and only when they are used.

Public fixtures (``pytest --fixtures``): ``audit_records``, ``audit_collect`` and
``audit_verdict``; the bundled checks use ``audit_check``. See docs/checks.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .fixtures import audit_collect, audit_records, audit_verdict
from .names import PLUGIN_NAME, SETTINGS_KEY


def pytest_addoption(parser: pytest.Parser) -> None:
    from .options import add_options

    add_options(parser)


def _audit_arg(config: pytest.Config) -> Any:
    ns = getattr(config, "known_args_namespace", None)
    return getattr(ns, "audit", None) if ns is not None else None


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """Before any conftest runs: a records path must not configure pytest or bring code."""
    path = _audit_arg(early_config)
    if not path or not str(path).strip():
        return
    from ..reports.text import clean
    from .guard import ini_from_records, problems
    from .options import keep_cache_out

    keep_cache_out(early_config, path)
    msgs = []
    inipath = getattr(early_config, "inipath", None)
    chosen = getattr(getattr(early_config, "known_args_namespace", None), "inifilename", None)
    if not chosen and ini_from_records(inipath, path, early_config.invocation_params.dir):
        msgs.append(f"pytest took its configuration from {clean(str(inipath))}, found through the records path")
    found = problems(path, invocation_dir=early_config.invocation_params.dir)
    if found:
        msgs.append("it holds pytest configuration or Python code: " + ", ".join(clean(f) for f in found))
    if msgs:
        raise pytest.UsageError(
            f"--audit {clean(str(path))}: refusing a records path that could configure pytest or run code ("
            + "; ".join(msgs)
            + "). Records are data only: move those files out, or audit a copy of the "
            "records folder (docs/records.md, 'Security model')."
        )


def audits_dir() -> Path:
    """Where the bundled checks live (installed as ``leaderboard_audit.audits``)."""
    import importlib.util

    spec = importlib.util.find_spec("leaderboard_audit.audits")
    if spec is None or not spec.submodule_search_locations:  # pragma: no cover - broken install
        raise pytest.UsageError("leaderboard_audit.audits is not installed: reinstall leaderboard-audit")
    return Path(list(spec.submodule_search_locations)[0]).resolve()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "audit: a leaderboard-audit check (select them with -m audit)")
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and SETTINGS_KEY in workerinput:
        from ..settings import Settings

        settings = Settings.from_json(workerinput[SETTINGS_KEY])
    elif config.getoption("audit") is not None or config.getoption("audit_collect") is not None:
        from .options import settings_from_config

        settings = settings_from_config(config)
        if settings.path:
            from ..reports.text import clean
            from .guard import basetemp_problem

            problem = basetemp_problem(config.option.basetemp, settings.path, config.invocation_params.dir)
            if problem:
                raise pytest.UsageError(clean(problem))
    else:
        if config.getoption("audit_submission"):
            raise pytest.UsageError("--audit-submission needs --audit PATH (or --audit-collect SPEC)")
        return
    from ..arena.formats import aggregate_kind

    kind = aggregate_kind(settings.path, settings.format)
    if kind is not None:  # an arena, judge outputs or a published table: no records (arena/session.py)
        import json

        from ..arena.session import start

        return start(config, json.loads(settings.as_json()), kind)
    if workerinput is None:
        from .options import audit_alone_under_xdist, limit_worker_threads

        if audit_alone_under_xdist(config):
            # -n N on the audit alone: its N processes, no xdist workers (they could only look
            # verdicts up and send each test's report across; docs/performance.md)
            config.option.numprocesses, config.option.tx, config.option.dist = 0, [], "no"
            config.stash[AUDIT_ALONE] = settings.workers
        limit_worker_threads(config)
    from .session import AuditSession

    session = AuditSession(config, settings, audits_dir())
    config.pluginmanager.register(session, PLUGIN_NAME)
    here = str(session.audits_dir)
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        if here not in config.args:
            config.args.append(here)
    else:  # no explicit paths: audit only, do not also run the project's own tests
        config.args[:] = [here]


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Without --audit the bundled checks are never collected (they need records)."""
    if config.pluginmanager.has_plugin(PLUGIN_NAME):
        return None
    try:
        root = audits_dir()
        p = collection_path.resolve()
    except (OSError, pytest.UsageError):
        return None
    return True if p == root or root in p.parents else None


#: config.stash: ``-n N`` given for the audit alone, run as N audit processes in one pytest process
AUDIT_ALONE = pytest.StashKey[int]()


def pytest_report_header(config: pytest.Config) -> str | None:
    n = config.stash.get(AUDIT_ALONE, None)
    if n is None:
        return None
    return f"leaderboard-audit: the audit alone under -n: computed in {n} processes, no xdist workers"


@pytest.hookimpl(optionalhook=True, tryfirst=True)  # before xdist's own (one per CPU)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` on an audit alone: no xdist workers, and the audit's own processes get the CPUs
    (``options.audit_workers``). The audit is computed once, in one process's pool, and its tests
    are lookups: xdist workers would only add their start and each test's report crossing to
    the controller. With the project's own tests beside it (paths on the command line), xdist's
    count. Nothing here reads the records."""
    if not config.getoption("audit", None) and not config.getoption("audit_collect", None):
        return None
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        return None
    import os

    from .options import AUTO_WORKERS

    config.stash[AUTO_WORKERS] = max(1, os.cpu_count() or 1)
    return 0


__all__ = ["PLUGIN_NAME", "SETTINGS_KEY", "audit_collect", "audit_records", "audit_verdict", "audits_dir"]
