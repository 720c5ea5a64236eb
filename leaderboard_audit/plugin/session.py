"""One pytest run's audit: the records, loaded once by one process; the audit, computed once
by that process (in ``--audit-workers`` forked processes: ``engine.parallel``) before any
audit test runs; the tests, lookups of its finished verdicts; the report, written by that
process at the end.

Under pytest-xdist that process is the controller: it computes the audit before the workers
start (``pytest_sessionstart`` runs before xdist's, which starts them) and hands each worker
the finished verdicts with the settings (``workerinput``, pytest-randomly's pattern). A worker
never reads the records for the audit, holds no shared file, and reports its tests' outcomes
as xdist does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .names import FINISHED_KEY, PLUGIN_NAME, SETTINGS_KEY
from .results import (
    FAILURE_DETAILS_LIMIT,
    VERDICT_FIELDS,
    VERDICT_KEY,
    AuditCheck,
    add_user_verdicts,
    message_repr,
    report_copy,
)


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _process_ends_with(config: pytest.Config) -> bool:
    """Whether this pytest run is the last thing its process does: an xdist worker, or the run
    of the process's own command line (not ``pytest.main`` called by a program, nor pytester's
    in-process runs). Such a run leaves the heap it froze (``_freeze_heap``) frozen: the
    interpreter's exit then skips walking millions of objects it frees anyway."""
    import sys

    return _is_worker(config) or list(config.invocation_params.args) == sys.argv[1:]


def _matches(path: Path, patterns: list[str]) -> bool:
    import fnmatch

    return any(fnmatch.fnmatch(path.name, p) or ("/" in p and fnmatch.fnmatch(str(path), p)) for p in patterns)


class AuditSession:
    def __init__(self, config: pytest.Config, settings: Any, audits_dir: Path):
        self.config = config
        #: the resolved settings (``settings.Settings``, frozen)
        self.settings = settings
        self.path: str | None = settings.path
        self.sha256: str | None = settings.sha256
        self.audits_dir = audits_dir
        self._records: Any = None
        self._thresholds: Any = None
        #: check -> its tests: (scope, verdict id, test id, ((alias scope, id, test id), ...))
        self._tests: dict[str, list[tuple[Any, ...]]] | None = None
        self._folded: list[tuple[str, str]] = []  # (alias scope, the scope whose tests judge it)
        self.index: dict[str, dict[str, dict[str, Any]]] = {}  # scope -> verdict id -> verdict
        self.context: dict[str, dict[str, str]] = {}  # gate: scope -> verdict id -> why it does not gate
        self._scopes: dict[str, dict[str, Any]] = {}  # computed here
        self._evidence: dict[str, list[Any]] = {}  # pair evidence the audit's processes computed
        self._without: dict[str, dict[str, Any] | None] = {}  # gate: the board without the newcomers
        self._cache: Any = None  # the audit's DerivedCache (engine), made with the first scope
        self._payload: str | None = None  # controller: what each xdist worker receives
        self.selected: set[str] | None = None  # controller: the scopes the workers' tests judge
        finished = getattr(config, "workerinput", {}).get(FINISHED_KEY)
        if finished is not None:  # an xdist worker: the controller's finished audit
            got = json.loads(finished)
            self._tests = {
                k: [(s, v, t, tuple(map(tuple, a))) for s, v, t, a in lst] for k, lst in got["tests"].items()
            }
            self.index, self.context = got["index"], got["context"]
        self._report: dict[str, Any] | None = None
        self.output_errors: list[str] = []
        self.written: list[str] = []  # "--audit-html: wrote PATH (N bytes)", for the summary
        self.verdicts: dict[str, dict[str, Any]] = {}  # id -> verdict, from the tests' reports
        self.failed_tests = 0
        self.details_dropped = False
        self.test_outcomes: dict[str, int] = {}  # audit tests by outcome, for the counts line
        self.multi_verdict_tests = 0
        self._froze = False
        self._restore_stdout: Any = None
        self._flush_terminal: Any = None

    # -- settings and records (loaded once, by the process that audits) --------------------
    @property
    def thresholds(self) -> Any:
        if self._thresholds is None:
            from ..checks import Thresholds

            try:
                self._thresholds = Thresholds(self.settings.thresholds)
            except ValueError as exc:
                raise pytest.UsageError(str(exc)) from None
        return self._thresholds

    def records_path(self) -> str:
        path = self.path
        if self.settings.collect and not path:
            from .collect_once import collect_once

            path = str(collect_once(self.settings.collect, self.config))
            self.path = path
        if not path:
            raise pytest.UsageError("--audit PATH is required")
        return path

    @property
    def records(self) -> Any:
        if self._records is None:
            from ..records import RecordsError
            from ..records.missing import IncompleteRecordsError
            from ..engine.sources import load_records_for_run

            path = self.records_path()
            try:
                records, sha = load_records_for_run(path, self.settings, None)
            except (RecordsError, FileNotFoundError, IncompleteRecordsError) as exc:
                from ..reports.text import clean

                text = "\n".join(clean(line) for line in str(exc).splitlines())  # real newlines, not "\\n"
                raise pytest.UsageError(f"--audit {clean(path)}: {text}") from None
            if _is_worker(self.config) and self.sha256 is not None and sha is not None and sha != self.sha256:
                pytest.fail(
                    f"--audit {path}: the records changed during the run (sha256 {self.sha256[:16]}... when "
                    f"the audit was computed, {sha[:16]}... now): re-run",
                    pytrace=False,
                )
            self.sha256 = sha if sha is not None else self.sha256
            self._records = records
        return self._records

    def fingerprint(self) -> str:
        """The SHA-256 of the records the audit reads, taken as they load (``sources``)."""
        _ = self.records
        assert self.sha256 is not None
        return self.sha256

    def audit_kw(self) -> dict[str, Any]:
        return {
            "seed": self.settings.seed,
            "n_boot": self.settings.boot,
            "thresholds": self.thresholds,
            "alpha": self.settings.alpha,
        }

    # -- the audit: computed once, before the tests that look it up -------------------------
    def tests(self) -> dict[str, list[tuple[Any, ...]]]:
        """check -> its tests (an alias scope's cases folded in; the gate's only, with it)."""
        if self._tests is None:
            from ..engine import cases, collected_cases

            by_check = collected_cases(self.records, cases(self.records))
            self._folded = sorted({(a.scope, c.scope) for lst in by_check.values() for c in lst for a in c.also})
            if self.settings.submission:
                from ..engine.gate import submission_cases

                by_check = {k: submission_cases(v, self.settings.submission) for k, v in by_check.items()}
            self._tests = {
                k: [(c.scope, c.vid, c.test_id, tuple((a.scope, a.vid, a.test_id) for a in c.also)) for c in lst]
                for k, lst in by_check.items()
            }
        return self._tests

    def folded(self) -> list[tuple[str, str]]:
        """(alias scope, the scope whose tests judge its verdicts too): one benchmark's pooled."""
        self.tests()
        return self._folded

    def scopes_judged(self, tests: Any) -> set[str]:
        """The scopes the tests ``(check, test id)`` judge, with the scopes an alias reuses."""
        from ..engine import alias_of

        want = set(tests)
        out = {
            s
            for check, lst in self.tests().items()
            for scope, _, tid, also in lst
            if (check, tid) in want
            for s in (scope, *(a[0] for a in also))
        }
        return out | {alias_of(self.records, s) for s in out}

    def compute(self, names: Any = None) -> None:
        """The scopes ``names`` (default every one), their verdicts indexed, with the gate's
        board without the newcomers; each computed once."""
        from ..engine import audit_scopes, case_ids_by_scope, cases, scopes_of
        from ..metrics.per_model import DerivedCache, sharing

        records = self.records
        todo = [s for s in (scopes_of(records) if names is None else names) if s not in self._scopes]
        if not todo:
            return
        self._cache = self._cache or DerivedCache()
        if self._flush_terminal is not None:
            self._flush_terminal()  # the progress shown is current while it computes
        workers = max(1, int(self.settings.workers))
        from .options import WORKERS_ARE_AUTO

        if self.config.stash.get(WORKERS_ARE_AUTO, False):
            from ..engine.parallel import auto_workers

            workers = auto_workers(records, workers)
        got = audit_scopes(
            records, todo, workers=workers, cache=self._cache, evidence=self._evidence, **self.audit_kw()
        )
        for s in todo:
            self._scopes[s] = got[s]
            self.index[s] = {v["id"]: v for v in got[s]["verdicts"]}
        if self.settings.submission:
            from ..reports.submission_text import effect_text
            from ..engine.gate import EXISTING, NOT_GATING, audit_without, gating_checks, scope_gate, without

            old = without(records, self.settings.submission)
            old_ids = case_ids_by_scope(old, cases(old)) if old is not None else {}
            gating = gating_checks(self.settings.gate)
            with sharing(self._cache):
                for s in todo:
                    self._without[s] = audit_without(old, s, old_ids, **self.audit_kw())
                    g = scope_gate(records, s, self._scopes[s], self._without[s], self.settings.submission, gating)
                    rows = [r for r in g["rows"] if r["effect"] in (EXISTING, NOT_GATING)]
                    self.context[s] = {r["id"]: effect_text(r) for r in rows}
        self._freeze_heap()

    def payload(self) -> str:
        """What an xdist worker receives: its tests, and the verdicts and gate context they judge."""
        if self._payload is None:
            tests = self.tests()
            self._payload = json.dumps({"tests": tests, "index": self.index, "context": self.context})
        return self._payload

    def _freeze_heap(self) -> None:
        """Once the audit is computed the heap is mostly long-lived (pytest's items, the records,
        the scopes): ``gc.freeze()`` keeps the cyclic GC's later full collections from walking
        it again and again; ``pytest_unconfigure`` undoes it unless the process ends with this
        run (``_process_ends_with``). Left alone when the process froze objects of its own."""
        import gc

        if gc.isenabled() and (self._froze or gc.get_freeze_count() == 0):
            gc.freeze()
            self._froze = True

    def _controls_xdist(self) -> bool:
        return not _is_worker(self.config) and self.config.pluginmanager.has_plugin("dsession")

    # -- session start: validate and load once; under xdist, compute before the workers start
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if self.settings.gate and not self.settings.submission:
            raise pytest.UsageError("--audit-gate needs --audit-submission MODEL (it names checks that gate)")
        if _is_worker(self.config):
            return  # the controller validated, loaded and computed
        self.fingerprint()
        if self.settings.submission:
            from ..reports.text import clean
            from ..engine.gate import GateError, gating_checks, unknown_models_message

            unknown = [m for m in self.settings.submission if m not in self.records.models]
            if unknown:
                raise pytest.UsageError(clean(unknown_models_message(unknown, self.records.models)))
            try:
                gating_checks(self.settings.gate)
            except GateError as exc:
                raise pytest.UsageError(clean(exc)) from None
        if self._controls_xdist():
            self.tests()
            if not self.config.option.collectonly:
                self.compute()

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist controller -> worker: the resolved settings and the finished audit."""
        node.workerinput[SETTINGS_KEY] = self.settings.replace(path=self.path, sha256=self.sha256).as_json()
        node.workerinput[FINISHED_KEY] = self.payload()

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: Any) -> None:
        """Controller: the scopes the workers' collected tests judge go in the report, as in a
        serial run with the same ``-k`` / ``-m``."""
        picked = []
        for nodeid in ids:
            name = nodeid.rsplit("::", 1)[-1]
            fn, _, rest = name.partition("[")
            if rest and fn.startswith("test_"):
                picked.append((fn.removeprefix("test_"), rest[:-1]))
        self.selected = (self.selected or set()) | self.scopes_judged(picked)

    # -- collection -------------------------------------------------------------------------
    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> Any:
        # The bundled checks are collected whatever the project's python_files says.
        if (
            file_path.suffix == ".py"
            and file_path.name.startswith("test_")
            and file_path.parent.resolve() == self.audits_dir
            and not _matches(file_path, parent.config.getini("python_files"))
        ):
            return pytest.Module.from_parent(parent, path=file_path)
        return None

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "audit_check" not in metafunc.fixturenames:
            return
        check = metafunc.function.__name__.removeprefix("test_")
        tests = self.tests().get(check)
        if tests is None:
            raise pytest.UsageError(f"{metafunc.definition.nodeid}: no registered check named {check!r}")
        metafunc.parametrize(
            "audit_check",
            [(scope, vid, also) for scope, vid, _, also in tests],
            ids=[tid for _, _, tid, _ in tests],
            indirect=True,
        )

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        keep, drop = [], []
        for it in items:
            if "audit_check" not in getattr(it, "fixturenames", ()):
                continue
            param = getattr(getattr(it, "callspec", None), "params", {}).get("audit_check")
            (keep if isinstance(param, tuple) else drop).append(it)
            if isinstance(param, tuple):
                it.add_marker(pytest.mark.audit)
                it.repr_failure = message_repr(it)  # type: ignore[method-assign]
                for scope, _, test_id in param[2]:  # -k pooled / -k <its test id> still select it
                    it.extra_keyword_matches.update((scope, test_id))
        from .locations import share_locations

        share_locations(keep)
        if drop:  # a check with no case here (e.g. --audit-submission) is deselected, not skipped
            config.hook.pytest_deselected(items=drop)
            dropped = set(map(id, drop))
            items[:] = [it for it in items if id(it) not in dropped]

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """One process, no xdist: the scopes the selected tests judge, computed before they run."""
        if _is_worker(self.config) or self._controls_xdist() or self.config.option.collectonly:
            return
        picked = []
        for it in session.items:
            param = getattr(getattr(it, "callspec", None), "params", {}).get("audit_check")
            if isinstance(param, tuple):
                picked.append((it.originalname.removeprefix("test_"), it.callspec.id))  # type: ignore[attr-defined]
        from ..engine import scopes_of

        judged = self.scopes_judged(picked)
        self.compute([s for s in scopes_of(self.records) if s in judged])

    @pytest.fixture
    def audit_check(self, request: pytest.FixtureRequest) -> AuditCheck:
        """The test's verdict, looked up in the finished audit."""
        scope, vid, also = request.param
        context = None
        if self.settings.submission:
            context = {}
            for s in (scope, *(a[0] for a in also)):
                context.update(self.context.get(s, {}))
        return AuditCheck(request.node, self.index[scope][vid], tuple(self.index[s][v] for s, v, _ in also), context)

    # -- the run ---------------------------------------------------------------------------
    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Any:
        """Progress written whole lines at a time where the terminal is a pipe or a file, and
        its flushes throttled (``terminal``); as they were after the loop and at unconfigure."""
        from .terminal import buffer_piped_stdout, throttle_terminal_flush

        unthrottle, flush_now = throttle_terminal_flush(self.config)
        self._flush_terminal = None if _is_worker(self.config) else flush_now
        if not _is_worker(self.config):
            self._restore_stdout = buffer_piped_stdout(self.config)
        try:
            return (yield)
        finally:
            self._flush_terminal = None
            if unthrottle is not None:
                unthrottle()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo) -> Any:
        rep = yield
        vs = item.stash.get(VERDICT_KEY, None) if call.when == "call" else None
        if vs:
            rep.audit_verdicts = [
                {k: v[k] for k in VERDICT_FIELDS if k in v and (k != "evidence" or v.get("user"))} for v in vs
            ]
        return rep

    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config) -> Any:
        vs = getattr(report, "audit_verdicts", None)
        if vs and report.when == "call" and report.passed and any(v["status"] == "warn" for v in vs):
            return "warn", "W", ("WARN", {"yellow": True})
        return None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        vs = getattr(report, "audit_verdicts", None)
        if vs and report.when == "call":
            for v in vs:
                self.verdicts[v["id"]] = v
            self.failed_tests += report.failed
            warned = report.passed and any(v["status"] == "warn" for v in vs)
            # an xfail is the gate's "context": a fail this newcomer's arrival did not create
            outcome = "warn" if warned else "xfailed" if hasattr(report, "wasxfail") else report.outcome
            self.test_outcomes[outcome] = self.test_outcomes.get(outcome, 0) + 1
            self.multi_verdict_tests += len(vs) > 1

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if _is_worker(self.config) or self._records is None:
            return
        if self.failed_tests > FAILURE_DETAILS_LIMIT and self.config.option.tbstyle == "auto":
            # pytest's failure section would repeat every failed verdict (thousands of lines); the
            # summary and the reports hold them; --tb=short keeps it
            self.config.option.tbstyle = "no"
            self.details_dropped = True
        report = self.report()
        self.write_outputs(report)
        if self.output_errors:
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
        elif self.settings.submission:
            gate = report.get("submission_audit", {}).get("overall", {})
            if session.exitstatus == 0 and gate.get("exit_code"):
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
        elif (
            self.settings.strict
            and session.exitstatus == 0
            and any(v["status"] == "warn" for v in self.verdicts.values())
        ):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    # -- the report (the process that audited) -----------------------------------------------
    def report(self) -> dict[str, Any]:
        if self._report is None:
            self._report = self._build_report()
        return self._report

    def _build_report(self) -> dict[str, Any]:
        from ..engine import build_report, records_summary
        from ..engine.evidence import enrich_report
        from ..metrics.per_model import sharing

        names = self._scopes if self.selected is None else [s for s in self._scopes if s in self.selected]
        scopes = report_copy({s: self._scopes[s] for s in names})  # own copy: user verdicts and evidence are added
        summary = records_summary(self.records, self.path, self.fingerprint())
        s = self.settings
        rep = build_report(summary, scopes, seed=s.seed, n_boot=s.boot, thresholds=self.thresholds)
        add_user_verdicts(rep, self.verdicts.values())
        if s.submission:
            rep["submission"] = list(s.submission)
        with sharing(self._cache):
            enrich_report(rep, self.records, known_evidence=self._evidence)
        if s.submission:
            from ..engine.gate import submission_audit

            rep["submission_audit"] = submission_audit(
                self.records,
                s.submission,
                seed=s.seed,
                n_boot=s.boot,
                thresholds=self.thresholds,
                strict=s.strict,
                allow_undecided=s.allow_undecided,
                gate=s.gate,
                alpha=s.alpha,
                computed={n: (self._scopes[n], self._without[n]) for n in names if n in self._without},
            )
        return rep

    def write_outputs(self, report: dict[str, Any]) -> None:
        from ..records.writer import atomic_write_bytes
        from ..reports.outputs import render_outputs, written_line

        for opt, path, render in render_outputs(report, vars(self.settings)):
            try:
                data = render().encode()
                atomic_write_bytes(path, data)
                self.written.append(written_line(opt, path, len(data)))
            except OSError as exc:
                self.output_errors.append(f"{opt} {path}: cannot write: {exc.strerror or exc}")
            except ValueError as exc:  # e.g. a non-finite number no check should have produced
                self.output_errors.append(f"{opt} {path}: cannot render the report: {exc}")

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
        if _is_worker(config) or self._records is None:
            return
        from .summary import write_summary

        write_summary(self, terminalreporter, config.get_terminal_writer().fullwidth)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        restore, self._restore_stdout = self._restore_stdout, None
        if restore is not None:
            restore()
        if self._froze:
            import gc

            if not _process_ends_with(config):
                gc.unfreeze()
            self._froze = False
        # the records, scopes and report are done with: let them go before pytest's last collection
        self._records = self._tests = self._report = self._cache = self._payload = None
        self._scopes, self.index, self.context, self._without, self._evidence, self.verdicts = {}, {}, {}, {}, {}, {}


__all__ = ["PLUGIN_NAME", "AuditSession"]
