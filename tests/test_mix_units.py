"""mix's leave-one-out sets as xdist work units of their own (``mix_units``): under ``-n 2`` the
reports are the bytes a serial run writes, whichever tests ``-k`` selects, and the pooled
scope is computed by one worker and read by the others."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.builders import write
from leaderboard_audit.simulate import demo_spec, simulate

ARGS = ("-p", "no:cacheprovider", "-q", "--tb=no")


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    return write(simulate(demo_spec(items_per_benchmark=40)), tmp_path_factory.mktemp("demo"))


def _report(pytester, demo_dir: Path, out: Path, *extra: str) -> tuple[bytes, str]:
    r = pytester.runpytest_subprocess("--audit", str(demo_dir), "--audit-report", str(out), *ARGS, *extra)
    assert r.ret in (0, 1), r.stdout.str()[-3000:]
    assert "INTERNALERROR" not in r.stdout.str()
    return out.read_bytes(), r.stdout.lines[-1]


@pytest.mark.parametrize("select", ["mix", "pooled", "mix and arc", "not mix", "band and pooled"])
def test_a_selection_reports_under_two_workers_what_it_reports_serially(pytester, demo_dir, tmp_path, select):
    serial, counts0 = _report(pytester, demo_dir, tmp_path / "n0.json", "-k", select, "-n", "0")
    split, counts2 = _report(pytester, demo_dir, tmp_path / "n2.json", "-k", select, "-n", "2")
    assert split == serial
    assert _outcomes(counts2) == _outcomes(counts0)  # the same tests, the same outcomes


def _outcomes(line: str) -> dict[str, int]:
    """pytest's counts line without its deselected count (xdist's controller does not see it)."""
    parts = (p.strip().split(" ", 1) for p in line.split(" in ")[0].split(","))
    return {what: int(n) for n, what in parts if what != "deselected"}


def test_the_pooled_scope_carries_mix_as_a_serial_run_does(pytester, demo_dir, tmp_path):
    data, _ = _report(pytester, demo_dir, tmp_path / "n2.json", "-n", "2")
    pooled = json.loads(data)["scopes"]["pooled"]
    assert set(pooled["mix"]["without"]) == {"arc", "hellaswag", "mmlu", "truthfulqa"}
    mix = [v["id"] for v in pooled["verdicts"] if v["check"] == "mix"]
    assert mix == [f"mix[{b}]" for b in ("arc", "hellaswag", "mmlu", "truthfulqa")]
    assert [v["check"] for v in pooled["verdicts"]][-len(mix) :] == ["mix"] * len(mix)


def test_without_a_temporary_directory_each_worker_computes_its_own(pytester, demo_dir, tmp_path, monkeypatch):
    """The run's shared directory cannot be made: no sharing and no mix units, the same report."""
    import tempfile

    serial, _ = _report(pytester, demo_dir, tmp_path / "n0.json", "-n", "0")

    def refuse(*args, **kwargs):
        raise OSError("no temporary directory here")

    monkeypatch.setattr(tempfile, "mkdtemp", refuse)  # the controller runs in this process
    r = pytester.runpytest_inprocess(
        "--audit", str(demo_dir), "--audit-report", str(tmp_path / "n2.json"), *ARGS, "-n", "2"
    )
    assert r.ret in (0, 1), r.stdout.str()[-3000:]
    assert (tmp_path / "n2.json").read_bytes() == serial
