"""pytest plugin (entry point ``pytest11``): ``pytest --audit RECORDS``.

Import-light on purpose: this module loads at every pytest start, so numpy and the
audit code are imported inside hooks and fixtures, and only when they are used.

Public fixtures (``pytest --fixtures``): ``audit_records``, ``audit_collect`` and
``audit_verdict``; the bundled checks use ``audit_check``. See docs/checks.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from collections.abc import Callable

import pytest

from .plugin_names import PLUGIN_NAME, WORKER_KEY
from .settings import SUMMARY_CHOICES


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup(
        "leaderboard-audit",
        "audit a leaderboard's order against harness configs (docs/NAME.md: leaderboard-audit docs NAME)",
    )
    g.addoption(
        "--audit",
        metavar="PATH",
        default=None,
        help="records to audit: a records-v1 directory or a long CSV/Parquet table",
    )
    from .arena.formats import all_names as aggregate_names, format_names as aggregate_formats
    from .formats import audit_formats, format_names, formats_help, metric_help

    g.addoption(
        "--audit-format",
        default="auto",
        choices=audit_formats() + aggregate_names(),
        help=f"how to read --audit PATH (default: auto; importers: {formats_help()}; "
        f"arena, published tables and judge outputs: {', '.join(aggregate_formats())})",
    )
    g.addoption(
        "--audit-mapping",
        metavar="MAP.json",
        default=None,
        help=f"{'/'.join(format_names())}: which run is which model, benchmark and config "
        "(default SRC/audit_mapping.json)",
    )
    g.addoption(
        "--audit-metric",
        metavar="NAME",
        default=None,
        help=f"importers: the per-sample metric that is the correctness bit ({metric_help()})",
    )
    g.addoption("--audit-seed", default=None, help="global seed, a whole number >= 0 (default 1234)")
    g.addoption("--audit-boot", default=None, help="bootstrap resamples for pair CIs, 100..1,000,000 (default 10000)")
    g.addoption("--audit-alpha", default=None, help="family-wise alpha of the identified order (default 0.05)")
    g.addoption("--audit-strict", action="store_true", default=None, help="a warn makes the run fail (exit 1)")
    g.addoption("--audit-report", metavar="PATH.json", default=None, help="write the report-v1 JSON here")
    g.addoption("--audit-markdown", metavar="PATH.md", default=None, help="write a Markdown report here")
    g.addoption("--audit-html", metavar="PATH.html", default=None, help="write a self-contained HTML report here")
    g.addoption(
        "--audit-leaderboard",
        metavar="PATH",
        default=None,
        help="write a publishable leaderboard (rank by tier, score with 95%% CI, band, robust accuracy, tier, "
        "identified above, configs won, harness card); .md, .csv or .html by suffix",
    )
    g.addoption(
        "--audit-threshold",
        metavar="NAME=VALUE",
        action="append",
        default=[],
        help="override a verdict threshold (names: see docs/audits.md or the report's 'thresholds')",
    )
    g.addoption(
        "--audit-intersect",
        action="store_true",
        default=None,
        help="audit the items common to all models instead of failing on unmatched records",
    )
    g.addoption(
        "--audit-collect",
        metavar="SPEC.toml",
        default=None,
        help="produce the records first by running models (collection spec); then audit them",
    )
    g.addoption(
        "--audit-submission",
        metavar="MODEL",
        action="append",
        default=[],
        help="audit only what this new model's arrival changes (repeatable)",
    )
    g.addoption(
        "--audit-gate",
        metavar="CHECK",
        action="append",
        default=[],
        help="with --audit-submission: let this check's fails the newcomer creates fail the gate too "
        "(e.g. band; repeatable; docs/ci-gate.md)",
    )
    g.addoption(
        "--audit-cache",
        metavar="DIR",
        default=None,
        help="load cache folder (default $LEADERBOARD_AUDIT_CACHE or $XDG_CACHE_HOME/leaderboard-audit; "
        "'off' to disable)",
    )
    g.addoption(
        "--audit-summary",
        choices=SUMMARY_CHOICES,
        default="short",
        help="terminal summary: short (default, at most ~60 lines), full (every table), none",
    )
    for key, help_ in (("seed", "global seed"), ("boot", "bootstrap resamples"), ("alpha", "identified-order alpha")):
        parser.addini(f"audit_{key}", f"leaderboard-audit {help_}", default=None)
    parser.addini("audit_strict", "leaderboard-audit: treat warn as failure", default=None)
    from .threshold_names import THRESHOLD_NAMES

    for name in THRESHOLD_NAMES:
        parser.addini(f"audit_{name}", f"leaderboard-audit threshold {name}", default=None)


def _audit_arg(config: pytest.Config) -> Any:
    ns = getattr(config, "known_args_namespace", None)
    return getattr(ns, "audit", None) if ns is not None else None


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """Before any conftest runs: a records path must not configure pytest or bring code."""
    path = _audit_arg(early_config)
    if not path or not str(path).strip():
        return
    from .guard import ini_from_records, problems
    from .reports.text import clean

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


def records_free_cache_home() -> Path:
    """Where pytest's cache goes when the rootdir is the records folder (never the records)."""
    import os

    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "leaderboard-audit" / "pytest-cache"


def keep_cache_out(config: pytest.Config, records: str) -> None:
    """``pytest --audit DIR`` with no pytest configuration makes DIR the rootdir (pytest reads the
    option's value as a path before the plugin's options exist), and ``.pytest_cache/`` would be
    written into the user's records. Records are read-only: the cache goes to
    ``$XDG_CACHE_HOME/leaderboard-audit/pytest-cache/<hash of the rootdir>`` instead."""
    import hashlib

    from .guard import inside

    pm = config.pluginmanager
    if pm.is_blocked("cacheprovider") or not pm.has_plugin("cacheprovider"):
        return  # -p no:cacheprovider: no cache is written, and cache_dir is no known ini key
    try:
        root = config.rootpath
    except AttributeError:  # pragma: no cover - very old pytest
        return
    rec = Path(records)
    if not (inside(root, rec) or (rec.is_file() and inside(root, rec.parent))):
        return
    where = records_free_cache_home() / hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
    try:
        from _pytest.config.findpaths import parse_override_ini

        config._inicfg.update(parse_override_ini([f"cache_dir={where}"]))  # as pytest applies -o
        config._inicache.clear()
    except (ImportError, AttributeError, TypeError):  # another pytest: no cache at all, never one in the records
        config.pluginmanager.set_blocked("cacheprovider")


def settings_from_config(config: pytest.Config) -> dict[str, Any]:
    """Resolve and validate the settings (controller; workers receive them)."""
    from .checks import RegistryError
    from .settings import INI_KEYS, SettingsError, resolve_settings
    from .threshold_names import THRESHOLD_NAMES

    audit = config.getoption("audit")
    collect = config.getoption("audit_collect")
    if audit is not None and not str(audit).strip():
        raise pytest.UsageError("--audit: empty path (an unset CI variable?); pass a records directory or table")
    if collect is not None and not str(collect).strip():
        raise pytest.UsageError("--audit-collect: empty path; pass a collection spec (TOML)")
    try:
        ini = {k: config.getini(f"audit_{k}") for k in INI_KEYS}
        ini.update({f"threshold:{n}": config.getini(f"audit_{n}") for n in THRESHOLD_NAMES})
        cli = {
            "seed": config.getoption("audit_seed"),
            "boot": config.getoption("audit_boot"),
            "alpha": config.getoption("audit_alpha"),
            "strict": config.getoption("audit_strict"),
            "intersect": config.getoption("audit_intersect"),
        }
        resolved = resolve_settings(
            cli=cli,
            cli_thresholds=list(config.getoption("audit_threshold") or []),
            invocation_dir=config.invocation_params.dir,
            inipath=getattr(config, "inipath", None),
            ini=ini,
        )
    except SettingsError as exc:
        raise pytest.UsageError(str(exc)) from None
    except RegistryError as exc:  # a broken third-party check (B32): a usage error, not an INTERNALERROR
        raise pytest.UsageError(f"registered checks: {exc}") from None
    resolved.update(
        {
            "path": audit,
            "format": config.getoption("audit_format"),
            "mapping": config.getoption("audit_mapping"),
            "metric": config.getoption("audit_metric"),
            "report": config.getoption("audit_report"),
            "markdown": config.getoption("audit_markdown"),
            "html": config.getoption("audit_html"),
            "leaderboard": config.getoption("audit_leaderboard"),
            "collect": collect,
            "submission": list(dict.fromkeys(config.getoption("audit_submission") or [])),
            "gate": list(dict.fromkeys(config.getoption("audit_gate") or [])),
            "summary": config.getoption("audit_summary"),
            "cache": config.getoption("audit_cache"),
        }
    )
    check_outputs(resolved)
    return resolved


def check_outputs(settings: dict[str, Any]) -> None:
    """Every report path is checked before the audit runs (a usage error naming the option)."""
    from .reports.outputs import SUFFIXES, output_problem

    for opt, key in (
        ("--audit-report", "report"),
        ("--audit-markdown", "markdown"),
        ("--audit-html", "html"),
        ("--audit-leaderboard", "leaderboard"),
    ):
        path = settings.get(key)
        if path is not None:
            problem = output_problem(opt, path, SUFFIXES[opt])
            if problem:
                raise pytest.UsageError(problem)


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
    if workerinput is not None and WORKER_KEY in workerinput:
        settings = json.loads(workerinput[WORKER_KEY])
    elif config.getoption("audit") is not None or config.getoption("audit_collect") is not None:
        settings = settings_from_config(config)
    else:
        if config.getoption("audit_submission"):
            raise pytest.UsageError("--audit-submission needs --audit PATH (or --audit-collect SPEC)")
        return
    from .arena.formats import aggregate_kind

    kind = aggregate_kind(settings.get("path"), settings.get("format"))
    if kind is not None:  # an arena or a published table: no records (arena/session.py)
        from .arena.session import start

        return start(config, settings, kind)
    if workerinput is None:
        limit_worker_threads(config)
    from .audit_session import AuditSession

    session = AuditSession(config, settings, audits_dir())
    config.pluginmanager.register(session, PLUGIN_NAME)
    here = str(session.audits_dir)
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        if here not in config.args:
            config.args.append(here)
    else:  # no explicit paths: audit only, do not also run the project's own tests
        config.args[:] = [here]


#: the thread pools of numpy's BLAS (and OpenMP) that a worker would otherwise size to every CPU
THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def limit_worker_threads(config: pytest.Config) -> None:
    """Under ``-n N`` each xdist worker's BLAS gets ``cpus // N`` threads (at least 1).

    Every worker would start one BLAS thread per CPU for the matrix products (robust-only
    counts, the harness-averaged order, champions): N workers then run N x cpus threads on
    cpus cores and lose to serial (docs/performance.md, "xdist"). The workers inherit the
    controller's environment when xdist starts them (after ``pytest_configure``); a value the
    user set is kept."""
    import os

    tx = config.getoption("tx", None) or []
    if config.getoption("dist", "no") == "no" or not tx:
        return
    per = str(max(1, (os.cpu_count() or 1) // len(tx)))
    added = [var for var in THREAD_VARS if var not in os.environ]
    for var in added:
        os.environ[var] = per
    config.add_cleanup(lambda: [os.environ.pop(var, None) for var in added])  # the controller's own env, as it was


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


@pytest.hookimpl(optionalhook=True, tryfirst=True)  # before xdist's own (one per CPU)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` on an audit: serial below the break-even (10 s of predicted statistics), else xdist's count
    (``xdist_scheduling.auto_workers``; docs/performance.md, "xdist")."""
    path = config.getoption("audit", None)
    if not path or config.getoption("audit_collect", None):
        return None
    import os

    from .xdist_scheduling import auto_workers

    return auto_workers(str(path), os.cpu_count() or 1)


# -- public fixtures ---------------------------------------------------------------------


@pytest.fixture(scope="session")
def audit_records(request: pytest.FixtureRequest) -> Any:
    """The audited records (``leaderboard_audit.Records``) of this run: loaded once per
    process from ``--audit PATH``, or produced by ``--audit-collect SPEC.toml``.
    Skips the test when the run has no records."""
    session = request.config.pluginmanager.get_plugin(PLUGIN_NAME)
    if session is None:
        pytest.skip("no records: run with --audit PATH (or --audit-collect SPEC.toml)")
    return session.records


@pytest.fixture(scope="session")
def audit_collect(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """``audit_collect(spec)`` -> Records: run the collector (vLLM or another engine) for a
    collection spec (TOML path or dict) once per session under a file lock (xdist
    workers wait for the one that collects), then load the records it wrote."""
    done: dict[str, Any] = {}

    def collect(spec: Any) -> Any:
        key = json.dumps(spec, sort_keys=True, default=str) if isinstance(spec, dict) else str(Path(spec).resolve())
        if key not in done:
            from .collect_once import collect_once
            from .records import load_records

            done[key] = load_records(collect_once(spec, request.config))
        return done[key]

    return collect


@pytest.fixture
def audit_verdict(request: pytest.FixtureRequest) -> Callable[..., dict[str, Any]]:
    """``audit_verdict(check, value, pass_at=..., warn_at=None, higher_is_better=True,
    scope="pooled", message="", vid=None, evidence=None)`` judges a value you computed
    and records the verdict like a bundled check's: pass / warn (a ``W`` status) /
    fail (the test fails with the evidence), with its margin, in the JSON/Markdown/HTML
    reports, the terminal summary and JUnit ``audit_*`` properties."""
    from .audit_session import record_verdict
    from .verdicts import judge, make_verdict

    def verdict(
        check: str,
        value: float,
        *,
        pass_at: float,
        warn_at: float | None = None,
        higher_is_better: bool = True,
        scope: str = "pooled",
        message: str = "",
        vid: str | None = None,
        evidence: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        status, margin = judge(value, pass_at=pass_at, warn_at=warn_at, higher_is_better=higher_is_better)
        op = ">=" if higher_is_better else "<="
        text = message or f"{check}: value {value:.3f} (pass {op} {pass_at:g}" + (
            f", warn {op} {warn_at:g})" if warn_at is not None else ")"
        )
        v = make_verdict(
            check, vid or f"{check}[{scope}]", status, float(value), float(pass_at), margin, text, evidence
        )
        v["scope"] = scope
        v["user"] = True
        record_verdict(request.node, v)
        return v

    return verdict


__all__ = ["PLUGIN_NAME", "WORKER_KEY", "audit_collect", "audit_records", "audit_verdict", "audits_dir"]
