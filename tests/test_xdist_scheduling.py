"""xdist work units: the cost model, LPT placement, ``-n auto``'s break-even, and reports
byte-identical across ``-n 0/2/4`` and reruns (issue 24)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.builders import write
from leaderboard_audit.simulate import demo_spec, simulate
from leaderboard_audit.xdist_scheduling import (
    AUTO_MIN_SECONDS,
    audit_cost,
    auto_workers,
    case_of,
    lpt,
    predicted_seconds,
    scope_cost,
)
from helpers.paths import REPO

ARGS = ("-p", "no:cacheprovider", "-q", "--tb=no")


def test_lpt_places_largest_first_on_the_least_loaded_worker():
    costs = {"pooled": 45.0, "arc": 9.0, "hellaswag": 12.0, "mmlu": 8.0, "truthfulqa": 12.0}
    plan = lpt(costs, 2)
    assert plan == [["pooled"], ["hellaswag", "truthfulqa", "arc", "mmlu"]]
    assert lpt(costs, 1) == [["pooled", "hellaswag", "truthfulqa", "arc", "mmlu"]]
    four = lpt(costs, 4)
    assert sorted(u for p in four for u in p) == sorted(costs) and four[0] == ["pooled"]
    assert lpt({"a": 1.0}, 3) == [["a"], [], []]  # more workers than units: the rest get none
    assert lpt(costs, 2) == lpt(dict(reversed(costs.items())), 2)  # deterministic, order-free


def test_cost_model_grows_with_the_shape_and_pooled_carries_mix():
    assert scope_cost(1000, 8000, 26) > scope_cost(1000, 2000, 26) > scope_cost(100, 2000, 26)
    four = audit_cost(1000, {"a": 2000, "b": 2000, "c": 2000, "d": 2000}, 26)
    two = audit_cost(1000, {"a": 2000, "b": 2000}, 26)
    assert four["pooled"] > scope_cost(1000, 8000, 26)  # mix's four reruns
    assert two["pooled"] == scope_cost(1000, 4000, 26)  # no mix below 3 benchmarks
    assert "pooled" not in audit_cost(10, {"a": 5}, 26)  # one benchmark: pooled is its alias


def test_case_of():
    assert case_of("a/test_band.py::test_band[arc-m1>m2]") == ("test_band", "arc-m1>m2")
    assert case_of("a/test_x.py::test_plain") is None


def test_auto_is_serial_below_the_break_even(tmp_path):
    small = write(simulate(demo_spec(items_per_benchmark=20)), tmp_path / "demo")
    assert predicted_seconds(str(small)) < AUTO_MIN_SECONDS
    assert auto_workers(str(small), 8) == 0
    assert auto_workers(None, 8) is None
    assert predicted_seconds(str(tmp_path / "missing")) is None
    assert auto_workers(str(tmp_path / "missing"), 8) is None  # unknown: xdist decides


def test_auto_reads_the_packed_shape(tmp_path):
    from leaderboard_audit.records import load_records
    from leaderboard_audit.records.packed import write_packed

    rec = load_records(write(simulate(demo_spec(items_per_benchmark=20)), tmp_path / "demo"))
    p = write_packed(rec, tmp_path / "demo.packed")
    M, _, K = rec.shape
    counts = {b: int((rec.items.benchmark == b).sum()) for b in rec.benchmarks}
    assert predicted_seconds(str(p)) == pytest.approx(sum(audit_cost(M, counts, K).values()))


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    return write(simulate(demo_spec(items_per_benchmark=40)), tmp_path_factory.mktemp("demo"))


def test_reports_byte_identical_across_workers_and_reruns(pytester, demo_dir, tmp_path):
    """Four benchmarks (so mix runs): JSON, Markdown and HTML the same bytes under -n 0, 2, 4,
    and on a rerun of -n 2 (a different worker finishing first)."""
    runs = {}
    for tag, n in (("n0", "0"), ("n2", "2"), ("n4", "4"), ("n2b", "2"), ("auto", "auto")):
        out = {ext: tmp_path / f"{tag}.{ext}" for ext in ("json", "md", "html")}
        r = pytester.runpytest_subprocess(
            "--audit",
            str(demo_dir),
            "--audit-report",
            str(out["json"]),
            "--audit-markdown",
            str(out["md"]),
            "--audit-html",
            str(out["html"]),
            *ARGS,
            "-n",
            n,
        )
        assert r.ret in (0, 1), r.stdout.str()
        runs[tag] = {ext: p.read_bytes() for ext, p in out.items()}
        if tag == "auto":  # the demo is far below the break-even: no workers
            assert not any("bringing up nodes" in line for line in r.stdout.lines)
    for tag in ("n2", "n4", "n2b", "auto"):
        for ext in ("json", "md", "html"):
            assert runs[tag][ext] == runs["n0"][ext], (tag, ext)


def test_workers_get_a_share_of_the_cpus_for_blas(pytester, monkeypatch):
    """Under -n 2 each worker's BLAS is sized to cpus // 2 (N workers x every CPU's threads
    lost to serial); a value the user set is kept; the controller's environment is restored."""
    import os
    import shutil

    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "7")
    records = shutil.copytree(REPO / "fixtures" / "tiny", pytester.path / "rec")
    pytester.makepyfile(
        test_env="""
        import os
        def test_env():
            got = {v: os.environ.get(v) for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
            assert os.environ.get("PYTEST_XDIST_WORKER"), "not on a worker"
            expected = str(max(1, (os.cpu_count() or 1) // 2))
            assert got == {"OPENBLAS_NUM_THREADS": expected, "OMP_NUM_THREADS": expected, "MKL_NUM_THREADS": "7"}, got
        """
    )
    r = pytester.runpytest("-p", "no:cacheprovider", "-rA", "-n", "2", "--audit", str(records), "test_env.py")
    assert "PASSED test_env.py::test_env" in r.stdout.str(), r.stdout.str()[-3000:]
    assert "OPENBLAS_NUM_THREADS" not in os.environ and "OMP_NUM_THREADS" not in os.environ
    assert os.environ["MKL_NUM_THREADS"] == "7"


class FakeNode:
    """An xdist worker as the scheduler sees it: it runs a test only once it knows the next
    one or has been told to stop (xdist's ``WorkerInteractor``)."""

    def __init__(self, name: str):
        from types import SimpleNamespace

        self.name = name
        self.gateway = SimpleNamespace(id=name)
        self.queue: list[int] = []
        self.ran: list[int] = []
        self.shutting_down = False

    def send_runtest_some(self, indices):
        assert not self.shutting_down, f"{self.name}: work sent after shutdown"
        self.queue += list(indices)

    def shutdown(self):
        self.shutting_down = True

    def runnable(self) -> bool:
        return len(self.queue) >= 2 or (self.shutting_down and bool(self.queue))


class FakeConfig:
    def __init__(self, workers: int):
        self.workers = workers

    def getvalue(self, name):
        assert name == "tx"
        return [f"{self.workers}*popen"]


def _scheduled(groups, costs, collection, workers):
    from leaderboard_audit.xdist_scheduling import ScopeScheduling

    nodes = [FakeNode(f"gw{i}") for i in range(workers)]
    sched = ScopeScheduling(FakeConfig(workers), None, groups, costs, last="mix:", tail="pooled")
    for n in nodes:
        sched.add_node(n)
    for n in nodes:
        sched.add_node_collection(n, collection)
    sched.schedule()
    return sched, nodes


def _drive(sched, nodes, first):
    """Run the workers to the end, ``first`` (a worker's name) always stepping when it can."""
    while True:
        ready = [n for n in nodes if n.runnable()]
        if not ready:
            return
        node = next((n for n in ready if n.name == first), ready[0])
        i = node.queue.pop(0)
        node.ran.append(i)
        sched.mark_test_complete(node, i)


def _audit_collection():
    ids = {
        "pooled": [f"pooled-m{i}" for i in range(6)],
        "arc": [f"arc-m{i}" for i in range(4)],
        "mix:arc": ["arc"],
        "mix:mmlu": ["mmlu"],
        "mix:hellaswag": ["hellaswag"],
    }
    groups, collection = {}, []
    for unit, params in ids.items():
        func = "test_mix" if unit.startswith("mix:") else "test_band"
        for p in params:
            groups[(func, p)] = unit
            collection.append(f"audits/{func}.py::{func}[{p}]")
    collection.append("tests/test_other.py::test_plain")  # not an audit case: a unit of its own
    costs = {"pooled": 10.0, "arc": 4.0, "mix:arc": 3.0, "mix:mmlu": 3.0, "mix:hellaswag": 2.0}
    return groups, costs, collection


@pytest.mark.parametrize("first", ["gw0", "gw1"])
def test_late_units_go_to_the_worker_that_runs_out_of_work(first):
    """mix's leave-one-out sets are sent, largest predicted first, to whichever worker is
    idle, each followed by one of the pooled scope's tests (so a worker runs the set's test at
    once instead of holding it): every test runs exactly once, and the run ends."""
    groups, costs, collection = _audit_collection()
    sched, nodes = _scheduled(groups, costs, collection, 2)
    late_idx = [i for i, nodeid in enumerate(collection) if "test_mix[" in nodeid]
    assert not any(i in n.queue for n in nodes for i in late_idx)  # none placed up front
    _drive(sched, nodes, first)
    ran = sorted(i for n in nodes for i in n.ran)
    assert ran == list(range(len(collection)))
    assert sched.tests_finished and all(n.shutting_down for n in nodes)
    fast = next(n for n in nodes if n.name == first)
    mine = [collection[i] for i in fast.ran]
    assert "audits/test_mix.py::test_mix[mmlu]" in mine or "audits/test_mix.py::test_mix[arc]" in mine
    for n in nodes:  # a set's test is never the last a worker was sent while sets remained
        names = [collection[i] for i in n.ran]
        for j, name in enumerate(names[:-1]):
            if "test_mix[" in name:
                assert "test_band[pooled-" in names[j + 1], names


def test_more_workers_than_units_stop_and_late_units_still_run():
    groups, costs, collection = _audit_collection()
    sched, nodes = _scheduled(groups, costs, collection, 6)
    _drive(sched, nodes, "gw5")
    assert sorted(i for n in nodes for i in n.ran) == list(range(len(collection)))
    assert sched.tests_finished and all(n.shutting_down for n in nodes)


def _timed_run(sched, nodes, cost):
    """Run the workers in simulated time (each test's ``cost(index)``); returns each worker's
    end time and the order every test was sent in."""
    clock = {n.name: 0.0 for n in nodes}
    while True:
        ready = [n for n in nodes if n.runnable()]
        if not ready:
            return clock
        # the next event is the test that ends first (the scheduler hears of it then)
        node = min(ready, key=lambda n: (clock[n.name] + cost(n.queue[0]), n.name))
        i = node.queue.pop(0)
        clock[node.name] += cost(i)
        for other in nodes:  # a worker waiting for work waits until then (one told to stop is done)
            if other is not node and not other.runnable() and not other.shutting_down:
                clock[other.name] = max(clock[other.name], clock[node.name])
        node.ran.append(i)
        sched.mark_test_complete(node, i)


def test_the_pooled_tests_fill_the_end_so_the_workers_end_together():
    """The pooled scope's tests but the two that compute it wait until every late unit is
    sent, then go in shrinking chunks to whichever worker is idle: both workers end within a
    chunk's time of each other (0.9 here; 7.5 when the pooled worker ran them all)."""
    from leaderboard_audit.xdist_scheduling import FILLER_MIN

    ids = {"pooled": 400, "arc": 60, "mmlu": 60, "mix:arc": 1, "mix:mmlu": 1, "mix:hellaswag": 1}
    groups, collection = {}, []
    for unit, n in ids.items():
        func = "test_mix" if unit.startswith("mix:") else "test_band"
        for k in range(n):
            p = unit.split(":")[1] if unit.startswith("mix:") else f"{unit}-m{k}"
            groups[(func, p)] = unit
            collection.append(f"audits/{func}.py::{func}[{p}]")
    costs = {"pooled": 60.0, "arc": 25.0, "mmlu": 25.0, "mix:arc": 16.0, "mix:mmlu": 15.0, "mix:hellaswag": 14.0}
    first_of = {}
    for i, nodeid in enumerate(collection):
        first_of.setdefault(groups[case_of_nodeid(nodeid)], i)

    def cost(i):  # a unit's first test computes it; the others look a verdict up
        unit = groups[case_of_nodeid(collection[i])]
        return costs[unit] if first_of[unit] == i else 0.1

    sched, nodes = _scheduled(groups, costs, collection, 2)
    pooled = [i for i, nodeid in enumerate(collection) if "[pooled-" in nodeid]
    queued = {i for n in nodes for i in n.queue}
    held = [i for i in pooled if i not in queued]
    assert len(held) == 400 - 2  # all but the two that compute it (three ride with the late units)
    ends = _timed_run(sched, nodes, cost)
    assert sorted(i for n in nodes for i in n.ran) == list(range(len(collection)))
    assert sched.tests_finished and all(n.shutting_down for n in nodes)
    assert abs(ends["gw0"] - ends["gw1"]) <= FILLER_MIN * 0.1 + 1e-9, ends
    for n in nodes:  # no pooled test but the two runs before every late unit has been sent
        names = [collection[i] for i in n.ran]
        last_mix = max((j for j, x in enumerate(names) if "test_mix[" in x), default=-1)
        assert sum("[pooled-" in x for x in names[:last_mix]) <= 2 + 3, names[: last_mix + 1]


def case_of_nodeid(nodeid):
    from leaderboard_audit.xdist_scheduling import case_of

    return case_of(nodeid)


OBSERVER = """
import json, os, pytest

@pytest.hookimpl(trylast=True)
def pytest_configure_node(node):
    s = node.config.pluginmanager.get_plugin("leaderboard-audit-session")
    with open(os.environ["OBSERVED"], "a") as f:
        f.write(json.dumps({"loaded": s._records is not None}) + "\\n")
"""


def test_workers_start_while_the_controller_loads_the_records(pytester, tmp_path, monkeypatch):
    """Under -n 2 the controller loads its records once xdist has configured and started the
    workers (it needs them only for the scheduler and the report), with every --dist; the
    report is the serial run's, bytes and fingerprint alike."""
    import json
    import shutil

    records = shutil.copytree(REPO / "fixtures" / "real", pytester.path / "rec")
    pytester.makepyfile(observer=OBSERVER)
    monkeypatch.syspath_prepend(str(pytester.path))
    seen = tmp_path / "seen.jsonl"
    monkeypatch.setenv("OBSERVED", str(seen))
    out = {}
    for n in ("0", "2"):
        out[n] = tmp_path / f"n{n}.json"
        r = pytester.runpytest_subprocess(
            "-p", "observer", *ARGS, "--audit", str(records), "--audit-report", str(out[n]), "-n", n
        )
        assert r.ret in (0, 1), r.stdout.str()[-2000:]
    nodes = [json.loads(line) for line in seen.read_text().splitlines()]
    assert len(nodes) == 2 and not any(x["loaded"] for x in nodes)  # configured before the controller loads
    assert out["0"].read_bytes() == out["2"].read_bytes()
    assert json.loads(out["2"].read_text())["records"]["sha256"]


def test_bad_records_under_xdist_are_one_usage_error(pytester, tmp_path):
    """The controller loads once the workers have started; bad records still end the run
    with one usage error naming file, line and fix, as a serial run does, and no worker's
    traceback, under --dist load and loadfile."""
    import shutil

    records = shutil.copytree(REPO / "fixtures" / "tiny", pytester.path / "rec")
    bad = sorted(records.rglob("*.jsonl"))[0]
    lines = bad.read_text().splitlines()
    lines[2] = '{"item_id": broken'
    bad.write_text("\n".join(lines) + "\n")
    for n in ("0", "2", "2 --dist loadfile"):
        r = pytester.runpytest_subprocess(*ARGS, "--audit", str(records), "-n", *n.split())
        err = r.stderr.str()
        assert r.ret == pytest.ExitCode.USAGE_ERROR, (n, r.stdout.str()[-2000:], err[-2000:])
        assert err.count(f"{bad.name}:3: unreadable JSON") == 1 and "fix: each line must be one JSON object" in err
        assert "Traceback" not in err + r.stdout.str() and "INTERNALERROR" not in err + r.stdout.str()


# -- a worker starts once it has collected -----------------------------------------------------


class HookedConfig(FakeConfig):
    """``FakeConfig`` with the one hook the scheduler calls: a refused collection's report."""

    def __init__(self, workers: int):
        from types import SimpleNamespace

        super().__init__(workers)
        self.collect_reports: list = []
        self.hook = SimpleNamespace(pytest_collectreport=lambda report: self.collect_reports.append(report))


def _started(groups, costs, workers):
    """Workers added as xdist adds them, none collected yet; xdist's own ``Producer`` logs."""
    from xdist.scheduler.loadscope import Producer

    from leaderboard_audit.xdist_scheduling import ScopeScheduling

    nodes = [FakeNode(f"gw{i}") for i in range(workers)]
    config = HookedConfig(workers)
    sched = ScopeScheduling(config, Producer("test", enabled=False), groups, costs, last="mix:", tail="pooled")
    for n in nodes:
        sched.add_node(n)
    return sched, nodes, config


def _collected(sched, node, collection):
    """What xdist's ``DSession.worker_collectionfinish`` does."""
    sched.add_node_collection(node, collection)
    if sched.collection_is_completed:
        sched.schedule()


def _runs_each_test_once(sched, nodes, collection):
    _drive(sched, nodes, nodes[0].name)
    assert sorted(i for n in nodes for i in n.ran) == list(range(len(collection)))
    assert sched.tests_finished and all(n.shutting_down for n in nodes)


def test_the_first_worker_to_collect_starts_its_share_and_the_next_gets_its_own():
    """The first collection starts the first worker on the plan's largest share (the pooled
    scope); the run is not finished, nor the worker stopped, while the other share is held;
    the second worker gets that share when its collection arrives."""
    groups, costs, collection = _audit_collection()
    sched, nodes, _ = _started(groups, costs, 2)
    _collected(sched, nodes[0], collection)
    first = {collection[i] for i in nodes[0].queue}
    assert "audits/test_band.py::test_band[pooled-m0]" in first and not nodes[1].queue
    assert not any("arc-m" in t for t in first)  # the other share is held for gw1
    assert not sched.tests_finished and not nodes[0].shutting_down
    for _ in range(3):  # gw0 runs while gw1 collects
        i = nodes[0].queue.pop(0)
        nodes[0].ran.append(i)
        sched.mark_test_complete(nodes[0], i)
    _collected(sched, nodes[1], collection)
    assert {collection[i] for i in nodes[1].queue} >= {f"audits/test_band.py::test_band[arc-m{i}]" for i in range(4)}
    _runs_each_test_once(sched, nodes, collection)


@pytest.mark.parametrize("when", ["before_the_plan", "after_the_plan"])
def test_a_worker_lost_before_it_collected_leaves_its_share_to_the_others(when):
    groups, costs, collection = _audit_collection()
    sched, nodes, _ = _started(groups, costs, 2)
    if when == "before_the_plan":
        assert sched.remove_node(nodes[1]) is None
        _collected(sched, nodes[0], collection)
    else:
        _collected(sched, nodes[0], collection)
        assert sched.remove_node(nodes[1]) is None
    assert not sched._held
    _runs_each_test_once(sched, nodes[:1], collection)


def test_a_worker_that_collected_other_tests_is_refused_and_its_share_runs_elsewhere():
    groups, costs, collection = _audit_collection()
    sched, nodes, config = _started(groups, costs, 3)
    _collected(sched, nodes[0], collection)
    _collected(sched, nodes[1], collection[:-1])  # one test fewer
    assert [r.outcome for r in config.collect_reports] == ["failed"]
    assert "gw1" in config.collect_reports[0].nodeid and nodes[1].shutting_down and not nodes[1].queue
    assert nodes[1] not in sched.nodes  # xdist's DSession then does not remove it again
    _collected(sched, nodes[2], collection)
    _runs_each_test_once(sched, [nodes[0], nodes[2]], collection)


def test_a_crash_before_the_other_worker_collected_names_the_running_test():
    """xdist's crash handling puts the crashed worker's tests back and offers them to the other
    workers: one still collecting gets them once it has collected (xdist's own offer indexed
    its collection, not there yet: its ``worker_errordown`` swallowed the KeyError, and with
    it the line naming the test that crashed)."""
    groups, costs, collection = _audit_collection()
    sched, nodes, _ = _started(groups, costs, 2)
    _collected(sched, nodes[0], collection)
    i = nodes[0].queue.pop(0)
    nodes[0].ran.append(i)
    sched.mark_test_complete(nodes[0], i)
    running = collection[nodes[0].queue[0]]
    assert sched.remove_node(nodes[0]) == running
    assert not nodes[1].queue and running in {t for _, unit in sched._late for t in unit}
    _collected(sched, nodes[1], collection)
    _drive(sched, nodes[1:], "gw1")
    ran = nodes[0].ran + nodes[1].ran
    assert sorted(ran) == list(range(len(collection)))
    assert sched.tests_finished and nodes[1].shutting_down


@pytest.mark.parametrize("replacement", [True, False])
def test_a_crashed_workers_tests_run_elsewhere_and_the_run_ends(replacement):
    """xdist puts a crashed worker's unfinished tests back: they go, as late units, to the
    worker that runs out of work or to the one xdist starts in its place; every test then
    runs, and the run ends (it used to hang, or stop with "no active workers", with tests
    left in xdist's queue)."""
    groups, costs, collection = _audit_collection()
    sched, nodes, _ = _started(groups, costs, 2)
    for n in nodes:
        _collected(sched, n, collection)
    for _ in range(2):  # gw0 finishes two tests, then dies in its third
        i = nodes[0].queue.pop(0)
        nodes[0].ran.append(i)
        sched.mark_test_complete(nodes[0], i)
    lost = list(nodes[0].queue)
    assert sched.remove_node(nodes[0]) == collection[lost[0]]
    alive = [nodes[1]]
    if replacement:
        gw2 = FakeNode("gw2")
        sched.add_node(gw2)
        _collected(sched, gw2, collection)
        alive.append(gw2)
    _drive(sched, alive, alive[-1].name)
    ran = [i for n in [nodes[0], *alive] for i in n.ran]
    assert sorted(set(ran)) == list(range(len(collection))) and len(ran) == len(set(ran))
    assert sched.tests_finished and all(n.shutting_down for n in alive)


# a worker dies inside its second computation, once: the worker xdist starts in its place
# (a new id) does not
CRASH_ONCE = """
import os
import leaderboard_audit.auditor as auditor

real = auditor.audit_scope_computed
computed = []
WORKER = []

def crash_on_the_second(records, name, **kw):
    computed.append(name)
    if len(computed) == 2 and WORKER == ["gw0"]:
        os._exit(3)
    return real(records, name, **kw)

auditor.audit_scope_computed = crash_on_the_second

def pytest_configure(config):
    if hasattr(config, "workerinput"):
        WORKER.append(config.workerinput["workerid"])
"""


def test_a_run_whose_worker_crashes_and_restarts_ends_with_every_test(pytester, demo_dir):
    """xdist's default restarts a crashed worker: the run ends (it hung), with every audit test
    reported once and the crashed one reported as the crash."""
    serial = pytester.runpytest_subprocess("--audit", str(demo_dir), "-p", "no:cacheprovider", "-q")
    expected = sum(serial.parseoutcomes().get(k, 0) for k in ("passed", "failed", "warn"))
    pytester.makeconftest(CRASH_ONCE)
    r = pytester.runpytest_subprocess(
        "--audit", str(demo_dir), "-p", "no:cacheprovider", "-v", "-n", "2", "--max-worker-restart", "1", timeout=120
    )
    out = r.stdout.str()
    assert "INTERNALERROR" not in out and "no active workers" not in out, out[-3000:]
    crashed = [ln for ln in r.stdout.lines if ln.startswith("worker 'gw0' crashed while running")]
    assert len(crashed) == 1, out[-3000:]
    got = r.parseoutcomes()
    assert sum(got.get(k, 0) for k in ("passed", "failed", "warn")) == expected + 1, got  # + the crash's report


#: a -p plugin: on the controller, which scopes came as each was computed and which with a
#: worker's results at the end, as JSON lines in $SCOPES_SEEN
SCOPES_PROBE = """
import json, os
import pytest
from leaderboard_audit.plugin_names import WORKER_KEY
from leaderboard_audit.xdist_batching import SCOPE_EVENT

@pytest.hookimpl(tryfirst=True)  # before the audit's, which hands the node its handler
def pytest_configure_node(node):
    s = node.config.pluginmanager.get_plugin("leaderboard-audit-session")
    if "_take_scope" in vars(s):
        return
    take = s._take_scope

    def seen(n, raw):
        with open(os.environ["SCOPES_SEEN"], "a") as f:
            f.write(json.dumps(["computed", sorted(json.loads(raw)["scopes"])]) + "\\n")
        take(n, raw)

    s._take_scope = seen

@pytest.hookimpl(tryfirst=True)
def pytest_testnodedown(node, error):
    raw = node.workeroutput.get(WORKER_KEY)
    with open(os.environ["SCOPES_SEEN"], "a") as f:
        f.write(json.dumps(["end", sorted(json.loads(raw)["scopes"]) if raw else None]) + "\\n")
"""


def test_a_worker_sends_each_scope_as_it_is_computed(pytester, demo_dir, tmp_path, monkeypatch):
    """Under -n 2 each scope crosses to the controller as soon as a worker has computed it,
    not with the worker's results at the end (where the last worker's encoding and the
    controller's decoding waited on every test); the report is the serial run's."""
    import json

    pytester.makepyfile(scopes_probe=SCOPES_PROBE)
    monkeypatch.syspath_prepend(str(pytester.path))
    seen = tmp_path / "seen.jsonl"
    monkeypatch.setenv("SCOPES_SEEN", str(seen))
    out = {n: tmp_path / f"n{n}.json" for n in ("0", "2")}
    for n in ("0", "2"):
        extra = ("-p", "scopes_probe") if n == "2" else ()
        r = pytester.runpytest_subprocess(
            "--audit", str(demo_dir), "--audit-report", str(out[n]), *ARGS, "-n", n, *extra
        )
        assert r.ret in (0, 1), r.stdout.str()[-2000:]
    rows = [json.loads(line) for line in seen.read_text().splitlines()]
    computed = sorted(s for kind, names in rows if kind == "computed" for s in names)
    ends = [names for kind, names in rows if kind == "end"]
    report = json.loads(out["2"].read_text())
    assert computed == sorted(report["scopes"])  # every scope once, as it was computed
    assert ends == [[], []]  # nothing left for the end
    assert out["0"].read_bytes() == out["2"].read_bytes()
