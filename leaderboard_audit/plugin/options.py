"""The plugin's options and how a run's settings are resolved from them (controller side;
xdist workers receive the resolved settings through ``workerinput``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ..settings import SUMMARY_CHOICES

#: config.stash: the CPU count ``-n auto`` asked for when the plugin ran the audit in one pytest
#: process instead (``pytest_xdist_auto_num_workers``): the audit's own processes use them
AUTO_WORKERS = pytest.StashKey[int]()
#: config.stash: the process count came from ``auto`` (``-n auto`` or ``--audit-workers auto``):
#: the grid's size decides whether to use them (``engine.parallel.auto_workers``)
WORKERS_ARE_AUTO = pytest.StashKey[bool]()


def add_options(parser: pytest.Parser) -> None:
    """The ``--audit*`` options and ``audit_*`` ini keys."""
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
    from ..arena.formats import all_names as aggregate_names, format_names as aggregate_formats
    from ..formats import audit_format_arg, audit_format_metavar, format_names, formats_help, metric_help

    g.addoption(
        "--audit-format",
        default="auto",
        type=_format_arg(audit_format_arg(), aggregate_names()),
        metavar=audit_format_metavar()[:-1] + "," + ",".join(aggregate_formats()) + "}"
        if audit_format_metavar().endswith("}")
        else audit_format_metavar(),
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
    from ..reports.outputs import OUTPUTS

    for o in OUTPUTS:
        g.addoption(o.option, metavar=o.metavar, default=None, help=o.help)
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
        "--audit-allow-undecided",
        action="store_true",
        default=None,
        help="with --audit-submission: a gating verdict left undecided by cells the newcomer withheld "
        "(not_collected, failed, not_possible) warns instead of failing the gate (docs/ci-gate.md)",
    )
    g.addoption(
        "--audit-cache",
        metavar="DIR",
        default=None,
        help="load cache folder (default $LEADERBOARD_AUDIT_CACHE or $XDG_CACHE_HOME/leaderboard-audit; "
        "'off' to disable)",
    )
    g.addoption(
        "--audit-workers",
        metavar="N",
        default=None,
        help="processes that compute the audit (default: -n's count, else 1; 'auto': one per CPU); "
        "the report is the same bytes",
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
    parser.addini(
        "audit_allow_undecided",
        "leaderboard-audit gate: undecided verdicts on cells the newcomer withheld do not block",
        default=None,
    )
    from ..settings import bundled_threshold_names

    for name in bundled_threshold_names():
        parser.addini(f"audit_{name}", f"leaderboard-audit threshold {name}", default=None)


def audit_alone_under_xdist(config: pytest.Config) -> bool:
    """Whether ``-n N`` (N >= 1) was given for the audit alone: no test paths of the user's on
    the command line (the plugin then collects only the audit's tests). xdist's workers would
    only look the finished verdicts up and send each test's report to the controller: slower
    than the one process that computed them (docs/performance.md, "When -n pays")."""
    n = config.getoption("numprocesses", None)
    return (
        isinstance(n, int)
        and n >= 1
        and config.getoption("dist", "no") != "no"
        and config.args_source != pytest.Config.ArgsSource.ARGS
    )


def audit_workers(config: pytest.Config) -> int:
    """How many processes compute the audit: ``--audit-workers``, else ``-n``'s count (``-n auto``
    included), else 1. From ``auto``, at most that many: the grid's size decides (``compute``)."""
    import os

    raw = config.getoption("audit_workers", None)
    if raw is not None:
        text = str(raw).strip()
        if text == "auto":
            config.stash[WORKERS_ARE_AUTO] = True
            return max(1, os.cpu_count() or 1)
        try:
            n = int(text)
        except ValueError:
            n = 0
        if n < 1:
            raise pytest.UsageError(f"--audit-workers {raw!r}: a whole number of processes >= 1, or auto")
        return n
    n = config.getoption("numprocesses", None)
    if isinstance(n, int) and n >= 1:
        return n
    if AUTO_WORKERS in config.stash:
        config.stash[WORKERS_ARE_AUTO] = True
        return config.stash[AUTO_WORKERS]
    return 1


def records_free_cache_home() -> Path:
    """Where pytest's cache goes when the rootdir is the records folder (never the records)."""
    from ..records.cache import cache_home

    return cache_home() / "pytest-cache"


def _format_arg(records_arg, aggregates: tuple[str, ...]):
    """``type=`` of ``--audit-format``: an aggregate input's name or alias as given (``arena.formats``
    canonicalises it), else a records format or an importer's name (``formats.audit_format_arg``)."""

    def convert(value: str) -> str:
        return value if value in aggregates else records_arg(value)

    return convert


def keep_cache_out(config: pytest.Config, records: str) -> None:
    """``pytest --audit DIR`` with no pytest configuration makes DIR the rootdir (pytest reads the
    option's value as a path before the plugin's options exist), and ``.pytest_cache/`` would be
    written into the user's records. Records are read-only: the cache goes to
    ``$XDG_CACHE_HOME/leaderboard-audit/pytest-cache/<hash of the rootdir>`` instead."""
    import hashlib

    from .guard import inside

    try:
        root = config.rootpath
    except AttributeError:  # pragma: no cover - very old pytest
        return
    rec = Path(records)
    if not (inside(root, rec) or (rec.is_file() and inside(root, rec.parent))):
        return
    if config.pluginmanager.is_blocked("cacheprovider"):  # -p no:cacheprovider: no cache to move
        return
    where = records_free_cache_home() / hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
    try:
        # private pytest API, the one way to move the cache before the cacheprovider reads
        # cache_dir: a plugin cannot set an ini value publicly (pytest-dev/pytest#3311, #204);
        # another pytest falls back to no cache at all below, never one in the records
        from _pytest.config.findpaths import parse_override_ini

        config._inicfg.update(parse_override_ini([f"cache_dir={where}"]))  # as pytest applies -o
        config._inicache.clear()
    except (ImportError, AttributeError, TypeError):  # another pytest: no cache at all, never one in the records
        config.pluginmanager.set_blocked("cacheprovider")


def settings_from_config(config: pytest.Config) -> Any:
    """Resolve and validate the settings (controller; workers receive them)."""
    from ..checks import RegistryError
    from ..reports.outputs import OUTPUTS
    from ..settings import INI_KEYS, SettingsError, resolve_settings
    from ..settings import bundled_threshold_names

    audit = config.getoption("audit")
    collect = config.getoption("audit_collect")
    if audit is not None and not str(audit).strip():
        raise pytest.UsageError("--audit: empty path (an unset CI variable?); pass a records directory or table")
    if collect is not None and not str(collect).strip():
        raise pytest.UsageError("--audit-collect: empty path; pass a collection spec (TOML)")
    try:
        ini = {k: config.getini(f"audit_{k}") for k in INI_KEYS}
        ini.update({f"threshold:{n}": config.getini(f"audit_{n}") for n in bundled_threshold_names()})
        cli = {
            "seed": config.getoption("audit_seed"),
            "boot": config.getoption("audit_boot"),
            "alpha": config.getoption("audit_alpha"),
            "strict": config.getoption("audit_strict"),
            "allow_undecided": config.getoption("audit_allow_undecided"),
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
            **{o.key: config.getoption(o.option) for o in OUTPUTS},
            "collect": collect,
            "submission": list(dict.fromkeys(config.getoption("audit_submission") or [])),
            "gate": list(dict.fromkeys(config.getoption("audit_gate") or [])),
            "summary": config.getoption("audit_summary"),
            "cache": config.getoption("audit_cache"),
            "workers": audit_workers(config),
        }
    )
    check_outputs(resolved)
    from ..settings import Settings

    return Settings(**resolved)


def check_outputs(settings: dict[str, Any]) -> None:
    """Every report path is checked before the audit runs (a usage error naming the option)."""
    from ..reports.outputs import OUTPUTS, output_problem

    for o in OUTPUTS:
        path = settings.get(o.key)
        if path is not None:
            problem = output_problem(o.option, path, o.suffixes)
            if problem:
                raise pytest.UsageError(problem)


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
