"""``collect --replay DIR --until-decided --max-budget F`` (collect/replay.py; issue 53, item 5):
the stopping rule of a budgeted collection with a SPEC, answered from DIR's cells."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from leaderboard_audit.collect.budget import budget_cells
from leaderboard_audit.collect.cli import main as collect_main
from leaderboard_audit.collect.replay import DESIGN_KEY, replay_plan
from leaderboard_audit.engine import audit
from leaderboard_audit.records import load_records

TINY = Path(__file__).resolve().parents[2] / "fixtures" / "tiny"  # 3 models x 8 items x 4 configs


def run(tmp_path: Path, name: str, cap: str, seed: str, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str]:
    """The replay into ``tmp_path/name``; its folder and its last line."""
    out = tmp_path / name
    argv = ["--replay", str(TINY), "--until-decided", "--max-budget", cap, "--seed", seed, "--output", str(out)]
    assert collect_main(argv) == 0
    return out, capsys.readouterr().out.strip().splitlines()[-1]


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_until_decided_stops_once_every_robust_status_is_known_below_the_cap(tmp_path, capsys):
    out, last = run(tmp_path, "a", "1.0", "3", capsys)
    rec = load_records(out)
    d = rec.grid.extra[DESIGN_KEY]
    assert d["stop"] == "until_decided" and d["max_budget"] == 1.0 and d["seed"] == 3
    assert d["robust_status"]["decided"] == d["robust_status"]["pairs"] == 24
    assert d["cells"] < d["grid_cells"] == 96  # it stopped before the cap
    obs = rec.missing == 0
    assert d["cells"] == int(obs.sum())
    assert ((obs & ~rec.correct).any(axis=2) | obs.all(axis=2)).all()  # a failure seen, or all K seen
    assert f"{d['cells']:,} of 96 cells used" in last and "stopped: every robust status is known" in last
    assert "decided: 24 of 24 robust statuses" in last and "band verdicts" in last and str(out) in last


def test_until_decided_never_passes_its_cap_and_says_so(tmp_path, capsys):
    out, last = run(tmp_path, "a", "0.5", "1", capsys)
    rec = load_records(out)
    cap = budget_cells(0.5, rec.shape)
    assert int((rec.missing == 0).sum()) <= cap
    assert f"the cap {cap:,}" in last
    if "stopped: the cap is spent" not in last:
        assert "stopped: every robust status is known" in last


def test_until_decided_chooses_what_the_plan_at_its_cap_chooses(tmp_path, capsys):
    # as with a SPEC (docs/collect.md): the same cells as --budget F, recorded as until_decided
    out, _ = run(tmp_path, "u", "0.8", "2", capsys)
    b = tmp_path / "b"
    assert collect_main(["--replay", str(TINY), "--budget", "0.8", "--seed", "2", "--output", str(b), "--quiet"]) == 0
    got, want = load_records(out), load_records(b)
    assert np.array_equal(got.missing, want.missing) and np.array_equal(got.correct, want.correct)
    assert np.array_equal(got.missing == 0, replay_plan(load_records(TINY), 0.8, 2).observed)
    d, w = got.grid.extra[DESIGN_KEY], want.grid.extra[DESIGN_KEY]
    assert {k: d[k] for k in w} == w and "stop" not in w


def test_until_decided_is_byte_identical_for_a_seed(tmp_path, capsys):
    a, line_a = run(tmp_path, "a", "0.7", "5", capsys)
    b, line_b = run(tmp_path, "b", "0.7", "5", capsys)
    assert tree(a) == tree(b) and tree(a)
    assert line_a.replace(str(a), "OUT") == line_b.replace(str(b), "OUT")
    assert not list(tmp_path.glob(".*tmp"))  # written atomically: no temporary folder left


def test_the_last_lines_band_count_is_the_audits(tmp_path, capsys):
    out, last = run(tmp_path, "a", "1.0", "0", capsys)
    rep = audit(out, n_boot=50)
    band = [v for v in rep["scopes"]["pooled"]["verdicts"] if v["check"] == "band"]  # one benchmark: pooled only
    n = sum(1 for v in band if v.get("decided", True))
    assert f"{n} of {len(band)} band verdicts" in last


@pytest.mark.parametrize(
    ("flags", "msg"),
    [
        (["--until-decided"], "needs its cap"),
        (["--max-budget", "0.5"], "cap of 'until_decided'"),
        (["--budget", "0.3", "--until-decided", "--max-budget", "0.5"], "not both"),
        (["--until-decided", "--max-budget", "1.5"], "in (0, 1]"),
        (["--until-decided", "--max-budget", "0.1"], "give at least"),
    ],
)
def test_until_decided_flag_errors(tmp_path, capsys, flags, msg):
    out = tmp_path / "o"
    assert collect_main(["--replay", str(TINY), *flags, "--output", str(out)]) == 4
    assert msg in capsys.readouterr().err
    assert not out.exists()


def test_until_decided_needs_an_output(capsys):
    assert collect_main(["--replay", str(TINY), "--until-decided", "--max-budget", "0.5"]) == 4
    assert "--replay needs --output" in capsys.readouterr().err
