"""Under ``-n 2`` with packed records the controller reads only their metadata: the workers
send their scheduling units ahead of their collection, and the report is the serial run's,
byte for byte; without the workers' units it loads the records and schedules as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leaderboard_audit.records.packed import write_packed
from leaderboard_audit.simulate import demo_spec, simulate

pytest.importorskip("xdist")
pytest.importorskip("pyarrow")

ARGS = ("-p", "no:cacheprovider", "-q", "--tb=no")
#: a -p plugin: what the controller holds at the end of the run (its summary written), as
#: JSON in $PROBE_OUT
PROBE = """
import json, os
import pytest

@pytest.hookimpl(wrapper=True)
def pytest_unconfigure(config):  # after the terminal summary, before the session lets go
    if not hasattr(config, "workerinput"):
        probe(config)
    return (yield)

def probe(config):
    s = config.pluginmanager.get_plugin("leaderboard-audit-session")
    r = s._records
    with open(os.environ["PROBE_OUT"], "w") as f:
        json.dump({"type": type(r).__name__, "loaded": getattr(r, "loaded", True),
                   "units": s._worker_units is not None}, f)
"""
#: a -p plugin: the controller does not ask the workers for their units
NO_UNITS = """
import pytest
from leaderboard_audit.plugin_names import UNITS_KEY

@pytest.hookimpl(trylast=True)
def pytest_configure_node(node):
    node.workerinput.pop(UNITS_KEY, None)
"""


@pytest.fixture(scope="module")
def packed_demo(tmp_path_factory) -> Path:
    return write_packed(simulate(demo_spec(items_per_benchmark=60)), tmp_path_factory.mktemp("p") / "demo.arrow")


def audit(pytester, path: Path, out: Path, *extra: str):
    return pytester.runpytest_subprocess("--audit", str(path), "--audit-report", str(out), *ARGS, *extra)


def test_the_controller_schedules_from_the_workers_units_without_the_bits(pytester, packed_demo, tmp_path, monkeypatch):
    pytester.makepyfile(probe=PROBE)
    monkeypatch.setenv("PROBE_OUT", str(tmp_path / "probe.json"))
    serial = audit(pytester, packed_demo, tmp_path / "n0.json", "-n", "0")
    assert serial.ret == 1
    par = audit(pytester, packed_demo, tmp_path / "n2.json", "-n", "2", "-p", "probe")
    assert par.ret == 1 and par.parseoutcomes() == serial.parseoutcomes()
    assert json.loads((tmp_path / "probe.json").read_text()) == {
        "type": "DeferredRecords",
        "loaded": False,
        "units": True,
    }
    assert (tmp_path / "n0.json").read_bytes() == (tmp_path / "n2.json").read_bytes()


def test_without_the_workers_units_the_controller_loads_and_schedules(pytester, packed_demo, tmp_path, monkeypatch):
    pytester.makepyfile(probe=PROBE, no_units=NO_UNITS)
    monkeypatch.setenv("PROBE_OUT", str(tmp_path / "probe.json"))
    serial = audit(pytester, packed_demo, tmp_path / "n0.json", "-n", "0")
    par = audit(pytester, packed_demo, tmp_path / "n2.json", "-n", "2", "-p", "probe", "-p", "no_units")
    assert par.parseoutcomes() == serial.parseoutcomes()
    assert json.loads((tmp_path / "probe.json").read_text()) == {
        "type": "DeferredRecords",
        "loaded": True,
        "units": False,
    }
    assert (tmp_path / "n0.json").read_bytes() == (tmp_path / "n2.json").read_bytes()


def test_a_corrupt_packed_file_is_one_usage_error_before_any_test(pytester, packed_demo, tmp_path):
    data = bytearray(packed_demo.read_bytes())
    bad = tmp_path / "bad.arrow"
    meta_at = data.find(b"content_sha256")
    data[meta_at + 20] ^= 1  # one character of the recorded checksum
    bad.write_bytes(bytes(data))
    result = pytester.runpytest_subprocess("--audit", str(bad), *ARGS, "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*bad.arrow*checksum*"])
    assert "passed" not in result.stdout.str() and "failed" not in result.stdout.str()


#: a -p plugin: what each worker's tensor is at the end of its run, as JSON lines in $PROBE_OUT
TENSOR_PROBE = """
import json, mmap, os
import numpy as np
import pytest

@pytest.hookimpl(wrapper=True)
def pytest_unconfigure(config):
    if hasattr(config, "workerinput"):
        s = config.pluginmanager.get_plugin("leaderboard-audit-session")
        r = s._records
        if r is not None and getattr(r, "loaded", True):
            a = r.correct
            while isinstance(a, np.ndarray):
                a = a.base
            with open("/proc/self/maps") as f:
                files = sorted({line.split()[-1] for line in f if "records-correct-" in line})
            with open(os.environ["PROBE_OUT"], "a") as f:
                f.write(json.dumps({"mapped": isinstance(a, mmap.mmap), "files": files}) + "\\n")
    return (yield)
"""


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads the mappings from /proc")
@pytest.mark.parametrize("dist", ["load", "loadfile"])
def test_the_workers_map_one_unpacked_tensor(pytester, packed_demo, tmp_path, monkeypatch, dist):
    """Under -n 2 (xdist's default distribution) the first worker that needs the bits unpacks
    them into the run's directory and every worker maps that one file, read-only; under a
    distribution the user chose there is no run directory and each worker reads its own. The
    report is the serial run's, byte for byte."""
    pytester.makepyfile(tensor_probe=TENSOR_PROBE)
    out = tmp_path / "tensors.jsonl"
    monkeypatch.setenv("PROBE_OUT", str(out))
    serial = audit(pytester, packed_demo, tmp_path / "n0.json", "-n", "0")
    par = audit(pytester, packed_demo, tmp_path / "n2.json", "-n", "2", "--dist", dist, "-p", "tensor_probe")
    assert par.parseoutcomes() == serial.parseoutcomes()
    assert (tmp_path / "n0.json").read_bytes() == (tmp_path / "n2.json").read_bytes()
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 2, rows  # both workers loaded the bits
    if dist == "load":
        assert all(r["mapped"] for r in rows) and rows[0]["files"] == rows[1]["files"] and len(rows[0]["files"]) == 1
    else:
        assert rows == [{"mapped": False, "files": []}] * 2


def test_the_shared_tensor_loads_as_quietly_as_the_records(pytester, tmp_path):
    """A packed file whose legend was inferred: its note travels in the records, and the
    workers' shared load (at their session start, outside the records' own load) warns no
    more than a serial run does, even with warnings as errors."""
    import os
    import warnings

    from helpers.builders import write
    from leaderboard_audit.records import load_records

    d = write(simulate(demo_spec(items_per_benchmark=30)), tmp_path / "rec")
    os.remove(Path(d) / "grid.json")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rec = load_records(d)
    assert rec.grid.inferred
    path = write_packed(rec, tmp_path / "inferred.arrow")
    runs = {n: audit(pytester, path, tmp_path / f"n{n}.json", "-n", n, "-W", "error::UserWarning") for n in ("0", "2")}
    for r in runs.values():
        assert "INTERNALERROR" not in r.stdout.str() + r.stderr.str()
    assert runs["2"].parseoutcomes() == runs["0"].parseoutcomes()
    assert (tmp_path / "n0.json").read_bytes() == (tmp_path / "n2.json").read_bytes()
