"""Under pytest-xdist the controller computes the audit once, before its workers start, and
the workers only look verdicts up (``plugin/session.py``): the reports are a serial run's bytes
whatever ``-n`` / ``-k`` say, no worker reads the records, and nothing is left on disk. The
reliability review's C05, C06, C07 and C11 (docs/reviews) cannot happen in this design."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers.builders import write
from helpers.paths import REPO
from leaderboard_audit.records.simulate import demo_spec, simulate

ARGS = ("-p", "no:cacheprovider", "-q", "--tb=no")


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    return write(simulate(demo_spec(items_per_benchmark=40)), tmp_path_factory.mktemp("demo"))


BESIDE = "def test_beside():\n    pass\n"


def _beside(pytester) -> str:
    """A test of the user's own, on the command line: the run uses xdist's workers for it (the
    audit alone under -n runs in one pytest process: ``test_the_audit_alone_under_n_starts_no_workers``)."""
    return str(pytester.makepyfile(test_beside=BESIDE))


def _run(pytester, *args: str):
    r = pytester.runpytest_subprocess(*ARGS, *args)
    out = r.stdout.str() + r.stderr.str()
    assert "INTERNALERROR" not in out and "Traceback" not in out, out[-3000:]
    return r


@pytest.mark.slow
def test_reports_byte_identical_across_workers_and_reruns(pytester, demo_dir, tmp_path):
    """Four benchmarks (so mix runs in the pool's third stage): JSON, Markdown and HTML the
    same bytes under -n 0, 2, 4, auto, --audit-workers 2, and -n 2 with xdist's workers (a test
    of the user's beside the audit) twice."""
    runs = {}
    cases = (
        ("n0", "-n 0"),
        ("n2", "-n 2"),
        ("n4", "-n 4"),
        ("n2b", "-n 2"),
        ("auto", "-n auto"),
        ("w2", "--audit-workers 2"),
    )
    for tag, opt in cases:
        out = {ext: tmp_path / f"{tag}.{ext}" for ext in ("json", "md", "html")}
        r = _run(pytester, "--audit", str(demo_dir), "--audit-report", str(out["json"]), "--audit-markdown",
                 str(out["md"]), "--audit-html", str(out["html"]), *opt.split())  # fmt: skip
        assert r.ret in (0, 1), r.stdout.str()[-3000:]
        runs[tag] = {ext: p.read_bytes() for ext, p in out.items()}
        xdist = any("created:" in line for line in r.stdout.lines)
        assert xdist == tag.startswith("x"), (tag, r.stdout.lines[:8])  # the audit alone: no xdist workers
    for tag, _ in cases[1:]:
        for ext in ("json", "md", "html"):
            assert runs[tag][ext] == runs["n0"][ext], (tag, ext)


def _outcomes(line: str) -> dict[str, int]:
    """pytest's counts line without its deselected count (xdist's controller does not see it)."""
    parts = (p.strip().split(" ", 1) for p in line.split(" in ")[0].split(","))
    return {what: int(n) for n, what in parts if what != "deselected"}


@pytest.mark.slow
@pytest.mark.parametrize("select", ["mix", "band and pooled", "not mix"])
def test_a_selection_reports_under_two_workers_what_it_reports_serially(pytester, demo_dir, tmp_path, select):
    """-k: the report holds the scopes the selected tests judge, under -n 2 as serially."""
    got = {}
    for n in ("0", "2"):
        rep = tmp_path / f"n{n}.json"
        r = _run(
            pytester, "--audit", str(demo_dir), "--audit-report", str(rep), "-k", select, "-n", n, _beside(pytester)
        )
        assert r.ret in (0, 1), r.stdout.str()[-3000:]
        got[n] = (rep.read_bytes(), _outcomes(r.stdout.lines[-1]))
    assert got["2"] == got["0"]
    scopes = set(json.loads(got["0"][0])["scopes"])
    assert scopes == ({"pooled", "arc", "hellaswag", "mmlu", "truthfulqa"} if select == "not mix" else {"pooled"})


WORKER_PROBE = """
import json, os, pytest

def pytest_sessionfinish(session):
    s = session.config.pluginmanager.get_plugin("leaderboard-audit-session")
    if hasattr(session.config, "workerinput") and s is not None:
        with open(os.environ["PROBE_OUT"], "a") as f:
            f.write(json.dumps({"loaded": s._records is not None, "scopes": len(s._scopes)}) + "\\n")
"""


@pytest.mark.slow
def test_workers_never_read_the_records(pytester, demo_dir, tmp_path, monkeypatch):
    pytester.makepyfile(worker_probe=WORKER_PROBE)
    monkeypatch.syspath_prepend(str(pytester.path))
    seen = tmp_path / "seen.jsonl"
    monkeypatch.setenv("PROBE_OUT", str(seen))
    r = _run(pytester, "-p", "worker_probe", "--audit", str(demo_dir), "-n", "2", _beside(pytester))
    assert r.ret == 1, r.stdout.str()[-2000:]
    workers = [json.loads(line) for line in seen.read_text().splitlines()]
    assert len(workers) == 2 and workers == [{"loaded": False, "scopes": 0}] * 2


REPLACER = """
import os

def pytest_configure(config):
    # on a worker, as the run goes on: the records file is replaced by other records
    if hasattr(config, "workerinput"):
        try:
            os.replace(os.environ["OTHER_RECORDS"], os.environ["BOARD_RECORDS"])
        except FileNotFoundError:
            pass  # the other worker replaced it already
"""


def _packed(tmp_path: Path, name: str, seed: int) -> Path:
    from leaderboard_audit.records.packed import write_packed

    return write_packed(simulate(demo_spec(items_per_benchmark=30, seed=seed)), tmp_path / name)


@pytest.mark.slow
def test_c05_records_replaced_during_the_run_certify_the_bytes_audited(pytester, tmp_path, monkeypatch):
    """C05: -n 2, the records file replaced once the workers start: the report's sha256 is that
    of the bytes its verdicts were computed from (the file as it was), as serially."""
    a, b = _packed(tmp_path, "a.packed", 0), _packed(tmp_path, "b.packed", 1)
    serial = tmp_path / "serial.json"
    assert _run(pytester, "--audit", str(a), "--audit-report", str(serial)).ret in (0, 1)
    board = shutil.copy(a, tmp_path / "board.packed")
    pytester.makepyfile(replacer=REPLACER)
    monkeypatch.syspath_prepend(str(pytester.path))
    monkeypatch.setenv("OTHER_RECORDS", str(b))
    monkeypatch.setenv("BOARD_RECORDS", str(board))
    run = tmp_path / "run.json"
    r = _run(
        pytester, "-p", "replacer", "--audit", str(board), "--audit-report", str(run), "-n", "2", _beside(pytester)
    )
    assert r.ret in (0, 1), r.stdout.str()[-2000:]
    assert not b.exists() and Path(board).read_bytes() != a.read_bytes()  # it was replaced
    got, want = json.loads(run.read_text()), json.loads(serial.read_text())
    assert got["records"]["sha256"] == hashlib.sha256(a.read_bytes()).hexdigest() == want["records"]["sha256"]
    assert got["scopes"] == want["scopes"]


@pytest.mark.parametrize("n", ["0", "2"])
@pytest.mark.parametrize("where", ["records", "above", "inside", "file-folder"])
def test_c06_a_basetemp_that_holds_the_records_is_refused(pytester, tmp_path, n, where):
    """C06: pytest empties --basetemp as the run starts; one usage error, the records intact."""
    run = tmp_path / "run"
    records = shutil.copytree(REPO / "fixtures" / "tiny", run / "data" / "records")
    target, base = str(records), {"records": "data/records", "above": "data", "inside": "data/records/tmp"}.get(where)
    if where == "file-folder":
        from leaderboard_audit.records import load_records
        from leaderboard_audit.records.packed import write_packed

        target, base = str(write_packed(load_records(records), run / "out" / "board.packed")), "out"
    before = sorted(p.relative_to(run) for p in run.rglob("*"))
    r = subprocess.run(
        [sys.executable, "-m", "pytest", *ARGS, f"--audit={target}", f"--basetemp={base}", "-n", n],
        cwd=run, capture_output=True, text=True, env={**os.environ, "LEADERBOARD_AUDIT_CACHE": "off"}, timeout=120,
    )  # fmt: skip
    assert r.returncode == pytest.ExitCode.USAGE_ERROR, r.stdout[-2000:] + r.stderr[-2000:]
    assert f"--basetemp {base} would be emptied by pytest" in r.stderr and "Traceback" not in r.stderr
    assert sorted(p.relative_to(run) for p in run.rglob("*")) == before


STALL = """
import os, time

def test_stall():
    open(os.environ["STALL_FLAG"], "w").close()
    time.sleep(60)
"""


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_c07_a_killed_run_leaves_nothing_in_tmpdir(pytester, demo_dir, tmp_path, sig):
    """C07: the controller killed mid-run (a CI timeout, a cancelled job) leaves no file of the
    audit's in TMPDIR: there is none (pytest's own numbered basetemp aside)."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    flag = tmp_path / "stalled"
    test = pytester.makepyfile(test_stall=STALL)
    env = {**os.environ, "TMPDIR": str(tmp), "STALL_FLAG": str(flag), "LEADERBOARD_AUDIT_CACHE": "off"}
    cmd = [sys.executable, "-m", "pytest", *ARGS, "--audit", str(demo_dir), str(test), "-n", "2"]
    p = subprocess.Popen(cmd, cwd=pytester.path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not flag.exists() and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.05)
        assert flag.exists(), "the run never reached its stalling test"
        p.send_signal(sig)
        p.wait(timeout=60)
        time.sleep(0.5)
        left = sorted(x.name for x in tmp.iterdir() if not x.name.startswith("pytest-of-"))
        assert left == []
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)  # the orphaned workers
        except ProcessLookupError:
            pass


@pytest.mark.slow
def test_c11_n_auto_on_deeply_nested_packed_metadata_is_one_usage_error(pytester, tmp_path):
    """C11: -n auto reads nothing before the load; the load names the file, as serially."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.ipc

    from leaderboard_audit.records import load_records
    from leaderboard_audit.records.packed import META_KEY, write_packed

    ok = write_packed(load_records(REPO / "fixtures" / "tiny"), tmp_path / "ok.arrow")
    table = pa.ipc.open_file(pa.memory_map(str(ok))).read_all()
    key = META_KEY if isinstance(META_KEY, bytes) else META_KEY.encode()
    table = table.replace_schema_metadata({key: b"[" * 100000 + b"]" * 100000})
    deep = tmp_path / "deep.arrow"
    with pa.OSFile(str(deep), "wb") as sink, pyarrow.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    for n in ("0", "auto", "2"):
        r = _run(pytester, "--audit", str(deep), "-n", n)
        assert r.ret == pytest.ExitCode.USAGE_ERROR, (n, r.stdout.str()[-2000:], r.stderr.str()[-2000:])
        assert f"--audit {deep}" in r.stderr.str()


def test_workers_get_a_share_of_the_cpus_for_blas(pytester, monkeypatch):
    """Under -n 2 each worker's BLAS is sized to cpus // 2 (the users' own tests beside the
    audit); a value the user set is kept; the controller's environment is restored."""
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


def test_bad_records_under_xdist_are_one_usage_error(pytester):
    """Bad records end the run with one usage error naming file, line and fix, before any
    worker starts, as a serial run does."""
    records = shutil.copytree(REPO / "fixtures" / "tiny", pytester.path / "rec")
    bad = sorted(records.rglob("*.jsonl"))[0]
    lines = bad.read_text().splitlines()
    lines[2] = '{"item_id": broken'
    bad.write_text("\n".join(lines) + "\n")
    for n in ("0", "2", "2 --dist loadfile"):
        r = _run(pytester, "--audit", str(records), "-n", *n.split())
        err = r.stderr.str()
        assert r.ret == pytest.ExitCode.USAGE_ERROR, (n, r.stdout.str()[-2000:], err[-2000:])
        assert err.count(f"{bad.name}:3: unreadable JSON") == 1 and "fix: each line must be one JSON object" in err


def test_a_corrupt_packed_file_is_one_usage_error_before_any_test(pytester, tmp_path):
    data = bytearray(_packed(tmp_path, "demo.arrow", 7).read_bytes())
    bad = tmp_path / "bad.arrow"
    meta_at = data.find(b"content_sha256")
    data[meta_at + 20] ^= 1  # one character of the recorded checksum
    bad.write_bytes(bytes(data))
    result = pytester.runpytest_subprocess("--audit", str(bad), *ARGS, "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*bad.arrow*checksum*"])
    assert "passed" not in result.stdout.str() and "failed" not in result.stdout.str()


@pytest.mark.slow
def test_the_audit_alone_under_n_starts_no_workers(pytester, demo_dir, tmp_path):
    """-n 2 with no test paths of the user's: the audit in 2 processes, no xdist workers (they
    would only look verdicts up), said in the header; the report is the serial one."""
    a, b = tmp_path / "n0.json", tmp_path / "n2.json"
    assert _run(pytester, "--audit", str(demo_dir), "--audit-report", str(a)).ret == 1
    r = _run(pytester, "--audit", str(demo_dir), "--audit-report", str(b), "-n", "2", "-v")  # -q -v: the header
    assert r.ret == 1 and a.read_bytes() == b.read_bytes()
    out = r.stdout.str()
    assert "leaderboard-audit: the audit alone under -n: computed in 2 processes, no xdist workers" in out
    assert "created:" not in out and "workers [" not in out
