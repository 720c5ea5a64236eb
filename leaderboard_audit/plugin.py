"""pytest plugin (entry point ``pytest11``): ``pytest --audit RECORDS``.

Import-light on purpose: this module loads at every pytest start, so numpy and
the audit code are imported inside hooks, and only when ``--audit`` is given.
"""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

PLUGIN_NAME = "leaderboard-audit-session"
WORKER_KEY = "leaderboard_audit"
THRESHOLD_NAMES = ("band_pass", "band_warn", "fragile_share", "champion_items", "axes_pass",
                   "axes_warn", "brittleness_pass", "brittleness_warn", "compression_k")


class AuditWarning(UserWarning):
    """A check that passed with a warning (shown as WARN in the test summary)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("leaderboard-audit", "audit a leaderboard's order against harness configs")
    g.addoption("--audit", metavar="PATH", default=None,
                help="records to audit: a records-v1 directory or a long CSV/Parquet table")
    g.addoption("--audit-format", default="auto", choices=("auto", "records", "table", "lm-eval", "helm"),
                help="how to read --audit PATH (default: auto)")
    g.addoption("--audit-mapping", metavar="MAP.json", default=None,
                help="lm-eval/helm: which run is which model, benchmark and config (default SRC/audit_mapping.json)")
    g.addoption("--audit-metric", metavar="NAME", default=None,
                help="lm-eval/helm: the per-sample metric that is the correctness bit (acc, acc_norm, exact_match)")
    g.addoption("--audit-seed", type=int, default=None, help="global seed (default 1234)")
    g.addoption("--audit-boot", type=int, default=None, help="bootstrap resamples for pair CIs (default 10000)")
    g.addoption("--audit-strict", action="store_true", default=None, help="a warn makes the run fail (exit 1)")
    g.addoption("--audit-report", metavar="PATH.json", default=None, help="write the report-v1 JSON here")
    g.addoption("--audit-markdown", metavar="PATH.md", default=None, help="write a Markdown report here")
    g.addoption("--audit-html", metavar="PATH.html", default=None, help="write a self-contained HTML report here")
    g.addoption("--audit-threshold", metavar="NAME=VALUE", action="append", default=[],
                help=f"override a verdict threshold ({', '.join(THRESHOLD_NAMES)})")
    g.addoption("--audit-intersect", action="store_true", default=None,
                help="audit the items common to all models instead of failing on unmatched records")
    g.addoption("--audit-collect", metavar="SPEC.toml", default=None,
                help="produce the records first by running models (collection spec); then audit them")
    g.addoption("--audit-submission", metavar="MODEL", action="append", default=[],
                help="audit only what this new model's arrival changes (repeatable)")
    g.addoption("--audit-summary", choices=("full", "short", "none"), default="full",
                help="terminal summary detail (default: full)")
    parser.addini("audit_seed", "leaderboard-audit global seed", default="1234")
    parser.addini("audit_boot", "bootstrap resamples", default="10000")
    parser.addini("audit_strict", "treat warn as failure", type="bool", default=False)
    for name in THRESHOLD_NAMES:
        parser.addini(f"audit_{name}", f"leaderboard-audit threshold {name}", default=None)


def _find_pyproject(config: pytest.Config) -> Path | None:
    """pytest's own pyproject.toml if it uses one, else the nearest one above the
    invocation directory (pytest's rootdir can be pulled away by --audit PATH)."""
    inipath = getattr(config, "inipath", None)
    if inipath is not None and Path(inipath).name == "pyproject.toml":
        return Path(inipath)
    here = Path(config.invocation_params.dir).resolve()
    for d in (here, *here.parents):
        if (d / "pyproject.toml").is_file():
            return d / "pyproject.toml"
    return None


def _pyproject_table(config: pytest.Config) -> dict[str, Any]:
    """``[tool.leaderboard_audit]`` from the project's pyproject.toml, if any."""
    path = _find_pyproject(config)
    if path is None:
        return {}
    import tomllib
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise pytest.UsageError(f"{path}: cannot read [tool.leaderboard_audit]: {exc}") from None
    table = data.get("tool", {}).get("leaderboard_audit", {})
    return table if isinstance(table, dict) else {}


def resolve_settings(config: pytest.Config) -> dict[str, Any]:
    """Plain, serializable settings: command line > ini > [tool.leaderboard_audit] > defaults."""
    table = _pyproject_table(config)
    thresholds: dict[str, Any] = {k: v for k, v in table.get("thresholds", table).items()
                                  if k in THRESHOLD_NAMES}
    for name in THRESHOLD_NAMES:
        v = config.getini(f"audit_{name}")
        if v not in (None, "", []):
            thresholds[name] = v
    for item in config.getoption("audit_threshold") or []:
        name, sep, value = item.partition("=")
        if not sep or name.strip() not in THRESHOLD_NAMES:
            raise pytest.UsageError(f"--audit-threshold {item!r}: expected NAME=VALUE with NAME in "
                                    f"{', '.join(THRESHOLD_NAMES)}")
        thresholds[name.strip()] = value
    for name, value in thresholds.items():
        try:
            float(value)
        except (TypeError, ValueError):
            raise pytest.UsageError(f"audit threshold {name}={value!r} is not a number") from None

    def pick(opt: str, ini: str, key: str, cast: Any) -> Any:
        v = config.getoption(opt)
        if v is not None:
            return cast(v)
        if key in table:
            return cast(table[key])
        return cast(config.getini(ini))

    return {
        "path": config.getoption("audit"),
        "format": config.getoption("audit_format"),
        "mapping": config.getoption("audit_mapping"),
        "metric": config.getoption("audit_metric"),
        "seed": pick("audit_seed", "audit_seed", "seed", int),
        "boot": pick("audit_boot", "audit_boot", "boot", int),
        "strict": bool(config.getoption("audit_strict") or table.get("strict") or config.getini("audit_strict")),
        "intersect": bool(config.getoption("audit_intersect") or table.get("intersect", False)),
        "report": config.getoption("audit_report"),
        "markdown": config.getoption("audit_markdown"),
        "html": config.getoption("audit_html"),
        "collect": config.getoption("audit_collect"),
        "submission": list(config.getoption("audit_submission") or []),
        "summary": config.getoption("audit_summary"),
        "thresholds": {k: thresholds[k] for k in sorted(thresholds)},
    }


@functools.lru_cache(maxsize=1)
def audits_dir() -> Path:
    import importlib.util
    spec = importlib.util.find_spec("leaderboard_audit.audits")
    assert spec is not None and spec.submodule_search_locations
    return Path(list(spec.submodule_search_locations)[0]).resolve()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "audit: a leaderboard-audit check")
    if not (config.getoption("audit") or config.getoption("audit_collect")):
        return
    settings = resolve_settings(config)
    if settings["boot"] < 100:
        raise pytest.UsageError(f"--audit-boot {settings['boot']}: use at least 100 resamples")
    from .audit_session import AuditSession
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
        if collection_path.resolve() == audits_dir() or audits_dir() in collection_path.resolve().parents:
            return True
    except (OSError, AssertionError):
        return None
    return None
