"""Report sizes and browser load times at leaderboard scale (issue 22 targets).

Shapes (simulated, no planted structure): ``lb`` 4,278 models x 102 items x 1 config
(the Open LLM Leaderboard's MMLU slice, ``bench_scale.leaderboard_table``); ``lb10k``
10,000 x 100 x 1; ``big`` 1,000 x 3,000 x 26 (``bench_big.build``). For each: the
audit (``leaderboard-audit audit --json``, once, its report cached in the work
folder), then the full-audit Markdown bytes, the Markdown with a submission audit
(the median model), the HTML bytes, and for the HTML headless Chromium's load-event
time (``performance`` timing, best of 3) and page height (``scrollHeight``, after
the table script has paged the tables), plus a screenshot. Prints one line per shape
with the 1-minute load average.

Targets: Markdown <= 1,048,576 bytes (full audit), <= 65,536 with a submission; HTML
<= 3,000,000 bytes, load < 2 s, height <= 30,000 px.

Not a test: ``python benchmarks/bench_reports.py [--work DIR] [--no-submission] [lb big lb10k real paper]``
(``real``: fixtures/real, 3 models; ``paper``: the paper-sized 12 x 3,679 x 26 grid; both for the
screenshots). "with --audit-submission" is the Markdown of a real submission audit (the median
model submitted, the gate first, its default 64,000-byte budget).
Needs /usr/bin/chromium for the load figures (else they print n/a).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

SHAPES = {
    "lb": (4278, 102, 1),
    "lb10k": (10000, 100, 1),
    "big": (1000, 3000, 26),
    "real": (3, 400, 26),  # fixtures/real (screenshots at 3 models)
    "paper": (12, 3679, 26),  # simulate.paper_sized_spec (screenshots at 12 models)
}
LOAD_PROBE = """(() => { const t = performance.timing;
  return {load_ms: t.loadEventStart - t.navigationStart, height: document.documentElement.scrollHeight,
          width: document.documentElement.scrollWidth}; })()"""


def records_for(shape: str, work: Path) -> Path:
    n_models, n_items, n_configs = SHAPES[shape]
    if shape == "real":
        return HERE.parent / "fixtures" / "real"
    if shape == "paper":
        from leaderboard_audit.records import write_records
        from leaderboard_audit.records.simulate import paper_sized_spec, simulate

        path = work / "paper"
        if not (path / "grid.json").exists():
            write_records(simulate(paper_sized_spec()), path)
        return path
    if n_configs == 1:
        from bench_scale import leaderboard_table

        path = work / f"{shape}.parquet"
        return path if path.exists() else leaderboard_table(path, n_models=n_models, n_items=n_items)
    from bench_big import build

    path = work / f"{shape}.packed"
    return path if path.exists() else build(path, n_models, n_items)


def report_for(shape: str, work: Path) -> dict:
    out = work / f"{shape}.json"
    if not out.exists():
        src = records_for(shape, work)
        cmd = [sys.executable, "-m", "leaderboard_audit.cli", "audit", str(src), "--json", str(out)]
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=False)
    return json.loads(out.read_text())


def submission_markdown(shape: str, report: dict, work: Path) -> tuple[int, float]:
    """Bytes of the Markdown with a real submission audit (the median model submitted, the gate
    first, default budget 64,000 B), and the seconds the gate took."""
    import copy

    from leaderboard_audit.records import load_records
    from leaderboard_audit.reports.markdown import render_markdown
    from leaderboard_audit.engine.gate import with_gate

    rec = load_records(records_for(shape, work))
    board = report["scopes"]["pooled"]["leaderboard"]
    t = time.perf_counter()
    rep = with_gate(copy.deepcopy(report), rec, [board[len(board) // 2]["model"]])
    took = time.perf_counter() - t
    return len(render_markdown(rep).encode()), took


def browser_figures(path: Path, shot: Path) -> dict:
    try:
        from test_reports_browser import CHROMIUM, Browser
    except Exception as exc:  # noqa: BLE001 - pytest missing etc.
        return {"error": str(exc)}
    if not os.access(CHROMIUM, os.X_OK):
        return {"error": f"{CHROMIUM} not found"}
    b = Browser(timeout=120)
    try:
        best: dict = {}
        for _ in range(3):
            session = b.open(path.resolve().as_uri())
            got = b.evaluate(LOAD_PROBE, session)
            if not best or got["load_ms"] < best["load_ms"]:
                best = got
        metrics = {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False}
        b.send("Emulation.setDeviceMetricsOverride", metrics, session=session)
        png = b.send("Page.captureScreenshot", {"format": "png"}, session=session)["data"]
        shot.write_bytes(base64.b64decode(png))
        return best
    finally:
        b.close()


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="/tmp/bench-reports")
    ap.add_argument("--no-submission", action="store_true", help="skip the real submission audits")
    ap.add_argument("shapes", nargs="*", default=["lb", "big", "lb10k"])
    a = ap.parse_args(argv)
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    from leaderboard_audit.reports.html import render_html
    from leaderboard_audit.reports.markdown import render_markdown

    for shape in a.shapes:
        report = report_for(shape, work)
        t = time.perf_counter()
        md = render_markdown(report)
        t_md = time.perf_counter() - t
        small = render_markdown(report, max_bytes=65_536)
        sub = "n/a" if a.no_submission else "{:,} B (gate {:.1f} s)".format(*submission_markdown(shape, report, work))
        t = time.perf_counter()
        html = render_html(report)
        t_html = time.perf_counter() - t
        page = work / f"{shape}.html"
        page.write_text(html, encoding="utf-8")
        (work / f"{shape}.md").write_text(md, encoding="utf-8")
        fig = browser_figures(page, work / f"{shape}.png")
        load = os.getloadavg()[0]
        m, i, k = SHAPES[shape]
        print(
            f"{shape} {m:,} x {i:,} x {k}: markdown {len(md.encode()):,} B ({t_md:.2f} s), 64 KiB budget "
            f"{len(small.encode()):,} B, with --audit-submission {sub}; html {len(html.encode()):,} B ({t_html:.2f} s), load "
            f"{fig.get('load_ms', 'n/a')} ms, height {fig.get('height', 'n/a')} px, width {fig.get('width', 'n/a')} px"
            f"{' (' + fig['error'] + ')' if 'error' in fig else ''}; load average {load:.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main(sys.argv[1:])
