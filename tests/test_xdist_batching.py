"""A worker's per-test events sent to the controller in batches (``xdist_batching``): the
controller sees every event once, in the order sent; a batch goes out before any other event,
when full or old, when the worker has nothing queued, and before a computation; a worker that
dies inside a computation is reported against the test that was running."""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from pathlib import Path
from types import SimpleNamespace

import pytest

from helpers.builders import write
from leaderboard_audit.simulate import demo_spec, simulate
from leaderboard_audit.xdist_batching import (
    BATCH_EVENT,
    BATCH_KEY,
    BATCHED,
    MAX_AGE_S,
    MAX_EVENTS,
    EventBatcher,
    decode_events,
    encode_events,
    queue_batches,
    unbatch_on,
)


class FakeQueue:
    def __init__(self, *items: int):
        self._items = deque(items)

    @contextlib.contextmanager
    def lock(self):
        yield self._items


class FakeInteractor:
    """xdist's WorkerInteractor as the batcher sees it: ``sendevent`` and ``torun``."""

    def __init__(self, *queued: int):
        self.sent: list[tuple[str, dict]] = []
        self.torun = FakeQueue(*queued)

    def sendevent(self, name, **kwargs):
        self.sent.append((name, kwargs))


def one_test(send, i: int) -> list[tuple[str, dict]]:
    events = [("logstart", {"nodeid": f"t{i}"})]
    events += [("testreport", {"data": {"when": w, "i": i}}) for w in ("setup", "call", "teardown")]
    events += [("logfinish", {"nodeid": f"t{i}"}), ("runtest_protocol_complete", {"item_index": i})]
    for name, kw in events:
        send(name, **kw)
    return events


def unbatched(sent: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
    out = []
    for name, kw in sent:
        out.extend(decode_events(kw) if name == BATCH_EVENT else [(name, kw)])
    return out


def test_events_arrive_once_in_order_and_batched():
    inter = FakeInteractor(*range(100))  # plenty queued: only the size bound sends
    b = EventBatcher(inter, clock=lambda: 0.0)
    expected = []
    for i in range(30):
        expected += one_test(b.sendevent, i)
    assert all(name == BATCH_EVENT and len(decode_events(kw)) == MAX_EVENTS for name, kw in inter.sent)
    assert len(inter.sent) == 30 * 6 // MAX_EVENTS
    b.sendevent("workerfinished", workeroutput={})  # any other event: the buffer first
    assert inter.sent[-1] == ("workerfinished", {"workeroutput": {}})
    assert unbatched(inter.sent) == expected + [("workerfinished", {"workeroutput": {}})]


def test_a_worker_with_nothing_queued_sends_what_it_holds():
    """xdist's worker waits for its next test before it runs the current one: the test that
    just finished must reach the scheduler before that wait, or neither side moves."""
    inter = FakeInteractor()
    b = EventBatcher(inter, clock=lambda: 0.0)
    events = one_test(b.sendevent, 0)
    assert unbatched(inter.sent) == events
    inter.torun._items.append(1)
    one_test(b.sendevent, 1)
    assert unbatched(inter.sent) == events  # test 2 is queued: test 1's events wait


def test_an_old_buffer_is_sent_with_the_next_event():
    now = [0.0]
    inter = FakeInteractor(*range(10))
    b = EventBatcher(inter, clock=lambda: now[0])
    b.sendevent("logstart", nodeid="t0")
    now[0] = MAX_AGE_S / 2
    b.sendevent("logfinish", nodeid="t0")
    assert inter.sent == []
    now[0] = MAX_AGE_S
    b.sendevent("logstart", nodeid="t1")
    assert [name for name, _ in unbatched(inter.sent)] == ["logstart", "logfinish", "logstart"]


def test_flush_sends_the_buffer_and_nothing_when_empty():
    inter = FakeInteractor(1)
    b = EventBatcher(inter, clock=lambda: 0.0)
    b.flush()
    assert inter.sent == []
    b.sendevent("logstart", nodeid="t0")
    b.flush()
    assert unbatched(inter.sent) == [("logstart", {"nodeid": "t0"})] and len(inter.sent) == 1


def test_a_steal_from_the_receiver_thread_keeps_the_order():
    """xdist sends "unscheduled" from its receiver thread: it goes after what was buffered."""
    inter = FakeInteractor(*range(10))
    b = EventBatcher(inter, clock=lambda: 0.0)
    b.sendevent("logstart", nodeid="t0")
    t = threading.Thread(target=b.sendevent, args=("unscheduled",), kwargs={"indices": [3]})
    t.start()
    t.join()
    assert unbatched(inter.sent) == [("logstart", {"nodeid": "t0"}), ("unscheduled", {"indices": [3]})]


def test_the_controller_unpacks_batches_and_passes_the_rest():
    got = []
    node = SimpleNamespace(process_from_remote=got.append, workerinput={})
    assert unbatch_on(node)
    assert node.workerinput[BATCH_KEY] is True
    node.process_from_remote((BATCH_EVENT, encode_events([("logstart", {"n": 1}), ("logfinish", {"n": 1})])))
    node.process_from_remote((BATCH_EVENT, {"events": [("logstart", {"n": 2})]}))  # as execnet's events
    node.process_from_remote(("workerready", {}))
    end = object()
    node.process_from_remote(end)
    assert got == [("logstart", {"n": 1}), ("logfinish", {"n": 1}), ("logstart", {"n": 2}), ("workerready", {}), end]


class FakeNode:
    """xdist's WorkerController as the controller's unpacking sees it: its handler passes each
    event on through ``notify_inproc`` to the DSession's queue (``putevent``)."""

    def __init__(self, queue: list):
        self.workerinput: dict = {}
        self.putevent = queue.append

    def notify_inproc(self, eventname, **kwargs):
        self.putevent((eventname, kwargs))

    def process_from_remote(self, eventcall):
        name, kwargs = eventcall
        self.notify_inproc(name, node=self, **kwargs)


class FakeDSession:
    def __init__(self):
        self.calls: list[tuple[str, dict]] = []
        for name in ("logstart", "testreport", "logfinish", "runtest_protocol_complete", "workerready"):
            setattr(self, f"worker_{name}", lambda _n=name, **kw: self.calls.append((_n, kw)))


def test_a_batch_reaches_the_main_thread_as_one_queue_entry_handled_in_order():
    queue: list = []
    node, dsession = FakeNode(queue), FakeDSession()
    assert queue_batches(dsession)
    assert unbatch_on(node, dsession)
    first = [("logstart", {"n": 1}), ("testreport", {"n": 1}), ("logfinish", {"n": 1})]
    node.process_from_remote((BATCH_EVENT, encode_events(first)))
    node.process_from_remote((BATCH_EVENT, encode_events([("runtest_protocol_complete", {"n": 1})])))
    node.process_from_remote(("workerready", {}))
    assert [name for name, _ in queue] == [BATCHED, BATCHED, "workerready"]
    assert "notify_inproc" not in vars(node)  # xdist's own again between batches
    for name, kwargs in queue:  # what xdist's DSession.loop_once does with each entry
        getattr(dsession, f"worker_{name}")(**kwargs)
    expected = [*first, ("runtest_protocol_complete", {"n": 1}), ("workerready", {})]
    assert dsession.calls == [(name, {"node": node, **kw}) for name, kw in expected]


def test_without_the_dsession_hook_each_event_is_queued_as_xdist_does():
    queue: list = []
    node = FakeNode(queue)
    assert not queue_batches(object())  # not xdist's DSession: nothing installed
    assert unbatch_on(node, None)
    node.process_from_remote((BATCH_EVENT, encode_events([("logstart", {"n": 1}), ("logfinish", {"n": 1})])))
    assert [name for name, _ in queue] == ["logstart", "logfinish"]


def test_a_batch_crosses_as_one_blob_keeping_every_type():
    """What execnet would carry comes back equal and of the same types (a location stays a
    tuple, bytes stay bytes); what marshal cannot write crosses as the events themselves."""
    report = {
        "nodeid": "a.py::t[x]",
        "location": ("a.py", 3, "t[x]"),
        "user_properties": [("verdict", {"status": "fail", "margin": -0.25, "ids": ("a", "b")})],
        "sections": [],
        "longrepr": None,
        "duration": 1e-3,
        "raw": b"\x00\xff",
        "flags": {"ok": True, "none": None, "big": 2**70},
    }
    events = [("logstart", {"nodeid": "a.py::t[x]", "location": ("a.py", 3, "t[x]")}), ("testreport", {"data": report})]
    body = encode_events(events)
    assert set(body) == {"blob"} and isinstance(body["blob"], bytes)
    back = decode_events(body)
    assert back == events
    assert type(back[0]) is tuple and type(back[0][1]["location"]) is tuple
    assert type(back[1][1]["data"]["user_properties"][0]) is tuple
    odd = [("testreport", {"data": {"obj": object()}})]
    assert encode_events(odd) == {"events": odd} and decode_events(encode_events(odd)) == odd


def test_a_node_whose_channel_is_already_listening_is_left_alone():
    node = SimpleNamespace(process_from_remote=print, workerinput={}, channel=object())
    assert not unbatch_on(node)
    assert node.process_from_remote is print and node.workerinput == {}


def test_a_worker_batches_only_when_asked():
    class WorkerInteractor(FakeInteractor):  # found by xdist's class name
        pass

    inter = WorkerInteractor()
    plugins = SimpleNamespace(get_plugins=lambda: [object(), inter])
    assert EventBatcher.install(SimpleNamespace(workerinput={}, pluginmanager=plugins)) is None
    assert EventBatcher.install(SimpleNamespace(pluginmanager=plugins)) is None  # not a worker
    no_interactor = SimpleNamespace(get_plugins=lambda: [object()])
    assert EventBatcher.install(SimpleNamespace(workerinput={BATCH_KEY: True}, pluginmanager=no_interactor)) is None
    b = EventBatcher.install(SimpleNamespace(workerinput={BATCH_KEY: True}, pluginmanager=plugins))
    assert b is not None and inter.sendevent == b.sendevent
    inter.sendevent("logstart", nodeid="t0")
    assert inter.sent == []
    inter.sendevent("runtest_protocol_complete", item_index=0)  # and nothing queued
    assert unbatched(inter.sent) == [("logstart", {"nodeid": "t0"}), ("runtest_protocol_complete", {"item_index": 0})]


# -- a real -n 2 run --------------------------------------------------------------------------

CRASH_CONFTEST = """
import os
import leaderboard_audit.auditor as auditor

real = auditor.audit_scope_computed
computed = []
WORKER = []  # this process's xdist worker id (the variable PYTEST_XDIST_WORKER may be an outer run's)

def crash_on_the_second(records, name, **kw):
    computed.append(name)
    if len(computed) == 2 and WORKER == ["gw0"]:
        os._exit(3)  # the worker dies inside its second computation
    return real(records, name, **kw)

auditor.audit_scope_computed = crash_on_the_second


# what each worker finished, written as it finishes (a plugin: a conftest's own hooks see
# only the tests below it, and the audit's live in the package)
class FinishedLog:
    def pytest_runtest_logfinish(self, nodeid):
        with open(os.environ["FINISHED_LOG"], "a") as f:
            f.write(WORKER[0] + " " + nodeid + "\\n")


def pytest_configure(config):
    if hasattr(config, "workerinput"):  # the controller replays its workers' logfinish
        WORKER.append(config.workerinput["workerid"])
        config.pluginmanager.register(FinishedLog())
"""

# the killing test between others: the worker has tests queued after it, so nothing but the
# flush before a project's own test sends the events of the tests finished before it
USER_TESTS = """
import os
import pytest

@pytest.mark.parametrize("i", range(20))
def test_before(i):
    pass

def test_a_users_own_test_that_kills_its_worker():
    os._exit(3)

@pytest.mark.parametrize("i", range(20))
def test_after(i):
    pass
"""


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    return write(simulate(demo_spec(items_per_benchmark=30)), tmp_path_factory.mktemp("demo"))


@pytest.mark.parametrize("where", ["computation", "users_test"])
def test_a_worker_dying_is_reported_against_the_running_test(pytester, demo_dir, monkeypatch, where):
    """Every test the worker finished before it died is reported as it ran; the test that was
    running is the one xdist reports as the crash: an audit test computing a scope, or a
    project's own test run beside the audit."""
    conftest = CRASH_CONFTEST
    if where == "users_test":
        conftest = conftest.replace('WORKER == ["gw0"]', "False")
        pytester.makepyfile(test_user=USER_TESTS)
    pytester.makeconftest(conftest)
    log = pytester.path / "finished.log"
    monkeypatch.setenv("FINISHED_LOG", str(log))
    paths = ["test_user.py"] if where == "users_test" else []  # explicit paths: run beside the audit
    r = pytester.runpytest_subprocess(
        *paths, "--audit", str(demo_dir), "-p", "no:cacheprovider", "-v", "-n", "2", "--max-worker-restart", "0"
    )
    out = r.stdout.str()
    assert "INTERNALERROR" not in out
    crashed = [ln for ln in r.stdout.lines if ln.startswith("worker '") and "crashed while running" in ln]
    assert len(crashed) == 1, out[-3000:]
    worker, test = crashed[0].split("'")[1], crashed[0].split("'")[3]
    if where == "computation":
        assert worker == "gw0" and test.startswith("test_")
    else:
        assert test.endswith("test_user.py::test_a_users_own_test_that_kills_its_worker")
    # "[gw0] [ 10%] PASSED test_band.py::test_band[...]": what the controller heard, per worker
    # (shown relative to the working directory: "../test_band.py::...")
    heard = {
        (ln.split()[3], ln.split()[4].rsplit("/", 1)[-1]) for ln in r.stdout.lines if ln.startswith(f"[{worker}] [")
    }
    finished = [ln.split(" ", 1)[1] for ln in log.read_text().splitlines() if ln.startswith(worker + " ")]
    assert finished, out[-3000:]  # the crashed worker finished its first unit's tests
    assert test not in finished
    assert {t for _, t in heard} >= set(finished)
    assert {o for o, t in heard if t in finished} <= {"PASSED", "FAILED", "WARN"}


def test_large_one_off_events_cross_marshalled_as_a_batch_of_one():
    """xdist's collected ids and the audit's units go as a batch of their own (marshal), in
    order with the per-test events, and reach the same handlers as before."""
    from leaderboard_audit.xdist_batching import UNITS_EVENT

    interactor = FakeInteractor(1)
    batcher = EventBatcher(interactor)
    batcher.sendevent("logstart", nodeid="t0")
    ids = [f"audits/test_pairs.py::test_pairs[m{i}]" for i in range(1000)]
    batcher.sendevent("collectionfinish", topdir="/x", ids=ids)
    units = [["test_pairs", f"m{i}", "arc"] for i in range(1000)]
    batcher.sendevent(UNITS_EVENT, groups=units, split=True)
    batcher.sendevent("workerready")
    assert [name for name, _ in interactor.sent] == [BATCH_EVENT, BATCH_EVENT, BATCH_EVENT, "workerready"]
    assert all(set(kw) == {"blob"} for _, kw in interactor.sent[:3])
    assert unbatched(interactor.sent) == [
        ("logstart", {"nodeid": "t0"}),
        ("collectionfinish", {"topdir": "/x", "ids": ids}),
        (UNITS_EVENT, {"groups": units, "split": True}),
        ("workerready", {}),
    ]
    # the controller: the audit's own event to its handler, xdist's to xdist's
    queue: list = []
    node, dsession = FakeNode(queue), FakeDSession()
    dsession.worker_collectionfinish = lambda **kw: dsession.calls.append(("collectionfinish", kw))
    took: list = []
    assert queue_batches(dsession)
    assert unbatch_on(node, dsession, {UNITS_EVENT: lambda n, **kw: took.append((n, kw))})
    for event in interactor.sent:
        node.process_from_remote(event)
    for name, kwargs in queue:
        getattr(dsession, f"worker_{name}")(**kwargs)
    assert took == [(node, {"groups": units, "split": True})]
    assert dsession.calls == [
        ("logstart", {"node": node, "nodeid": "t0"}),
        ("collectionfinish", {"node": node, "topdir": "/x", "ids": ids}),
        ("workerready", {"node": node}),
    ]
