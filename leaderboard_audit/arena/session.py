"""pytest glue for aggregate inputs: ``pytest --audit arena.json`` (or a published table).

The plugin hands an input that ``arena.formats`` recognises to :func:`start`: the input
file itself is collected, one test per verdict (``test_<check>[<id>]``): a fail fails,
a warn passes (fails under ``--audit-strict``), a skipped verdict skips with its reason.
``--audit-report`` writes the aggregate report (JSON), ``--audit-markdown`` a short
Markdown summary; the terminal summary names the champions and the next steps. The
audit is computed once per process: under xdist each worker computes it and the
controller again for the outputs (no speed-up; run these inputs without ``-n``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .inputs import audit_input, read_input  # noqa: F401 - the session's, re-exported

ARENA_PLUGIN = "leaderboard-audit-aggregate"
NOT_FOR_AGGREGATES = (("html", "--audit-html"), ("leaderboard", "--audit-leaderboard"), ("collect", "--audit-collect"))


def start(config: pytest.Config, settings: dict[str, Any], kind: str) -> None:
    """Register the aggregate session and make the input file the thing pytest collects."""
    for key, flag in NOT_FOR_AGGREGATES:
        if settings.get(key):
            raise pytest.UsageError(
                f"{flag} is not available for a {kind} input; use --audit-report or --audit-markdown"
            )
    if settings.get("submission"):
        raise pytest.UsageError(f"--audit-submission is not available for a {kind} input")
    import importlib.util

    from .data import ArenaInputError

    if kind in ("arena-counts", "arena-battles") and importlib.util.find_spec("scipy") is None:
        raise pytest.UsageError(
            f"--audit {settings['path']} ({kind}): needs scipy: pip install 'leaderboard-audit[arena]'"
        )
    try:
        data = read_input(settings["path"], kind)
    except ArenaInputError as exc:
        raise pytest.UsageError(f"--audit {settings['path']} ({kind}): {exc}") from None
    session = AggregateSession(config, settings, kind, data)
    config.pluginmanager.register(session, ARENA_PLUGIN)
    here = str(Path(settings["path"]).resolve())
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        if here not in config.args:
            config.args.append(here)
    else:
        config.args[:] = [here]


def write_atomic(path: str, text: str) -> None:
    """The project's atomic writer (temp file, fsync, rename; the umask's permissions)."""
    from ..records.writer import atomic_write_bytes

    atomic_write_bytes(path, text.encode("utf-8"))


def markdown(report: dict[str, Any]) -> str:
    lines = [f"# Audit of {report['source']} ({report['kind']})", ""]
    if report["next_steps"]:
        lines += ["## What to do next", ""] + [f"{k}. {s}" for k, s in enumerate(report["next_steps"], 1)] + [""]
    lines += ["## Champions", "", "| configuration | champion |", "|---|---|"]
    lines += [f"| {c} | {', '.join(ms)} |" for c, ms in report["champions"].items()]
    lines += ["", "## Orders against the reference", "", "| configuration | Kendall tau | reversed adjacent pairs |"]
    lines += ["|---|---|---|"]
    for o in report["orders"]:
        tau = "n/a" if o["kendall_tau"] is None else f"{o['kendall_tau']:.3f}"
        lines.append(f"| {o['config']} | {tau} | {o['reversed']} of {o['adjacent_pairs']} |")
    lines += ["", "## Verdicts", "", "| id | status | message |", "|---|---|---|"]
    lines += [f"| `{v['id']}` | {v['status']} | {v['message'].replace('|', '/')} |" for v in report["verdicts"]]
    return "\n".join(lines) + "\n"


class AggregateFailure(Exception):
    pass


class VerdictItem(pytest.Item):
    def __init__(self, *, verdict: dict[str, Any], strict: bool, **kw: Any) -> None:
        super().__init__(**kw)
        self.verdict = verdict
        self.strict = strict
        self.add_marker("audit")
        for key in ("status", "value", "threshold", "margin"):
            self.user_properties.append((f"audit_{key}", verdict.get(key)))

    def runtest(self) -> None:
        v = self.verdict
        if v["status"] == "skip":
            pytest.skip(v["message"])
        if v["status"] == "fail" or (v["status"] == "warn" and self.strict):
            raise AggregateFailure(f"{v['status'].upper()} {v['id']}: {v['message']}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, AggregateFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, self.name


class AggregateFile(pytest.File):
    def collect(self) -> Any:
        session: AggregateSession = self.config.pluginmanager.get_plugin(ARENA_PLUGIN)
        for v in session.report["verdicts"]:
            inside = v["id"][len(v["check"]) :]
            yield VerdictItem.from_parent(self, name=f"test_{v['check']}{inside}", verdict=v, strict=session.strict)


class AggregateSession:
    def __init__(self, config: pytest.Config, settings: dict[str, Any], kind: str, data: Any) -> None:
        from .audit import DEFAULT_ARENA_BOOT

        self.config = config
        self.settings = settings
        self.kind = kind
        self.path = Path(settings["path"]).resolve()
        boot_given = config.getoption("audit_boot") is not None or config.getini("audit_boot")
        self.n_boot = int(settings["boot"]) if boot_given else DEFAULT_ARENA_BOOT
        self.strict = bool(settings.get("strict"))
        self.data = data
        self._collected = False
        self._report: dict[str, Any] | None = None

    @property
    def report(self) -> dict[str, Any]:
        if self._report is None:
            self._report = audit_input(
                self.data, n_boot=self.n_boot, seed=int(self.settings["seed"]), alpha=float(self.settings["alpha"])
            )
        return self._report

    @property
    def records(self) -> Any:
        pytest.skip(f"a {self.kind} input has no records (no item set per model)")

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
        """The input file holds the tests; a folder input (judge outputs), its first file
        pytest meets (once)."""
        here = file_path.resolve()
        if here == self.path or (not self._collected and self.path.is_dir() and self.path in here.parents):
            self._collected = True
            return AggregateFile.from_parent(parent, path=file_path)
        return None

    def _controller_report(self) -> dict[str, Any] | None:
        """The report on the process that writes outputs: computed here too when xdist
        workers collected the tests (the controller collects none)."""
        if getattr(self.config, "workerinput", None) is not None:
            return None
        if self._report is None and getattr(self.config.option, "numprocesses", None):
            return self.report
        return self._report

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        r = self._controller_report() if self.settings.get("report") or self.settings.get("markdown") else None
        if r is None:
            return
        if self.settings.get("report"):
            write_atomic(self.settings["report"], json.dumps(r, sort_keys=True, indent=1) + "\n")
        if self.settings.get("markdown"):
            write_atomic(self.settings["markdown"], markdown(r))

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
        if self.settings.get("summary") == "none":
            return
        r = self._controller_report()
        if r is None:
            return
        tr = terminalreporter
        tr.section(f"leaderboard-audit: {self.kind}")
        tr.write_line(f"{r['source']}: {len(r['models'])} models, reference {r['reference']}")
        for c, ms in r["champions"].items():
            tr.write_line(f"  champion under {c}: {', '.join(ms)}")
        for o in r["orders"]:
            tau = "n/a" if o["kendall_tau"] is None else f"{o['kendall_tau']:.3f}"
            tr.write_line(
                f"  {o['config']}: Kendall tau {tau}, {o['reversed']} of {o['adjacent_pairs']} adjacent pairs reversed"
            )
        if r.get("identified"):
            tr.write_line(f"  identified order: {len(r['identified']['tiers'])} tiers")
        for k, s in enumerate(r["next_steps"], 1):
            tr.write_line(f"  next {k}. {s}")


__all__ = ["ARENA_PLUGIN", "AggregateSession", "audit_input", "markdown", "read_input", "start"]
