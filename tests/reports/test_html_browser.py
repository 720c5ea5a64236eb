"""The HTML report in a real browser: Debian's headless Chromium, driven over the
DevTools protocol on a pipe (``--remote-debugging-pipe``: NUL-terminated JSON on
fds 3/4, no websocket, no port). Asserts no console errors or exceptions, the four
figures rendered with a size, and zero network requests besides the file itself.

Needs ``/usr/bin/chromium`` (``apt-get install -y chromium``); skipped without it.
"""

from __future__ import annotations

from leaderboard_audit.engine.gate import with_gate

import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from leaderboard_audit.engine import audit
from leaderboard_audit.reports.html import render_html
from leaderboard_audit.records.simulate import demo_spec, simulate

CHROMIUM = os.environ.get("LEADERBOARD_AUDIT_CHROMIUM", "/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--mute-audio",
    "--remote-debugging-pipe",
]

pytestmark = pytest.mark.skipif(
    not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)),
    reason=f"{CHROMIUM} not found: the browser test needs Debian's chromium "
    "(apt-get update && apt-get install -y chromium)",
)


class Browser:
    """A minimal CDP client over --remote-debugging-pipe."""

    def __init__(self, timeout: float = 20.0) -> None:
        self.profile = tempfile.mkdtemp(prefix="la-chromium-")
        to_child_r, self._w = os.pipe()
        self._r, from_child_w = os.pipe()

        def fds() -> None:  # the child reads commands on fd 3, writes replies on fd 4
            a = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)  # out of the way of 3 and 4 first
            b = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=fds,
            close_fds=False,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        self.buf = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def _read_message(self) -> dict[str, Any]:
        while b"\0" not in self.buf:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("chromium did not answer in time")
            ready, _, _ = select.select([self._r], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._r, 1 << 16)
            if not chunk:
                raise RuntimeError(
                    "chromium closed the DevTools pipe: " + self.proc.stderr.read().decode(errors="replace")[-2000:]
                )
            self.buf += chunk
        raw, self.buf = self.buf.split(b"\0", 1)
        return json.loads(raw)

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        self.deadline = time.monotonic() + self.timeout
        self.next_id += 1
        msg: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read_message()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, session: str) -> dict[str, Any]:
        self.deadline = time.monotonic() + self.timeout
        for ev in self.events:
            if ev.get("method") == method and ev.get("sessionId") == session:
                return ev
        while True:
            ev = self._read_message()
            self.events.append(ev)
            if ev.get("method") == method and ev.get("sessionId") == session:
                return ev

    def drain(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while True:
            left = end - time.monotonic()
            if left <= 0 or not select.select([self._r], [], [], left)[0]:
                if b"\0" not in self.buf:
                    return
            self.events.append(self._read_message())

    def open(self, url: str) -> str:
        """A fresh page with console, log and network events on, navigated to ``url``."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.send(f"{domain}.enable", session=session)
        self.send("Page.navigate", {"url": url}, session=session)
        self.wait_for("Page.loadEventFired", session)
        self.drain(0.5)
        return session

    def evaluate(self, expr: str, session: str) -> Any:
        res = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True}, session=session)
        if "exceptionDetails" in res:
            raise RuntimeError(res["exceptionDetails"])
        return res["result"].get("value")

    def problems(self, session: str) -> dict[str, list[Any]]:
        evs = [e for e in self.events if e.get("sessionId") == session]
        console = [
            e["params"]
            for e in evs
            if e.get("method") == "Runtime.consoleAPICalled"
            and e["params"].get("type") in ("error", "assert", "warning")
        ]
        exceptions = [e["params"] for e in evs if e.get("method") == "Runtime.exceptionThrown"]
        logs = [
            e["params"]["entry"]
            for e in evs
            if e.get("method") == "Log.entryAdded" and e["params"]["entry"].get("level") in ("error", "warning")
        ]
        requests = [e["params"]["request"]["url"] for e in evs if e.get("method") == "Network.requestWillBeSent"]
        failed = [e["params"] for e in evs if e.get("method") == "Network.loadingFailed"]
        return {"console": console, "exceptions": exceptions, "log": logs, "requests": requests, "failed": failed}

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except Exception:  # noqa: BLE001 - closing anyway
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._r, self._w):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.proc.stderr:
            self.proc.stderr.close()
        shutil.rmtree(self.profile, ignore_errors=True)


FIGURE_PROBE = """(() => {
  const figs = [...document.querySelectorAll('figure.audit-figure')];
  return {
    figures: figs.map(f => {
      const svg = f.querySelector('svg'); const box = svg ? svg.getBoundingClientRect() : null;
      return {id: f.id, width: box ? box.width : 0, height: box ? box.height : 0,
              shapes: svg ? svg.querySelectorAll('rect, line, circle').length : 0,
              caption: (f.querySelector('figcaption') || {}).textContent || ''};
    }),
    scripts: document.scripts.length,
    title: document.title,
    injected: typeof window.__pwned !== 'undefined',
    evilText: document.body.textContent.includes('<script>window.__pwned=1</script>'),
  };
})()"""


@pytest.fixture(scope="module")
def browser():
    b = Browser()
    try:
        yield b
    finally:
        b.close()


@pytest.fixture(scope="module")
def report_file(tmp_path_factory) -> Path:
    import dataclasses

    r = simulate(demo_spec(items_per_benchmark=40))
    evil = "<script>window.__pwned=1</script>"
    r = dataclasses.replace(r, models=(evil, *r.models[1:]))  # a hostile name, still sorted first
    rep = with_gate(audit(r, n_boot=500), r, [evil], n_boot=500)
    path = tmp_path_factory.mktemp("html") / "report.html"
    path.write_text(render_html(rep), encoding="utf-8")
    return path


def test_report_renders_offline_with_four_figures(browser, report_file):
    url = report_file.resolve().as_uri()
    session = browser.open(url)
    probe = browser.evaluate(FIGURE_PROBE, session)
    seen = browser.problems(session)
    assert seen["console"] == [] and seen["exceptions"] == [] and seen["log"] == [], seen
    assert seen["requests"] == [url], seen["requests"]  # the file itself, nothing else
    assert seen["failed"] == []
    assert probe["title"] == "Leaderboard audit" and probe["scripts"] == 1  # the table script, allowed by hash
    assert [f["id"] for f in probe["figures"]] == ["fig-1", "fig-2", "fig-3", "fig-4"]
    for f in probe["figures"]:
        assert f["width"] > 300 and f["height"] > 100 and f["shapes"] > 10, f
        assert f["caption"].startswith(f"Figure {f['id'][-1]}.")
    assert not probe["injected"] and probe["evilText"]  # the name is text, not a script


def test_harness_sees_errors_and_requests(browser, tmp_path):
    """The checks above are not vacuous: a page that logs an error and fetches something is caught."""
    page = tmp_path / "bad.html"
    page.write_text(
        "<!DOCTYPE html><html><head><title>bad</title></head><body>"
        '<img src="http://127.0.0.1:9/x.png"><script>console.error("boom")</script></body></html>'
    )
    url = page.resolve().as_uri()
    session = browser.open(url)
    seen = browser.problems(session)
    assert any(c["args"][0].get("value") == "boom" for c in seen["console"])
    assert "http://127.0.0.1:9/x.png" in seen["requests"]


TABLE_PROBE = """(() => {
  const t = document.querySelector('table.leaderboard.dt');
  const visible = () => [...t.tBodies[0].rows].filter(r => !r.hidden).length;
  const before = visible();
  const bar = t.previousElementSibling;
  const q = bar.querySelector('input');
  q.value = 'model-0007'; q.dispatchEvent(new Event('input'));
  const filtered = visible();
  q.value = ''; q.dispatchEvent(new Event('input'));
  bar.querySelectorAll('button')[1].click();
  const page2 = bar.querySelector('span').textContent;
  return {before, filtered, page2, rows: t.tBodies[0].rows.length,
          height: document.documentElement.scrollHeight};
})()"""


def _board_page(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """A 150-model one-configuration board's HTML report (and the report)."""
    import csv
    import io

    import numpy as np

    from leaderboard_audit.records import load_records

    rng = np.random.default_rng(0)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["model", "benchmark", "item_id", "config", "correct"])
    for m in range(150):
        for i in range(30):
            w.writerow([f"org/model-{m:04d}", "mmlu", f"mmlu/{i:03d}", "gen|letter_plain|p0", int(rng.random() < 0.5)])
    (tmp_path / "t.csv").write_text(buf.getvalue())
    r = load_records(tmp_path / "t.csv")
    report = audit(r, n_boot=200)
    page = tmp_path / "board.html"
    page.write_text(render_html(report), encoding="utf-8")
    return page, report


def test_tables_search_and_page_at_scale(browser, tmp_path):
    """A 150-model one-configuration board: the hashed script runs (no CSP violation), pages the
    leaderboard 25 rows at a time and filters it by search."""
    page, _ = _board_page(tmp_path)
    session = browser.open(page.resolve().as_uri())
    probe = browser.evaluate(TABLE_PROBE, session)
    seen = browser.problems(session)
    assert seen["console"] == [] and seen["exceptions"] == [] and seen["log"] == [], seen
    assert probe["rows"] == 150 and probe["before"] == 25 and probe["filtered"] == 1, probe
    assert probe["page2"].strip().startswith("rows 26-50 of 150"), probe
    assert probe["height"] < 30_000


LINK_PROBE = """(() => {
  const a = [...document.querySelectorAll('table.leaderboard a.m')].find(x => x.textContent === '__NAME__');
  a.click();
  return new Promise(done => setTimeout(() => {
    const row = document.getElementById(a.getAttribute('href').slice(1));
    const r = row.getBoundingClientRect();
    const info = row.closest('table').previousElementSibling.querySelector('span').textContent;
    done({hash: location.hash, hidden: row.hidden, top: r.top, vh: window.innerHeight, info,
          text: row.cells[0].textContent});
  }, 300));
})()"""


def test_model_link_turns_to_the_rows_page(browser, tmp_path):
    """Issue 22: clicking a model's name in Table 1 goes to its row in "What is known per model",
    also when that row sits on a later page of the paginated table (the script turns the page)."""
    page, report = _board_page(tmp_path)
    name = report["scopes"]["pooled"]["leaderboard"][100]["model"]  # on page 5 of the models table
    session = browser.open(page.resolve().as_uri())
    # Table 1 is paged too: show the row that holds the link first
    browser.evaluate(
        "(() => {const t = document.querySelector('table.leaderboard.dt'); const q = t.previousElementSibling"
        f".querySelector('input'); q.value = {json.dumps(name)}; q.dispatchEvent(new Event('input'));}})()",
        session,
    )
    res = browser.send(
        "Runtime.evaluate",
        {"expression": LINK_PROBE.replace("__NAME__", name), "returnByValue": True, "awaitPromise": True},
        session=session,
    )
    assert "exceptionDetails" not in res, res
    probe = res["result"]["value"]
    seen = browser.problems(session)
    assert seen["console"] == [] and seen["exceptions"] == [] and seen["log"] == [], seen
    assert probe["text"] == name and probe["hidden"] is False, probe
    assert probe["info"].strip().startswith("rows 101-125 of 150"), probe
    assert -2 < probe["top"] < probe["vh"], probe  # scrolled into view
