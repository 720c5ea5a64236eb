"""The per-run side of the plugin: records loaded once per process, scopes computed
lazily (each by the one xdist worker that runs its group), verdicts attached to test
reports, worker output merged on the controller, reports written and summarized there."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from .plugin_names import PLUGIN_NAME, STORE_KEY, UNITS_KEY, WORKER_KEY
from .xdist_batching import SCOPE_EVENT, UNITS_EVENT

POOLED = "pooled"
VERDICT_KEY = pytest.StashKey[list]()
VERDICT_FIELDS = ("check", "id", "status", "value", "threshold", "margin", "message", "evidence", "scope", "user")


def _is_packed(path: str) -> bool:
    from .records.packed import is_packed

    return is_packed(path)


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _process_ends_with(config: pytest.Config) -> bool:
    """Whether this pytest run is the last thing its process does: an xdist worker, or the run
    of the process's own command line (not ``pytest.main`` called by a program, nor pytester's
    in-process runs, which go on after it). Such a run leaves the heap it froze
    (``AuditSession._freeze_heap``) frozen: pytest's closing ``gc.collect()`` passes and the
    interpreter's exit then skip it instead of walking millions of objects that the exit frees
    anyway (1,000 x 8,000 x 26: ~1 s in each process, and the controller waits for its
    workers' exits)."""
    import sys

    return _is_worker(config) or list(config.invocation_params.args) == sys.argv[1:]


def record_verdict(
    item: pytest.Item, v: dict[str, Any], *also: dict[str, Any], context: dict[str, str] | None = None
) -> None:
    """Attach a verdict to the running test: on its report (crosses xdist), in JUnit
    ``audit_*`` properties; a fail fails the test with the evidence; a skip skips it.

    ``also``: an alias scope's verdicts the same test judges (``auditor.collected_cases``):
    on the report too, their ids in the ``audit_also`` property; any fail fails the test."""
    vs = (v, *also)
    item.stash.setdefault(VERDICT_KEY, []).extend(vs)
    for key in ("status", "value", "threshold", "margin"):
        item.user_properties.append((f"audit_{key}", v[key]))
    if also:
        item.user_properties.append(("audit_also", " ".join(a["id"] for a in also)))
    failed = [x for x in vs if x["status"] == "fail"]
    if failed and context is not None and all(x["id"] in context for x in failed):
        from .reports.text import clean

        item.user_properties.append(("audit_gate", "context"))
        pytest.xfail("; ".join(clean(f"{x['id']}: {context[x['id']]}") for x in failed))
    if failed:
        from .reports.terminal import evidence_block

        blocks: list[str] = []
        for x in failed:
            twin = next((b for b in failed if b is not x and _same_but_id(b, x) and blocks), None)
            if x is not v and twin is not None:  # the alias scope's copy of a verdict shown above
                blocks.append(
                    f"{x['id']}: the same verdict ({x['status'].upper()}; one benchmark: pooled holds its items)"
                )
            else:
                blocks.append(evidence_block(x))
        pytest.fail("\n\n".join(blocks), pytrace=False)
    if all(x["status"] == "skip" for x in vs):
        from .reports.text import clean

        pytest.skip(clean(v["message"]))


def _message_repr(item: pytest.Item) -> Any:
    """An audit test's failure shown as its message (the evidence ``record_verdict`` wrote).

    ``pytest.fail(..., pytrace=False)`` still has pytest walk and filter the traceback, ~3 ms
    a failure: 20 s of a 1,000-model audit's 7,400 failing tests (docs/performance.md). An
    error that is not the audit's own keeps pytest's full report."""
    original = item.repr_failure

    def repr_failure(excinfo: pytest.ExceptionInfo[BaseException], *args: Any, **kwargs: Any) -> Any:
        value = excinfo.value
        if isinstance(value, pytest.fail.Exception) and not value.pytrace:
            return str(value)
        return original(excinfo, *args, **kwargs)

    return repr_failure


def _buffer_piped_stdout(config: pytest.Config) -> Any:
    """Stop writing through the terminal's stream if it is a written-through pipe (or file);
    returns what restores it (``AuditSession.pytest_runtestloop``)."""
    import io
    import sys

    out = sys.__stdout__
    tw = config.get_terminal_writer() if config.pluginmanager.has_plugin("terminalreporter") else None
    if (
        tw is None
        or getattr(tw, "_file", None) is not out
        or not isinstance(out, io.TextIOWrapper)
        or not out.write_through
        or out.isatty()
    ):
        return lambda: None
    out.reconfigure(write_through=False)

    def restore() -> None:
        out.flush()
        out.reconfigure(write_through=True)

    return restore


#: how long progress may wait in the buffer, mid-line, where the terminal is a pipe or a file
FLUSH_EVERY_S = 0.5


def _throttle_terminal_flush(config: pytest.Config) -> Any:
    """pytest flushes its terminal after every test's report: where that terminal is a pipe
    or a file (CI, ``subprocess``), one system call per test (10,000 at 1,000 models: ~0.3 s
    serially, ~0.8 s of the controller's CPU under ``-n 2``, taken from the workers' cores).
    During the run it flushes when a line is complete (pytest's progress lines: every ~80
    tests with ``-q``) or once ``FLUSH_EVERY_S`` has passed; a terminal that is a TTY is
    left alone. Returns (what restores it and flushes, what flushes now: before a
    computation, so the progress shown is current while it runs), or (None, None)."""
    import time

    tr = config.pluginmanager.get_plugin("terminalreporter")
    flush = getattr(tr, "flush", None)
    if tr is None or not callable(flush) or "flush" in vars(tr):
        return None, None
    tw = config.get_terminal_writer()
    stream = getattr(tw, "_file", None)
    try:
        if stream is None or stream.isatty():
            return None, None
    except (AttributeError, ValueError):
        return None, None
    last = [time.monotonic()]

    def throttled() -> None:
        now = time.monotonic()
        if not getattr(tw, "_current_line", "") or now - last[0] >= FLUSH_EVERY_S:
            last[0] = now
            flush()

    tr.flush = throttled

    def restore() -> None:
        if vars(tr).get("flush") is throttled:
            del tr.flush
        flush()

    return restore, flush


def _loads_without_gc(raw: str) -> Any:
    """``json.loads`` with the cyclic garbage collector paused: a worker's scopes are ~10^5
    new dicts and lists, and the controller already holds every test's report, so each
    collection the allocations set off walks all of them (0.7 s for 12 MB at 1,000 models
    under ``-n 2``; JSON holds no cycles to collect)."""
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        return json.loads(raw)
    finally:
        if enabled:
            gc.enable()


def _new_cache() -> Any:
    from .metrics.per_model import DerivedCache  # numpy: only once a run audits

    return DerivedCache()


def _same_but_id(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two verdicts that differ only in their id (and the scope names inside the message)."""
    keys = ("check", "status", "value", "threshold", "margin")
    return all(a.get(k) == b.get(k) for k in keys)


class AuditCheck:
    """What a bundled check's test receives: its verdict, and how to enforce it."""

    def __init__(
        self,
        item: pytest.Item,
        v: dict[str, Any],
        also: tuple[dict[str, Any], ...] = (),
        context: dict[str, str] | None = None,
    ):
        self.item = item
        self.verdict = v
        self.also = also  # the alias scope's verdicts this test judges too
        self.context = context  # submission gate: fails that do not fail the gate, and why

    @property
    def status(self) -> str:
        return self.verdict["status"]

    def enforce(self) -> None:
        record_verdict(self.item, self.verdict, *self.also, context=self.context)


FAILURE_DETAILS_LIMIT = 100  # failed audit tests above which pytest's failure section is left out


#: the shared tensor is unpacked in this many parts per worker (``AuditSession._share_tensor``)
PARTS_PER_WORKER = 4


class AuditSession:
    def __init__(self, config: pytest.Config, settings: dict[str, Any], audits_dir: Path):
        self.config = config
        #: the resolved settings, frozen (``settings.resolve_settings``); what the run learns
        #: later (the collected records' path, their fingerprint) are facts of its own
        self.settings: Mapping[str, Any] = MappingProxyType(dict(settings))
        self.path: str | None = settings["path"]
        self.sha256: str | None = settings.get("sha256")
        self.audits_dir = audits_dir
        self._records = None
        self._cases: dict[str, list[Any]] | None = None
        self._tests: dict[str, list[Any]] | None = None  # the collected cases (aliases folded in)
        self._ids: dict[str, dict[tuple[str, int], str]] | None = None
        self._scopes: dict[str, dict[str, Any]] = {}  # computed here (JSON-ready)
        self._handles: dict[str, Any] = {}  # their in-process Scope objects (an alias scope reuses one)
        self._derived = _new_cache()  # what this run's scopes derive from the records (per_model.sharing)
        self._sharing: Any = None  # the ContextVar token while the run's cache is active
        self._without: dict[str, dict[str, Any] | None] = {}  # submission gate: the board without the newcomers
        self._old: tuple[Any, Any] | None = None  # (records without the newcomers, their case ids)
        self._gate_rows: dict[str, dict[str, dict[str, Any]]] = {}
        self._index: dict[str, dict[str, dict[str, Any]]] = {}  # scope -> verdict id -> verdict
        self._thresholds = None
        self._report: dict[str, Any] | None = None
        self.output_errors: list[str] = []
        self.written: list[str] = []  # "--audit-html: wrote PATH (N bytes)", for the summary
        self.verdicts: dict[str, dict[str, Any]] = {}  # id -> verdict, from reports (controller)
        self.worker_scopes: dict[str, dict[str, Any]] = {}
        self._scope_texts: dict[int, list[str]] = {}  # id(worker) -> scopes it sent as computed, as sent
        self._restore_stdout: Any = None  # makes the terminal's stream write through again (unconfigure)
        self._flush_terminal: Any = None  # flushes the (throttled) terminal, during the run
        #: scope -> its pairs' evidence, in their order, computed by the worker that computed it
        self.worker_evidence: dict[str, list[dict[str, Any] | None]] = {}
        self.worker_summary: dict[str, Any] | None = None
        self._froze = False  # gc.freeze() done by this session (_freeze_heap)
        self.failed_tests = 0  # failed audit tests (controller), for the failure-details limit
        self.details_dropped = False
        # audit tests by pytest outcome, and how many judged more than one verdict (the counts line)
        self.test_outcomes: dict[str, int] = {}
        self.multi_verdict_tests = 0
        # xdist, mix split into units (mix_units): the run's shared results (a worker), the
        # directory they live in (the controller), the pooled scope without mix and mix's basis,
        # and each leave-one-out set's entry and verdict (benchmark -> (entry, verdict))
        store = json.loads(getattr(config, "workerinput", {}).get(STORE_KEY) or "null")
        self._store: Any = None
        self._mix_units = False  # this worker computes mix's sets as units (controller: split_mix)
        if store:
            from .xdist_store import SharedResults

            self._store = SharedResults(store["dir"])
            self._mix_units = bool(store["split_mix"])
        self._store_dir: str | None = None
        self._shares: bool | None = None  # controller: workers share results (shares_results)
        self._split: bool | None = None
        self._core: dict[str, Any] | None = None
        self._core_here = False  # this worker computed the pooled core (else it read it)
        self._mix: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
        self.worker_mix: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
        self.worker_basis: dict[str, Any] | None = None
        self._batcher: Any = None  # a worker's per-test events, sent in batches (xdist_batching)
        self._short: Any = None  # the short protocol's module where this run allows it, else False
        self._defers: bool | None = None  # controller: reads only the records' metadata (defers_records)
        self._worker_units: tuple[dict[tuple[str, str], str], bool] | None = None  # (groups, split) sent

    # -- settings, records and scopes (once per process) ----------------------------------
    @property
    def thresholds(self):
        if self._thresholds is None:
            from .checks import Thresholds

            try:
                self._thresholds = Thresholds(self.settings["thresholds"])
            except ValueError as exc:
                raise pytest.UsageError(str(exc)) from None
        return self._thresholds

    def records_path(self) -> str:
        path = self.path
        if self.settings["collect"] and not path:
            from .collect_once import collect_once

            path = str(collect_once(self.settings["collect"], self.config))
            self.path = path
        if not path:
            raise pytest.UsageError("--audit PATH is required")
        return path

    @property
    def records(self):
        if self._records is None:
            import warnings
            from .records import RecordsError
            from .sources import load_for_audit

            path = self.records_path()
            fmt = self.settings["format"]
            try:
                if fmt in ("auto", "table") and str(path).strip() and Path(path).is_dir():
                    from .sources import single_table

                    path = str(single_table(Path(path)) or path)  # a folder holding one records table
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # inference notes travel in Records.notes
                    # the bits left packed: a controller that reads only the metadata, or a worker
                    # that maps the one tensor the workers share (``_share_tensor``)
                    if (self.defers_records() and Path(path).is_file()) or (
                        self._store is not None and fmt == "auto" and _is_packed(path)
                    ):
                        from .records.names import check_set_names
                        from .records.packed import read_packed_deferred

                        records = read_packed_deferred(path, keep_bits=self._store is not None)
                        check_set_names(records.models, records.benchmarks, str(path))
                        if self._store is not None:
                            self._share_tensor(records)
                    elif (
                        fmt in ("auto", "records", "table")
                        and self.settings.get("cache") != "off"
                        and str(path).strip()
                        and Path(path).exists()
                    ):
                        load_for_audit(path, fmt, intersect=self.settings["intersect"], check_only=True)
                        from .records.cache import load_cached_entry

                        records, sha = load_cached_entry(
                            path,
                            cache_dir=self.settings.get("cache"),
                            fingerprint=self.sha256,
                            intersect=self.settings["intersect"],
                        )
                        self.sha256 = sha
                    else:
                        records = load_for_audit(
                            path,
                            fmt,
                            intersect=self.settings["intersect"],
                            mapping=self.settings["mapping"],
                            metric=self.settings["metric"],
                        )
            except (RecordsError, FileNotFoundError) as exc:
                from .reports.text import clean

                text = "\n".join(clean(line) for line in str(exc).splitlines())  # real newlines, not "\\n"
                raise pytest.UsageError(f"--audit {clean(path)}: {text}") from None
            if "pooled" in records.benchmarks:
                raise pytest.UsageError(
                    f"--audit {path}: a benchmark is named 'pooled', the name of the scope "
                    "over all benchmarks; rename that benchmark"
                )
            if records.missing is not None:  # issue 44: no verdict on an incomplete grid yet
                from .records.missing import incomplete_message
                from .reports.text import clean

                raise pytest.UsageError(f"--audit {clean(incomplete_message(records, str(path)))}")
            self._records = records
        return self._records

    def _share_tensor(self, records: Any) -> None:
        """A worker that shares results (``xdist_store``), packed records read with every check
        made and the bits kept packed (``PackedBits``): the workers unpack the tensor into one
        file in the run's directory, each the part of the models that is its own (those that
        need it at once share the work, ``SharedResults.array_filled_once``), and every worker
        memory-maps that file, so two workers hold one 208 MB tensor at 1,000 x 8,000 x 26, not
        one each (issue 24's memory target), and none holds a private copy while unpacking."""
        from .records.model import DeferredRecords
        from .records.packed import PackedBits

        bits = records._load if isinstance(records, DeferredRecords) else None
        if not isinstance(bits, PackedBits):  # bits not on byte boundaries: read in full
            return
        winput = getattr(self.config, "workerinput", {})
        # parts of models, PARTS_PER_WORKER per worker, each worker starting at its own: a worker
        # that starts later (xdist starts them one after another) takes fewer
        workers = max(1, int(winput.get("workercount", 1)))
        parts = PARTS_PER_WORKER * workers
        wid = str(winput.get("workerid", ""))  # xdist's "gw0", "gw1", ...
        own = (int(wid[2:]) % workers if wid[2:].isdigit() else 0) * PARTS_PER_WORKER

        def unpacked_once() -> Any:
            # keyed by the file's content; the records are set by the time their bits are used.
            # Nothing here reads the file (the bits are in memory), so nothing here can warn
            key = f"records-correct-{self.fingerprint()[:32]}"
            got = self._store.array_filled_once(key, bits.shape, bool, bits.rows, parts=parts, first=own)
            bits.release()  # 1/8 of the tensor, no longer needed
            return got

        object.__setattr__(records, "_load", unpacked_once)

    def _load_after_workers_start(self) -> bool:
        """Controller under ``-n N``: whether the records load (and are validated) only when
        first needed, once xdist has started the workers (the scheduler's units, then the
        report), instead of before: the workers load the records themselves, and loading
        first kept them from starting for as long as it took (1.5 s of 1,000 x 8,000 x 26
        packed; a records-v1 folder's first parse, seconds). Bad records are then the same
        one usage error, raised as the run begins. Not when the records come from a
        collection run (``--audit-collect``: it runs once, here) or with the submission gate
        (its checks of the named models stay before any worker). The load stays on the main
        thread: Python 3.11's compiler is not safe against two threads importing (pytest
        rewrites this plugin's modules as they import), and the workers are processes."""
        n = self.config.getoption("numprocesses", None)
        if _is_worker(self.config) or not isinstance(n, int) or n < 1:
            return False
        return bool(self.path) and not self.settings["collect"] and not self.settings["submission"]

    def audit_kw(self) -> dict[str, Any]:
        """The settings every scope is computed under (``auditor.audit_scope_computed``)."""
        return {
            "seed": self.settings["seed"],
            "n_boot": self.settings["boot"],
            "thresholds": self.thresholds,
            "alpha": self.settings["alpha"],
        }

    def cases(self) -> dict[str, list[Any]]:
        """check -> its cases (identical on every worker: from the records only)."""
        if self._cases is None:
            from .auditor import case_ids_by_scope, cases

            self._cases = cases(self.records)
            self._ids = case_ids_by_scope(self.records, self._cases)
        return self._cases

    def tests(self) -> dict[str, list[Any]]:
        """check -> the cases collected as tests (an alias scope's duplicates folded in)."""
        if self._tests is None:
            from .auditor import collected_cases

            self._tests = collected_cases(self.records, self.cases())
        return self._tests

    def scope(self, name: str) -> dict[str, Any]:
        if name not in self._scopes and name == POOLED and self._mix_units:
            self._scopes[name] = self.pooled_core()["scope"]  # mix's units compute mix
            self._index[name] = {v["id"]: v for v in self._scopes[name]["verdicts"]}
            self._freeze_heap()
            self._send_scope(name)
        if name not in self._scopes:
            from .auditor import alias_of, audit_scope_computed

            self.cases()
            target = alias_of(self.records, name)
            if target != name:
                self.scope(target)
            shared = self._handles.get(target) if target != name else None
            s, self._handles[name] = audit_scope_computed(
                self.records,
                name,
                **self.audit_kw(),
                ids=(self._ids or {}).get(name),
                shared=shared,
            )
            self._scopes[name] = s
            self._index[name] = {v["id"]: v for v in s["verdicts"]}
            self._freeze_heap()
            self._send_scope(name)
        return self._scopes[name]

    def _worker_sends(self, name: str) -> bool:
        """A worker: whether scope ``name`` goes to the controller from here (the pooled core
        only from the worker that computed it: the others read it)."""
        return name != POOLED or not self._mix_units or self._core_here

    def _worker_part(self, names: Any) -> dict[str, Any]:
        """A worker: scopes ``names`` and their pairs' evidence, as the controller takes them
        (``_take_scope_texts``, ``pytest_testnodedown``)."""
        from .evidence import scope_pair_evidence

        scopes = {k: self._scopes[k] for k in names}
        # the pairs' evidence from this worker's cached robust masks: the controller would
        # derive the masks again from its own tensor (~0.6 s at 1,000 x 8,000, at the end)
        evidence = {
            k: scope_pair_evidence(self.records, k, v["pairs"])
            for k, v in scopes.items()
            if isinstance(v.get("pairs"), list)
        }
        return {"scopes": scopes, "evidence": evidence}

    def _send_scope(self, name: str) -> None:
        """A worker that batches its events: a scope goes to the controller as soon as it is
        computed, not with the worker's results after its last test, where the last worker's
        encoding held up the end of the run (0.26 to 0.37 s at 1,000 x 8,000 x 26)."""
        if self._batcher is None or not self._worker_sends(name):
            return
        # insertion order kept (no sort_keys): a section's key order is what the Markdown and
        # HTML tables iterate, and must be the order the serial run has
        self._batcher.sendevent(SCOPE_EVENT, raw=json.dumps(self._worker_part([name])))

    # -- xdist: mix's leave-one-out sets as units of their own (mix_units) -------------------
    def shares_results(self) -> bool:
        """Controller: whether workers hand each other results (``xdist_store``): under ``-n 2``
        or more with xdist's default ``load`` (the audit's own units), where files can be locked
        and the run's directory could be made (it is made here, once)."""
        if self._shares is None:
            from .xdist_store import available

            n = self.config.getoption("numprocesses", None)
            self._shares = bool(
                not _is_worker(self.config)
                and isinstance(n, int)
                and n >= 2
                and self.config.getoption("dist", None) == "load"
                and available()
            )
            if self._shares:
                import tempfile

                try:
                    self._store_dir = tempfile.mkdtemp(prefix="leaderboard-audit-xdist-")
                except OSError:  # no writable temporary directory: each worker computes its own
                    self._shares = False
        return self._shares

    def split_mix(self) -> bool:
        """Controller: whether mix's leave-one-out sets are work units of their own: where
        workers share results, without the submission gate, and when ``mix_units.eligible``."""
        if self._split is None and self._worker_units is not None:
            self._split = self._worker_units[1]  # a deferred controller: what the workers decided
        if self._split is None:
            from .mix_units import eligible

            self._split = bool(self.shares_results() and not self.settings["submission"] and eligible(self.records))
        return self._split

    def pooled_core(self) -> dict[str, Any]:
        """A worker: the pooled scope without mix, and mix's basis, computed once per run by the
        first worker that needs either (the others read it: ``xdist_store``)."""
        if self._core is None:
            from .mix_units import MIX, POOLED_KEY

            def compute() -> dict[str, Any]:
                from .auditor import audit_scope_computed
                from .checks import registry

                self.cases()
                s, handle = audit_scope_computed(
                    self.records,
                    POOLED,
                    **self.audit_kw(),
                    ids=(self._ids or {}).get(POOLED),
                    only=[n for n in registry() if n != MIX],
                )
                return {"scope": s, "basis": registry()[MIX].basis(handle)}

            self._core, self._core_here = self._store.once(POOLED_KEY, compute)
        return self._core

    def mix_verdict(self, vid: str) -> dict[str, Any] | None:
        """A worker: the verdict ``vid`` of a leave-one-out set, computed here (None: ``vid`` is
        not one of mix's)."""
        from .mix_units import MIX

        self.cases()
        ids = (self._ids or {}).get(POOLED, {})
        j = next((j for (check, j), v in ids.items() if check == MIX and v == vid), None)
        if j is None:
            return None
        b = self.records.benchmarks[j]
        if b not in self._mix:
            from .auditor import make_scope
            from .checks import registry

            check = registry()[MIX]
            sc = make_scope(
                self.records,
                POOLED,
                **self.audit_kw(),
            )
            entry = check.without_one(sc, b, lambda: self.pooled_core()["basis"])
            basis = self.pooled_core()["basis"]
            v = check.judge_one(sc, check.section_of(sc, basis, {b: entry}), b)
            v["id"] = vid
            self._mix[b] = (entry, v)
        return self._mix[b][1]

    def _assembled_pooled(self, merged: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
        """Controller, split run: the pooled scope with mix put back (``mix_units.assemble``);
        None when a leave-one-out set did not run (``-k``): then it is computed here, serially."""
        from .auditor import make_scope
        from .mix_units import POOLED_KEY, assemble
        from .xdist_store import SharedResults

        pooled = merged.get(POOLED)
        if pooled is None and self.worker_mix and self._store_dir:  # -k mix: read the workers' pooled scope
            core = SharedResults(self._store_dir).read(POOLED_KEY)
            pooled = core["scope"] if core is not None else None
        if pooled is None or self.worker_basis is None:
            return None
        entries = {b: e for b, (e, _) in self.worker_mix.items()}
        verdicts = {b: v for b, (_, v) in self.worker_mix.items()}
        return assemble(pooled, self.worker_basis, entries, verdicts, make_scope(self.records, POOLED))

    def scope_without(self, name: str) -> dict[str, Any] | None:
        """The gate's checks on the board without the newcomers (``submission.audit_without``)."""
        if name not in self._without:
            from .auditor import case_ids_by_scope
            from .submission import audit_without, without

            if self._old is None:
                old = without(self.records, self.settings["submission"])
                self._old = (old, case_ids_by_scope(old) if old is not None else {})
            self._without[name] = audit_without(
                self._old[0],
                name,
                self._old[1],
                **self.audit_kw(),
            )
        return self._without[name]

    def gate_context(self, name: str) -> dict[str, str]:
        """Verdict id -> why its fail does not fail the gate, for one scope's gate rows."""
        from .reports.submission_text import effect_text

        if name not in self._gate_rows:
            from .submission import EXISTING, NOT_GATING, gating_checks, scope_gate

            g = scope_gate(
                self.records,
                name,
                self.scope(name),
                self.scope_without(name),
                self.settings["submission"],
                gating_checks(self.settings.get("gate", [])),
            )
            self._gate_rows[name] = {r["id"]: r for r in g["rows"] if r["effect"] in (EXISTING, NOT_GATING)}
        return {vid: effect_text(r) for vid, r in self._gate_rows[name].items()}

    def _freeze_heap(self) -> None:
        """Once a scope is computed the heap is mostly long-lived (pytest's items, the records,
        the scopes): ``gc.freeze()`` keeps the cyclic GC's later full collections from walking
        it again and again (0.2 s of a 4,278-model audit); ``pytest_unconfigure`` undoes it
        unless the process ends with this run (``_process_ends_with``). Left alone when the
        process runs without GC or froze objects of its own."""
        import gc

        if gc.isenabled() and (self._froze or gc.get_freeze_count() == 0):
            gc.freeze()
            self._froze = True

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        restore, self._restore_stdout = self._restore_stdout, None
        if restore is not None:
            restore()
        if self._store_dir is not None:
            import shutil

            shutil.rmtree(self._store_dir, ignore_errors=True)
            self._store_dir = None
        self._shares = None
        self._core, self._mix, self.worker_mix = None, {}, {}
        token, self._sharing = self._sharing, None
        if token is not None:
            from .metrics.per_model import _ACTIVE

            _ACTIVE.reset(token)
        if self._froze:
            import gc

            if not _process_ends_with(config):
                gc.unfreeze()
            self._froze = False
        # the records, scopes and report are done with: let them go before pytest's last collection
        self._records = self._cases = self._tests = self._report = None
        self._scopes, self._handles, self._index, self.verdicts, self.worker_scopes = {}, {}, {}, {}, {}
        self.worker_evidence, self._scope_texts = {}, {}
        self._derived = _new_cache()
        self._without, self._gate_rows, self._old = {}, {}, None

    def fingerprint(self) -> str:
        """The records' SHA-256, computed once per process (by the load cache when it loads,
        else here); sent to xdist workers with the settings when the controller loaded the
        records before starting them (else each worker hashes them: ``_load_after_workers_start``)."""
        _ = self.records
        if self.sha256 is None:
            from .records.fingerprint import sha256_of

            self.sha256 = sha256_of(self.path, self.settings["format"])
        return self.sha256

    def summary(self) -> dict[str, Any]:
        from .auditor import records_summary

        return records_summary(self.records, self.path, self.fingerprint())

    # -- session start: validate once, hand settings to workers --------------------------------
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        from .metrics.per_model import _ACTIVE

        # the run's cache is active from here to unconfigure: the cases, the scopes and the report
        # share what they derive from the records (collection computes each scope's order too)
        self._sharing = _ACTIVE.set(self._derived)
        # Load (and validate) up front: bad records are one usage error naming file and
        # line, not a collection error per worker. The controller hashes once.
        from .checks import untested_checks

        untested = untested_checks(self.audits_dir)
        if untested:  # fail closed: their verdicts would reach the JSON but never the exit status
            raise pytest.UsageError(
                f"bundled check(s) with no test module in {self.audits_dir}: "
                + ", ".join(f"{n} (needs test_{n}.py, or report_only = True if it has no cases)" for n in untested)
            )
        if not _is_worker(self.config):
            if not self._load_after_workers_start():
                self.fingerprint()  # path resolved, cache entry built, before workers start
        else:
            _ = self.records
            from .xdist_batching import EventBatcher

            self._batcher = EventBatcher.install(self.config)
            if self._store is not None:
                from .mix_units import eligible
                from .xdist_store import SharedArrays

                # the controller asked for split units if they apply; both sides decide from
                # the same records and settings, so they agree (AuditSession.split_mix)
                self._mix_units = self._mix_units and eligible(self.records)
                # the benchmarks' summed counts, computed by one worker, read by the others
                self._derived.shared = SharedArrays(self._store, self.records.correct, self.fingerprint())
        if self.settings.get("gate") and not self.settings["submission"]:
            raise pytest.UsageError("--audit-gate needs --audit-submission MODEL (it names checks that gate)")
        if self.settings["submission"]:
            from .reports.text import clean
            from .submission import GateError, gating_checks, unknown_models_message

            unknown = [m for m in self.settings["submission"] if m not in self.records.models]
            if unknown:
                raise pytest.UsageError(clean(unknown_models_message(unknown, self.records.models)))
            try:
                gating_checks(self.settings.get("gate", []))
            except GateError as exc:
                raise pytest.UsageError(clean(exc)) from None

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist controller -> worker: the resolved settings (pytest-randomly's pattern). The
        records' fingerprint goes too when the controller has it (it loaded them first, in
        ``pytest_sessionstart``); else each worker hashes them as a serial run would
        (``_load_after_workers_start``)."""
        node.workerinput[WORKER_KEY] = json.dumps(
            {**self.settings, "path": self.path, "sha256": self.sha256}, sort_keys=True
        )
        if self.shares_results():
            # whether mix's sets may be units; a worker checks ``eligible`` on its records itself
            may_split = not self.settings["submission"]
            node.workerinput[STORE_KEY] = json.dumps({"dir": self._store_dir, "split_mix": may_split})
        from .xdist_batching import queue_batches, unbatch_on

        dsession = self.config.pluginmanager.getplugin("dsession")
        handlers = {UNITS_EVENT: self._take_units, SCOPE_EVENT: self._take_scope}
        if unbatch_on(node, dsession if queue_batches(dsession) else None, handlers) and self.defers_records():
            node.workerinput[UNITS_KEY] = True

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        """Under ``-n N`` (xdist's default ``load``), one scope's tests go to one worker, the
        scopes placed largest predicted cost first (``xdist_scheduling``). Called as the run
        begins, the workers started, under every ``--dist``: where the controller has not
        loaded its records yet (``_load_after_workers_start``) they load, and bad records
        end the run here, before any worker's event is processed."""
        _ = self.records
        if config.getvalue("dist") != "load":
            return None  # the user chose a distribution mode: keep it
        from .mix_units import MIX
        from .xdist_scheduling import ScopeScheduling

        return ScopeScheduling(config, log, None, last=f"{MIX}:", tail=POOLED, resolve=self._units)

    def unit_groups(self, split: bool) -> dict[tuple[str, str], str]:
        """(test function, test id) -> its work unit (``xdist_scheduling``): its scope (an
        alias scope's tests go with the scope they judge), or with ``split`` a mix test of the
        pooled scope its leave-one-out set's unit (``mix_units``)."""
        from .auditor import alias_of
        from .mix_units import MIX, unit_name

        tests = [c for lst in self.tests().values() for c in lst]
        alias = {s: alias_of(self.records, s) for s in {c.scope for c in tests}}
        benchmarks = self.records.benchmarks
        return {
            (f"test_{c.check}", c.test_id): (
                unit_name(benchmarks[c.index]) if split and c.check == MIX and c.scope == POOLED else alias[c.scope]
            )
            for c in tests
        }

    # -- a controller that does not load the records' bits ----------------------------------
    def defers_records(self) -> bool:
        """Controller under ``-n N`` with the audit's own units, packed records and no gate:
        the workers send their units ahead of their collection (``pytest_collection_finish``),
        so the controller reads only the records' metadata (validated, checksum included:
        ``read_packed_deferred``); their bits load only if something here needs them."""
        if self._defers is None:
            from .records.packed import is_packed

            path = self.settings.get("path")
            self._defers = bool(
                self._load_after_workers_start()
                and self.shares_results()
                and self.settings["format"] == "auto"
                and path
                and is_packed(path)
            )
        return self._defers

    def _take_units(self, node: Any, groups: list[list[str]], split: bool) -> None:
        """Controller, receiver thread: a worker's units (the first to arrive is kept: every
        worker derives the same from the same records and settings)."""
        if self._worker_units is None:
            self._worker_units = ({(f, i): u for f, i, u in groups}, bool(split))

    def _units(self) -> tuple[dict[tuple[str, str], str], dict[str, float]]:
        """The scheduler's (groups, costs), once the workers have collected: the units a worker
        sent (a controller that deferred the records' bits asked for them), else derived here."""
        split = self.split_mix()
        groups = self._worker_units[0] if self._worker_units is not None else self.unit_groups(split)
        return groups, self.scope_costs(split)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """A worker asked for its units sends them ahead of its collection (xdist's own
        ``collectionfinish``, sent after this)."""
        if self._batcher is None or not getattr(self.config, "workerinput", {}).get(UNITS_KEY):
            return
        groups = self.unit_groups(bool(self._mix_units))
        # not a per-test event: the batcher sends what it holds, then this
        self._batcher.sendevent(UNITS_EVENT, groups=[[f, i, u] for (f, i), u in groups.items()], split=self._mix_units)

    def scope_costs(self, split_mix: bool = False) -> dict[str, float]:
        """Predicted seconds per unit (``xdist_scheduling.audit_cost``), for the LPT placement."""
        from .xdist_scheduling import audit_cost

        r = self.records
        M, _, K = r.shape
        counts = {b: int((r.items.benchmark == b).sum()) for b in r.benchmarks}
        return audit_cost(M, counts, K, split_mix=split_mix)

    # -- collection -------------------------------------------------------------------------
    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector):
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
        cases = self.tests().get(check)
        if cases is None:
            raise pytest.UsageError(f"{metafunc.definition.nodeid}: no registered check named {check!r}")
        if self.settings["submission"]:
            from .submission import submission_cases

            cases = submission_cases(cases, self.settings["submission"])
        metafunc.parametrize(
            "audit_check",
            [(c.scope, c.vid, tuple((a.scope, a.vid, a.test_id) for a in c.also)) for c in cases],
            ids=[c.test_id for c in cases],
            indirect=True,
        )

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        keep, drop = [], []
        audit = pytest.mark.audit
        for it in items:
            if "audit_check" not in getattr(it, "fixturenames", ()):
                continue
            param = getattr(getattr(it, "callspec", None), "params", {}).get("audit_check")
            (keep if isinstance(param, tuple) else drop).append(it)
            if isinstance(param, tuple):
                it.add_marker(audit)
                it.repr_failure = _message_repr(it)  # type: ignore[method-assign]
                for scope, _, test_id in param[2]:  # -k pooled / -k <its test id> still select it
                    it.extra_keyword_matches.update((scope, test_id))
        from .short_protocol import share_locations

        share_locations([it for it in items if "audit_check" in getattr(it, "fixturenames", ())])
        if drop:  # a check with no case here (e.g. --audit-submission) is deselected, not skipped
            config.hook.pytest_deselected(items=drop)
            dropped = set(map(id, drop))
            items[:] = [it for it in items if id(it) not in dropped]

    @pytest.fixture
    def audit_check(self, request: pytest.FixtureRequest) -> AuditCheck:
        return self._check_for(request.node, request.param)

    def _check_for(self, item: pytest.Item, param: tuple[str, str, tuple[Any, ...]]) -> AuditCheck:
        """The ``audit_check`` of ``item``, whose parameter is ``param``: its verdict looked up,
        its scope computed first if no test computed it yet."""
        scope, vid, also = param
        if (self._batcher is not None or self._flush_terminal is not None) and self._computes(
            item.originalname, scope, also
        ):
            if self._batcher is not None:
                self._batcher.flush()  # finished tests reported before a computation that could crash
            if self._flush_terminal is not None:
                # the progress shown is current while it computes; written with capture
                # suspended, as it runs in the test's setup: captured, the letters landed in its
                # "Captured stdout setup" (UX review 2026-12-04 #9)
                capman = self.config.pluginmanager.getplugin("capturemanager")
                if capman is not None:
                    with capman.global_and_fixture_disabled():
                        self._flush_terminal()
                else:
                    self._flush_terminal()
        if self._mix_units and scope == POOLED and not also:
            v = self.mix_verdict(vid)
            if v is not None:
                return AuditCheck(item, v)
        for s in (scope, *(a[0] for a in also)):
            self.scope(s)
        context = None
        if self.settings["submission"]:
            context = {}
            for s in (scope, *(a[0] for a in also)):
                context.update(self.gate_context(s))
        return AuditCheck(item, self._index[scope][vid], tuple(self._index[s][v] for s, v, _ in also), context)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
        """A test that looks its verdict up runs the short protocol (``short_protocol``)."""
        if self._short is None:
            from . import short_protocol

            self._short = short_protocol if short_protocol.session_allows(self.config, PLUGIN_NAME) else False
        if not self._short or not self._short.item_allows(item):
            return None
        param = item.callspec.params["audit_check"]  # type: ignore[attr-defined]
        if not isinstance(param, tuple) or self._computes(item.originalname, param[0], param[2]):  # type: ignore[attr-defined]
            return None
        return self._short.run(item, nextitem, lambda: self._check_for(item, param))  # type: ignore[arg-type]

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        if self._batcher is not None and "audit_check" not in getattr(item, "fixturenames", ()):
            self._batcher.flush()  # not an audit test: it may run long or crash, reported as xdist does

    def _computes(self, test: str, scope: str, also: tuple[Any, ...]) -> bool:
        """Whether the test ``audit_check`` sets up computes something (else it looks a verdict up)."""
        from .mix_units import MIX

        if self._mix_units and scope == POOLED and test == f"test_{MIX}":
            return True  # a leave-one-out set (a handful of tests a run)
        scopes = (scope, *(a[0] for a in also))
        if self.settings["submission"] and any(s not in self._gate_rows for s in scopes):
            return True
        return any(s not in self._scopes for s in scopes)

    # -- the run ---------------------------------------------------------------------------
    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session):
        """The progress letters are written whole lines at a time where stdout is a pipe or
        a file: pytest writes one letter per test and flushes after each, and a stream
        written through (``PYTHONUNBUFFERED``, set in many CI images) made a system call per
        write (10,000 tests at 1,000 models: ~1 s serially, ~5 s under ``-n 2``, where the
        controller's calls take the workers' cores); the flushes are throttled too
        (``_throttle_terminal_flush``). The flushes are as they were after the loop, the
        stream at unconfigure, after pytest's closing summary."""
        # an xdist worker's terminal is /dev/null (execnet's), yet pytest flushed it after every
        # test: one system call each, ~0.3 s of a worker's CPU at 1,000 models
        unthrottle, flush_now = _throttle_terminal_flush(self.config)
        self._flush_terminal = None if _is_worker(self.config) else flush_now
        if not _is_worker(self.config):
            # written through again at unconfigure: pytest's closing summary (a FAILED line per
            # failed test, 7,400 at 1,000 models: two system calls each) is written buffered too
            self._restore_stdout = _buffer_piped_stdout(self.config)
        try:
            return (yield)
        finally:
            self._flush_terminal = None
            if unthrottle is not None:
                unthrottle()

    # -- reports ----------------------------------------------------------------------------
    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        rep = yield
        vs = item.stash.get(VERDICT_KEY, None) if call.when == "call" else None
        if vs:
            rep.audit_verdicts = [
                {k: v[k] for k in VERDICT_FIELDS if k in v and (k != "evidence" or v.get("user"))} for v in vs
            ]
        return rep

    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config):
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

    # tryfirst: on the controller, before xdist's own, which waits for the workers' processes
    # to exit (~1 s at 1,000 models: each frees its records and scopes); the report is built
    # from what they sent, meanwhile
    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        from .hypothesis_summary import skip_idle_summary

        skip_idle_summary(self.config)  # before any terminal summary, in every process
        if _is_worker(self.config):
            from .xdist_worker_summary import skip_unseen_summary

            skip_unseen_summary(self.config)
            # insertion order kept (no sort_keys): a section's key order is what the Markdown and
            # HTML tables iterate, and must be the order the serial run has. A worker that batches
            # sent each scope as ``scope`` computed it (``_send_scope``); one that does not, now
            unsent = [] if self._batcher is not None else [k for k in self._scopes if self._worker_sends(k)]
            payload = self._worker_part(unsent)
            if self._mix:
                basis = self.pooled_core()["basis"]
                payload["mix"] = {b: list(ev) for b, ev in self._mix.items()}
                payload["basis"] = {k: v for k, v in basis.items() if k != "verdicts"}
            self.config.workeroutput[WORKER_KEY] = json.dumps(payload)
            return
        if self._records is None:
            return
        if self.failed_tests > FAILURE_DETAILS_LIMIT and self.config.option.tbstyle == "auto":
            # pytest's failure section would repeat every failed verdict (thousands of lines; and
            # pytest looks up each failure's teardown reports by scanning all reports: ~50 s for
            # 7,800 failures). The summary below and the reports hold them; --tb=short keeps it.
            self.config.option.tbstyle = "no"
            self.details_dropped = True
        # an xdist controller computes no scope, so nothing froze its heap (30,000 reports and
        # the workers' results at 1,000 x 8,000): each full collection while the report is
        # built, and pytest's closing gc.collect(), walked all of it
        self._freeze_heap()
        report = self.report()
        self.write_outputs(report)
        if self.output_errors:
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
        elif self.settings["submission"]:
            # the gate's own exit code: a created fail fails its test; with --audit-strict a
            # warn the newcomer brings to a gating check fails the run too
            gate = report.get("submission_audit", {}).get("overall", {})
            if session.exitstatus == 0 and gate.get("exit_code"):
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
        elif (
            self.settings["strict"]
            and session.exitstatus == 0
            and any(v["status"] == "warn" for v in self.verdicts.values())
        ):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _take_scope(self, node: Any, raw: str) -> None:
        """Controller, receiver thread: a scope a worker sent as soon as it computed it
        (``_send_scope``), kept as the text it came in until that worker is done
        (``pytest_testnodedown``): decoded at once, the scopes' objects (~150 MB at 1,000 x
        8,000 x 26) were held here while the workers computed their largest sets."""
        self._scope_texts.setdefault(id(node), []).append(raw)

    def _take_scope_texts(self, key: int | None = None) -> None:
        """Controller: decode the scopes a worker sent as it computed them (``key``: one
        worker's, else every worker's)."""
        for k in [key] if key is not None else list(self._scope_texts):
            for raw in self._scope_texts.pop(k, []):
                got = _loads_without_gc(raw)
                self.worker_scopes.update(got["scopes"])
                self.worker_evidence.update(got["evidence"])

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        self._take_scope_texts(id(node))
        raw = getattr(node, "workeroutput", {}).get(WORKER_KEY)
        if raw:
            got = _loads_without_gc(raw)
            self.worker_scopes.update(got["scopes"])
            self.worker_mix.update({b: (e, v) for b, (e, v) in got.get("mix", {}).items()})
            self.worker_basis = got.get("basis", self.worker_basis)
            self.worker_evidence.update(got.get("evidence", {}))

    def all_scopes(self) -> dict[str, dict[str, Any]]:
        self._take_scope_texts()  # a worker that never reported down (a crash)
        merged = dict(self.worker_scopes)
        if self._store_dir is not None and self.split_mix() and (POOLED in merged or self.worker_mix):
            pooled = self._assembled_pooled(merged)
            if pooled is not None:
                merged[POOLED] = pooled
            else:  # a -k that ran part of it: the pooled scope computed here, as a serial run does
                self.scope(POOLED)
        merged.update(self._scopes)
        return merged

    def report(self) -> dict[str, Any]:
        """Built once on the controller (sessionfinish writes it, the summary prints it)."""
        if self._report is None:
            self._report = self._build_report()
        return self._report

    def _build_report(self) -> dict[str, Any]:
        from .auditor import build_report
        from .evidence import enrich_report

        # own copy: user verdicts and pair evidence are added below; the workers' scopes came from json.loads
        scopes = report_copy(self.all_scopes(), known_normal=set(self.worker_scopes) - set(self._scopes))
        rep = build_report(
            self.summary(), scopes, seed=self.settings["seed"], n_boot=self.settings["boot"], thresholds=self.thresholds
        )
        add_user_verdicts(rep, self.verdicts.values())
        if self.settings["submission"]:
            rep["submission"] = list(self.settings["submission"])
        enrich_report(rep, self.records, known_evidence=self.worker_evidence)
        if self.settings["submission"]:
            from .submission import submission_audit

            rep["submission_audit"] = submission_audit(
                self.records,
                self.settings["submission"],
                seed=self.settings["seed"],
                n_boot=self.settings["boot"],
                thresholds=self.thresholds,
                strict=self.settings["strict"],
                gate=self.settings.get("gate", []),
                alpha=self.settings["alpha"],
                computed={s: (self._scopes[s], self._without[s]) for s in self._scopes if s in self._without},
            )
        return rep

    def write_outputs(self, report: dict[str, Any]) -> None:
        from .auditor import dumps_report
        from .records.writer import atomic_write_bytes

        outputs = []
        if self.settings["report"]:
            outputs.append(("--audit-report", self.settings["report"], lambda: dumps_report(report)))
        if self.settings["markdown"] and "submission_audit" in report:  # the gate alone: a PR comment
            from .reports.markdown import gate_markdown

            outputs.append(("--audit-markdown", self.settings["markdown"], lambda: gate_markdown(report)))
        elif self.settings["markdown"]:
            from .reports.markdown import render_markdown

            outputs.append(("--audit-markdown", self.settings["markdown"], lambda: render_markdown(report)))
        if self.settings["html"]:
            from .reports.html import render_html

            outputs.append(("--audit-html", self.settings["html"], lambda: render_html(report)))
        if self.settings.get("leaderboard"):
            from .reports.leaderboard import render_leaderboard

            path = self.settings["leaderboard"]
            outputs.append(("--audit-leaderboard", path, lambda: render_leaderboard(report, path)))
        from .reports.outputs import written_line

        for opt, path, render in outputs:
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
        width = config.get_terminal_writer().fullwidth
        if self.settings["summary"] != "none":
            report = self.report()
            from .reports.terminal import counts_line

            judged = list(self.verdicts.values())
            why = "--audit-submission: only the verdicts about the newcomer" if self.settings["submission"] else "-k/-m"
            trailer = (
                [counts_line(report, self.test_outcomes, self.multi_verdict_tests, judged, why)]
                if self.test_outcomes
                else []
            )
            if "submission_audit" in report:  # only the newcomer's checks, and one line on the state
                from .reports.submission_text import render_submission_text
                from .reports.terminal import wrap_line

                text = render_submission_text(report, width=width)
                text += "".join("\n" + wrap_line(t, max(60, width)) for t in trailer)
            else:
                from .reports.terminal import render_summary

                text = render_summary(report, judged, detail=self.settings["summary"], width=width, trailer=trailer)
            terminalreporter.write_sep("=", "leaderboard audit")
            for line in text.splitlines():
                terminalreporter.write_line(line)
            # the counts line says it where tests ran (the cases are not derived again here: a
            # controller that deferred the records' bits would load them for this)
            folded = (
                ()
                if self.test_outcomes
                else sorted({(a.scope, c.scope) for lst in self.tests().values() for c in lst for a in c.also})
            )
            for alias, target in folded:
                from .reports.terminal import wrap_line

                note = (
                    f"{alias} = {target} (one benchmark): each {target} test also judges {alias}'s "
                    "verdict (the audit counts verdicts, pytest tests)"
                )
                for line in wrap_line(note, max(60, width)).splitlines():
                    terminalreporter.write_line(line)
        if self.details_dropped:
            terminalreporter.write_line(
                f"{self.failed_tests} audit tests failed: pytest's per-test failure section is left out above "
                f"{FAILURE_DETAILS_LIMIT} failures (the summary above and the reports hold every verdict); "
                "--tb=short shows it"
            )
        for line in self.written:
            terminalreporter.write_line(line)
        for err in self.output_errors:
            terminalreporter.write_line(f"ERROR: {err}", red=True, bold=True)


_JSON_SCALARS = (str, int, float, bool, type(None))


def json_normal(obj: Any) -> bool:
    """Whether ``obj`` is what ``json.loads`` gives back: dicts with str keys, lists, and
    str / int / float / bool / None (no tuples, no other key or value types)."""
    stack = [obj]
    while stack:
        x = stack.pop()
        if type(x) is dict:
            if any(type(k) is not str for k in x):
                return False
            items = x.values()
        elif type(x) is list:
            items = x
        else:
            if type(x) not in _JSON_SCALARS:
                return False
            continue
        for v in items:
            if type(v) is dict or type(v) is list:
                stack.append(v)
            elif type(v) not in _JSON_SCALARS:
                return False
    return True


def report_copy(scopes: dict[str, dict[str, Any]], known_normal: Any = ()) -> dict[str, dict[str, Any]]:
    """The scopes as the report's own, equal to ``json.loads(json.dumps(scopes))``: a scope
    that is already JSON-normal (``json_normal``: always, from xdist workers; the bundled
    checks' sections are) is reused, with fresh copies of what the report then changes
    (its verdict list, its pair entries); any other scope goes through the JSON round trip.
    A 4,278-model scope: 0.04 s instead of 0.2 s, and no second copy of it in memory.
    ``known_normal``: scopes that are ``json.loads``'s own output (from the workers), not walked."""
    out = {}
    for name, s in scopes.items():
        if name not in known_normal and not json_normal(s):
            out[name] = json.loads(json.dumps(s))
            continue
        own = dict(s)
        if type(own.get("verdicts")) is list:
            own["verdicts"] = list(own["verdicts"])
        if type(own.get("pairs")) is list:
            own["pairs"] = [dict(p) if type(p) is dict else p for p in own["pairs"]]
        out[name] = own
    return out


def add_user_verdicts(report: dict[str, Any], verdicts: Any) -> None:
    """Verdicts of checks users wrote (``audit_verdict``) join their scope's verdict list."""
    known = {v["id"] for s in report["scopes"].values() for v in s.get("verdicts", [])}
    extra = sorted((v for v in verdicts if v.get("user") and v["id"] not in known), key=lambda v: v["id"])
    for v in extra:
        scope = v.get("scope") or "pooled"
        target = report["scopes"].get(scope)
        if target is None:
            target = report.setdefault("user_checks", {}).setdefault(scope, {"verdicts": []})
        target.setdefault("verdicts", []).append(dict(v))


def _matches(path: Path, patterns: list[str]) -> bool:
    import fnmatch

    return any(fnmatch.fnmatch(path.name, p) or ("/" in p and fnmatch.fnmatch(str(path), p)) for p in patterns)


__all__ = [
    "PLUGIN_NAME",
    "AuditCheck",
    "AuditSession",
    "add_user_verdicts",
    "json_normal",
    "record_verdict",
    "report_copy",
]
