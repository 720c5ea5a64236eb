"""Under xdist, a worker's per-test events cross to the controller a batch at a time.

xdist sends each test's six events (logstart, three reports, logfinish, protocol complete)
as six messages. On the controller each message wakes an execnet receiver thread that takes
the GIL from the main thread: at 1,000 models (10,024 tests) that was ~5 s of the
controller's CPU, on the two cores the workers compute on (docs/performance.md, "xdist").
Batched, the receiver threads take ~3 s and the whole ``-n 2`` run is ~2 s shorter.

The worker keeps those four kinds of events in order in a buffer and sends the buffer as one
message (``BATCH_EVENT``); the controller hands each event to xdist's own handler in the
order sent. The buffer is sent:

- before any other event (collection, warnings, ``workerfinished``, errors): order is kept
  (the collected ids and the audit's units, large, cross as a batch of one: ``MARSHALLED``);
- when it holds ``MAX_EVENTS`` events, or its oldest is ``MAX_AGE_S`` old;
- after a test's protocol-complete event when the worker has no further test queued: xdist's
  worker waits for the next test before it runs the current one, and the scheduler sends more
  only once it hears a test finished;
- before a test computes (``flush``, called by the audit when a scope is not computed yet)
  and before any test that is not an audit test (a project's own, run beside the audit): if
  it crashes the worker, xdist names the test that was running, since every finished test
  before it has been reported.

A batch crosses as one ``marshal`` blob (bytes), not as execnet's own encoding of each
event: execnet writes and reads every dict, list and string of the ~30,000 reports of a
1,000-model audit in pure Python (~1.4 s of each worker's CPU and ~1.5 s of the
controller's at 1,000 x 8,000 x 26), marshal in C, keeping the types execnet keeps (a
location stays a tuple). marshal is only safe on data one trusts; the blob comes from a
worker the controller started, which already runs whatever code the controller sends it
(execnet's ``remote_exec``). Format version 4 reads back on every Python 3 the workers
could run (``--tx popen//python=...``). A batch holding something marshal cannot write
(no per-test event xdist sends does) crosses as execnet's events instead.

The controller asks for batching in ``workerinput`` only where it has put its unpacking
handler in place; a worker without that key sends as xdist does.
"""

from __future__ import annotations

import marshal
import threading
import time
from typing import Any

#: the message a batch travels as, and the ``workerinput`` key the controller sets
BATCH_EVENT = "leaderboard_audit_events"
BATCH_KEY = "leaderboard_audit_batch"
#: xdist's per-test events: the ones buffered
PER_TEST = frozenset({"logstart", "testreport", "logfinish", "runtest_protocol_complete"})
MAX_EVENTS = 64  # ~10 tests; 64, 256 and 1,024 measured alike
MAX_AGE_S = 0.25
MARSHAL_VERSION = 4


def encode_events(events: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """A batch's message body: the events as one marshal blob, or as they are when marshal
    cannot write one of them."""
    try:
        return {"blob": marshal.dumps(events, MARSHAL_VERSION)}
    except ValueError:
        return {"events": events}


def decode_events(body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The events of a batch's message body (``encode_events``), in the order sent."""
    blob = body.get("blob")
    return body["events"] if blob is None else marshal.loads(blob)


#: a worker's scheduling units, sent ahead of its collection (``AuditSession.pytest_collection_finish``)
UNITS_EVENT = "leaderboard_audit_units"
#: a worker's computed scope, sent as soon as it is computed (``AuditSession._send_scope``)
SCOPE_EVENT = "leaderboard_audit_scope"
#: events sent once but large, each as a batch of its own (marshal, not execnet's encoding):
#: at 1,000 x 8,000 x 26 execnet took 0.07 s of each worker's CPU for xdist's 10,024
#: collected ids and 0.23 s for the units, both before the worker's first test
MARSHALLED = frozenset({"collectionfinish", UNITS_EVENT})


def unbatch_on(node: Any, dsession: Any = None, handlers: dict[str, Any] | None = None) -> bool:
    """Controller: unpack ``node``'s batches into xdist's handler, and ask the worker to batch.

    Called from ``pytest_configure_node``, which xdist calls before it sets the channel's
    callback; on a version that sets it earlier nothing is changed and the worker sends as
    usual. Returns whether batching was asked for.

    With ``dsession`` (xdist's ``DSession``, which has ``queue_batches`` installed), a batch's
    events, each handled by xdist's receiver code as before (a report rebuilt, ...), reach
    the controller's main thread as one queue entry, not one each: per event, xdist's queue
    woke the main thread, which took the GIL from the receiver thread still unpacking the
    batch, and formatted a log line that nothing reads.

    ``handlers``: the audit's own events (name -> ``handler(node, **kwargs)``), handled here,
    on the receiver thread, before xdist's (which would refuse a name it does not know)."""
    if getattr(node, "channel", None) is not None or not callable(getattr(node, "process_from_remote", None)):
        return False
    process = node.process_from_remote
    whole = dsession is not None and getattr(dsession, QUEUED_BATCH, None) is not None
    whole = whole and callable(getattr(node, "putevent", None)) and callable(getattr(node, "notify_inproc", None))

    own = dict(handlers or {})

    def handle(event: Any) -> None:
        """One event: the audit's own to its handler, any other to xdist's."""
        name = event[0] if type(event) is tuple and len(event) == 2 else None
        if name in own:
            own[name](node, **event[1])
        else:
            process(event)

    def process_from_remote(eventcall: Any) -> None:
        if not (type(eventcall) is tuple and len(eventcall) == 2 and eventcall[0] == BATCH_EVENT):
            handle(eventcall)
            return
        events = decode_events(eventcall[1])
        if not whole:
            for event in events:
                handle(event)
            return
        queued: list[tuple[str, dict[str, Any]]] = []
        # xdist's handler hands each event on through ``notify_inproc``: for this batch
        # (this node's receiver thread is the only caller) they are kept, then queued whole
        node.notify_inproc = lambda name, **kwargs: queued.append((name, kwargs))
        try:
            for event in events:
                handle(event)
        finally:
            del node.notify_inproc
        if queued:  # a batch of the audit's own events only (``MARSHALLED``) queues nothing
            node.putevent((BATCHED, {"events": queued}))

    node.process_from_remote = process_from_remote
    node.workerinput[BATCH_KEY] = True
    return True


#: the controller's queue entry for one batch, and the ``DSession`` attribute that handles it
#: (xdist's loop calls ``getattr(dsession, "worker_" + name)(**kwargs)`` for each entry)
BATCHED = "leaderboard_audit_batch"
QUEUED_BATCH = f"worker_{BATCHED}"


def queue_batches(dsession: Any) -> bool:
    """Controller: let xdist's ``DSession`` take a batch's events as one queue entry
    (``unbatch_on``), each dispatched to xdist's own ``worker_<event>`` method in order.
    Returns False (nothing changed) where the ``DSession`` is not the one this expects."""
    if dsession is None or not callable(getattr(dsession, "worker_testreport", None)):
        return False
    if getattr(dsession, QUEUED_BATCH, None) is None:

        def handle(events: list[tuple[str, dict[str, Any]]]) -> None:
            for name, kwargs in events:
                getattr(dsession, f"worker_{name}")(**kwargs)

        setattr(dsession, QUEUED_BATCH, handle)
    return True


class EventBatcher:
    """Worker: buffers xdist's per-test events (see the module docstring for when it sends)."""

    def __init__(self, interactor: Any, clock: Any = time.monotonic):
        self._interactor = interactor
        self._send = interactor.sendevent
        self._clock = clock
        self._events: list[tuple[str, dict[str, Any]]] = []
        self._since = 0.0
        # xdist sends "unscheduled" from its receiver thread (a steal): one lock for both threads
        self._lock = threading.Lock()

    @classmethod
    def install(cls, config: Any) -> EventBatcher | None:
        """Worker: batch this worker's events if the controller asked for it (``unbatch_on``)."""
        if not getattr(config, "workerinput", {}).get(BATCH_KEY):
            return None
        interactor = next(
            (
                p
                for p in config.pluginmanager.get_plugins()
                if type(p).__name__ == "WorkerInteractor" and hasattr(p, "torun") and hasattr(p, "sendevent")
            ),
            None,
        )
        if interactor is None:
            return None
        batcher = cls(interactor)
        interactor.sendevent = batcher.sendevent
        return batcher

    def sendevent(self, name: str, **kwargs: Any) -> None:
        with self._lock:
            if name not in PER_TEST:
                self._flush()
                if name in MARSHALLED:
                    self._send(BATCH_EVENT, **encode_events([(name, kwargs)]))
                else:
                    self._send(name, **kwargs)
                return
            now = self._clock()
            if not self._events:
                self._since = now
            self._events.append((name, kwargs))
            if (
                len(self._events) >= MAX_EVENTS
                or now - self._since >= MAX_AGE_S
                or (name == "runtest_protocol_complete" and self._runs_dry())
            ):
                self._flush()

    def flush(self) -> None:
        with self._lock:
            self._flush()

    def _flush(self) -> None:
        if self._events:
            events, self._events = self._events, []
            self._send(BATCH_EVENT, **encode_events(events))

    def _runs_dry(self) -> bool:
        with self._interactor.torun.lock() as queued:
            return not queued
