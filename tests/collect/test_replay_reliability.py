"""``collect --replay``: graded sets, an OUT nested with DIR, write errors (reliability review D03, D16, E08)."""

from __future__ import annotations

import errno
import os

import numpy as np
import pytest
from helpers.records import load_quiet, make_records

from leaderboard_audit.collect import replay as replay_mod
from leaderboard_audit.collect.budget import NOT_ROBUST, ROBUST
from leaderboard_audit.collect.cli import main as collect_main
from leaderboard_audit.collect.replay import replay_plan, replayed_records
from leaderboard_audit.records import Records, write_records

TIE = 0.5


def graded_set() -> Records:
    """make_records' grid as preference outcomes: some losses become ties, among them a cell
    under the reference configuration of every model (round 1 observes each of those)."""
    rec = make_records(seed=2)
    score = rec.correct.astype(np.float64)
    ref = rec.grid.reference_index
    rng = np.random.default_rng(2)
    tie = (score == 0) & (rng.random(rec.shape) < 0.4)
    for m in range(rec.shape[0]):
        i = int(np.flatnonzero(score[m, :, ref] == 0)[0])
        tie[m, i, ref] = True
    score[tie] = TIE
    return Records(correct=score == 1, models=rec.models, items=rec.items, grid=rec.grid, score=score, source="graded")


def files(root) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_replay_of_a_graded_set_keeps_its_outcomes(tmp_path):
    src, out = tmp_path / "graded", tmp_path / "out"
    write_records(graded_set(), src)
    assert collect_main(["--replay", str(src), "--budget", "0.5", "--output", str(out), "--seed", "1"]) == 0
    full, got = load_quiet(src), load_quiet(out)
    assert full.graded and got.graded  # a tie is no loss
    obs = got.missing == 0
    assert np.array_equal(got.score[obs], full.score[obs])
    assert not got.score[~obs].any()  # 0 at a missing cell (records/graded.py)
    assert np.array_equal(got.correct, got.score == 1)
    ref = full.grid.reference_index
    assert (got.score[:, :, ref] == full.score[:, :, ref]).all() and (got.score[:, :, ref] == TIE).any()
    assert b'"gen|letter_plain|p0":0.5' in b"".join(files(out).values())
    p = replay_plan(full, 0.5, 1)
    assert got.equals(replayed_records(full, p, fraction=0.5, seed=1))
    # robust on graded records is "won outright under all K" (docs/audits.md): the plan's
    # decided statuses are the full grid's, and a tie settles a (model, item) as not robust
    won_all = full.correct.all(axis=2)
    assert won_all[p.status == ROBUST].all()
    assert not won_all[p.status == NOT_ROBUST].any()
    assert (p.status[(full.score[:, :, ref] == TIE)] == NOT_ROBUST).all()


def nested_cases(tmp_path):
    src = tmp_path / "full"
    write_records(make_records(), src)
    os.symlink(src, tmp_path / "link")
    return {
        "inside": (src, src / "sub", "is inside"),
        "same": (src, src, "is the same folder as"),
        "holds": (src, tmp_path, "holds"),
        "through a link": (tmp_path / "link", src / "sub", "is inside"),
        "out through a link": (src, tmp_path / "link" / "sub", "is inside"),
    }


@pytest.mark.parametrize("case", ["inside", "same", "holds", "through a link", "out through a link"])
def test_replay_refuses_an_output_nested_with_dir(tmp_path, capsys, case):
    src, out, why = nested_cases(tmp_path)[case]
    before = files(tmp_path / "full")
    assert collect_main(["--replay", str(src), "--budget", "0.5", "--output", str(out)]) == 4
    err = capsys.readouterr().err
    assert err.startswith(f"leaderboard-audit collect: {out}: --output {why} --replay {src}")
    assert "fix: give an --output outside --replay DIR" in err
    if "link" in case:
        assert f"links resolved: --output {(tmp_path / 'full' / 'sub')}, --replay {tmp_path / 'full'}" in err
    assert files(tmp_path / "full") == before and not (tmp_path / "full" / "sub").exists()
    assert load_quiet(src).shape == make_records().shape  # DIR still loads


def test_replay_into_a_sibling_is_accepted(tmp_path):
    src = tmp_path / "full"
    write_records(make_records(), src)
    assert collect_main(["--replay", str(src), "--budget", "0.5", "--output", str(tmp_path / "fullx")]) == 0
    assert load_quiet(tmp_path / "fullx").missing is not None


def test_a_write_error_names_output_not_dir(tmp_path, capsys, monkeypatch):
    src, out = tmp_path / "full", tmp_path / "out"
    write_records(make_records(), src)

    def disk_full(records, root):
        (root / "grid.json").write_text("{")  # a part written, then the disk is full
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(replay_mod, "write_records", disk_full)
    assert collect_main(["--replay", str(src), "--budget", "0.5", "--output", str(out)]) == 4
    err = capsys.readouterr().err
    assert err == (
        f"leaderboard-audit collect: {out}: --output: cannot write ({os.strerror(errno.ENOSPC)}); "
        "nothing partial is left\n"
    )
    assert not out.exists() and not list(tmp_path.glob(".*tmp"))
