"""The per-run side of the plugin: load records once per process, compute scopes
lazily, attach verdicts to reports, merge worker output, print and write reports."""
from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from .plugin import WORKER_KEY, AuditWarning

VERDICT_KEY = pytest.StashKey[dict]()
CHECK_ORDER = ("band", "manufactured", "champions", "compression", "axes", "brittleness")


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _uses_xdist_controller(config: pytest.Config) -> bool:
    return not _is_worker(config) and bool(getattr(config.option, "numprocesses", None)) \
        and config.pluginmanager.has_plugin("dsession")


class AuditCheck:
    """What a test in audits/ receives: one verdict, and how to enforce it."""

    def __init__(self, item: pytest.Item, v: dict[str, Any]):
        self.item = item
        self.verdict = v

    @property
    def status(self) -> str:
        return self.verdict["status"]

    def enforce(self) -> None:
        from .reports.terminal import evidence_block
        v = self.verdict
        self.item.stash[VERDICT_KEY] = v
        for key in ("status", "value", "threshold", "margin"):
            self.item.user_properties.append((f"audit_{key}", v[key]))
        if v["status"] == "fail":
            pytest.fail(evidence_block(v), pytrace=False)
        if v["status"] == "warn":
            warnings.warn(AuditWarning(f"{v['id']}: {v['message']}"), stacklevel=2)


class AuditSession:
    def __init__(self, config: pytest.Config, settings: dict[str, Any], audits_dir: Path):
        self.config = config
        self.settings = settings
        self.audits_dir = audits_dir
        self._records = None
        self._scopes: dict[str, dict[str, Any]] = {}
        self._summary: dict[str, Any] | None = None
        self._thresholds = None
        self.verdicts: dict[str, dict[str, Any]] = {}     # id -> verdict, from reports
        self.worker_scopes: dict[str, dict[str, Any]] = {}
        self.worker_summary: dict[str, Any] | None = None

    # -- records and scopes (once per process) ---------------------------------
    @property
    def thresholds(self):
        if self._thresholds is None:
            from .verdicts import Thresholds
            try:
                self._thresholds = Thresholds.from_mapping(self.settings["thresholds"])
            except ValueError as exc:
                raise pytest.UsageError(str(exc)) from None
        return self._thresholds

    def records_path(self) -> str:
        path = self.settings["path"]
        if self.settings["collect"]:
            from .collect_fixture import collect_once
            out = collect_once(self.settings["collect"], self.config)
            path = path or str(out)
        if not path:
            raise pytest.UsageError("--audit PATH is required")
        return path

    @property
    def records(self):
        if self._records is None:
            from .loading import load_for_audit
            from .records import RecordsError
            path = self.records_path()
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    self._records = load_for_audit(path, self.settings["format"],
                                                   intersect=self.settings["intersect"],
                                                   mapping=self.settings["mapping"],
                                                   metric=self.settings["metric"])
            except RecordsError as exc:
                raise pytest.UsageError(f"--audit {path}: {exc}") from None
            except FileNotFoundError as exc:
                raise pytest.UsageError(f"--audit {path}: {exc}") from None
            self.settings["path"] = path
        return self._records

    def scope(self, name: str) -> dict[str, Any]:
        if name not in self._scopes:
            from .report import audit_scope
            self._scopes[name] = audit_scope(self.records, name, seed=self.settings["seed"],
                                             n_boot=self.settings["boot"], thresholds=self.thresholds)
        return self._scopes[name]

    def summary(self) -> dict[str, Any]:
        if self._summary is None:
            from .report import records_summary
            from .records.fingerprint import sha256_of
            path = self.settings["path"]
            self._summary = records_summary(self.records, path, sha256_of(path))
        return self._summary

    def case_ids(self, check: str) -> list[tuple[str, str, str]]:
        """(scope, verdict id, test id) for one check, deterministic on every worker."""
        from .loading import case_ids
        return case_ids(self.records, check)

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        # Load (and validate) once, up front: bad records are one usage error naming
        # file and line, not a collection error per worker.
        _ = self.records
        if self.settings["submission"]:
            from .loading import check_submission
            check_submission(self.records, self.settings["submission"])

    # -- collection --------------------------------------------------------------
    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector):
        # The bundled checks are collected whatever the project's python_files says.
        if file_path.suffix == ".py" and file_path.name.startswith("test_") \
                and file_path.parent.resolve() == self.audits_dir:
            from _pytest.python import path_matches_patterns
            if not path_matches_patterns(file_path, parent.config.getini("python_files")):
                return pytest.Module.from_parent(parent, path=file_path)
        return None

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "audit_check" not in metafunc.fixturenames:
            return
        check = metafunc.function.__name__.removeprefix("test_")
        cases = self.case_ids(check)
        if self.settings["submission"]:
            from .loading import submission_filter
            cases = submission_filter(self.records, check, cases, self.settings["submission"])
        metafunc.parametrize("audit_check", [(c[0], c[1]) for c in cases], ids=[c[2] for c in cases],
                             indirect=True)

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        # A check with no case here (e.g. --audit-submission) is deselected, not skipped.
        drop = [it for it in items if "audit_check" in getattr(it, "fixturenames", ())
                and not isinstance(getattr(getattr(it, "callspec", None), "params", {}).get("audit_check"), tuple)]
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = [it for it in items if it not in drop]

    @pytest.fixture
    def audit_check(self, request: pytest.FixtureRequest) -> AuditCheck:
        scope, vid = request.param
        for v in self.scope(scope)["verdicts"]:
            if v["id"] == vid:
                return AuditCheck(request.node, v)
        raise LookupError(f"no verdict {vid}")  # pragma: no cover - collection and audit disagree

    # -- reports -------------------------------------------------------------------
    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        rep = yield
        v = item.stash.get(VERDICT_KEY, None)
        if v is not None and rep.when == "call":
            rep.audit_verdict = {k: v[k] for k in ("check", "id", "status", "value", "threshold",
                                                   "margin", "message")}
        return rep

    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config):
        v = getattr(report, "audit_verdict", None)
        if v and report.when == "call" and report.passed and v["status"] == "warn":
            return "warn", "W", ("WARN", {"yellow": True})
        return None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        v = getattr(report, "audit_verdict", None)
        if v and report.when == "call":
            self.verdicts[v["id"]] = v

    # -- xdist: workers send their scopes, the controller merges ---------------------
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if _is_worker(self.config):
            payload = {"scopes": self._scopes,
                       "summary": self.summary() if self._records is not None else None}
            self.config.workeroutput[WORKER_KEY] = json.dumps(payload, sort_keys=True)
            return
        report = self.report()
        if report is not None:
            self.write_outputs(report)
        if self.settings["strict"] and session.exitstatus == 0 and \
                any(v["status"] == "warn" for v in self.verdicts.values()):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        raw = getattr(node, "workeroutput", {}).get(WORKER_KEY)
        if not raw:
            return
        data = json.loads(raw)
        self.worker_scopes.update(data["scopes"])
        if data["summary"] is not None:
            self.worker_summary = data["summary"]

    def all_scopes(self) -> dict[str, dict[str, Any]]:
        merged = dict(self.worker_scopes)
        merged.update(self._scopes)
        return merged

    def report(self) -> dict[str, Any] | None:
        """Built once on the controller (sessionfinish writes it, the summary prints it)."""
        if getattr(self, "_report", None) is None:
            self._report = self._build_report()
        return self._report

    def _build_report(self) -> dict[str, Any] | None:
        scopes = self.all_scopes()
        summary = self.worker_summary or (self.summary() if self._records is not None else None)
        if summary is None:
            return None
        from .report import build_report
        rep = build_report(summary, scopes, seed=self.settings["seed"], n_boot=self.settings["boot"],
                           thresholds=self.thresholds)
        if self.settings["submission"]:
            rep["submission"] = list(self.settings["submission"])
        if self._records is not None:  # legend, pair evidence, submission audit (need the Records)
            from .reports.evidence import enrich_report
            enrich_report(rep, self._records, submission=self.settings["submission"],
                          seed=self.settings["seed"], n_boot=self.settings["boot"],
                          thresholds=self.thresholds, strict=self.settings["strict"])
        return rep

    def write_outputs(self, report: dict[str, Any]) -> None:
        from .records.writer import atomic_write_bytes
        from .report import dumps_report
        if self.settings["report"]:
            atomic_write_bytes(self.settings["report"], dumps_report(report).encode())
        if self.settings["markdown"]:
            from .reports.markdown import render_markdown
            atomic_write_bytes(self.settings["markdown"], render_markdown(report).encode())
        if self.settings["html"]:
            from .reports.html import render_html
            atomic_write_bytes(self.settings["html"], render_html(report).encode())

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
        if _is_worker(config) or self.settings["summary"] == "none":
            return
        report = self.report()
        if report is None:
            return
        if "submission_audit" in report:  # only the newcomer's checks, and one line on the state
            from .submission import render_submission_text
            text = render_submission_text(report, list(self.verdicts.values()), strict=self.settings["strict"],
                                          width=terminalreporter._tw.fullwidth)
        else:
            from .reports.terminal import render_summary
            text = render_summary(report, list(self.verdicts.values()), detail=self.settings["summary"],
                                  width=terminalreporter._tw.fullwidth)
        terminalreporter.write_sep("=", "leaderboard audit")
        for line in text.splitlines():
            terminalreporter.write_line(line)
