"""The gate fails closed on cells a newcomer withholds (reliability review 2026-12-07 D02;
docs/ci-gate.md, "Incomplete submissions"): a newcomer that manufactures a pair fails the gate
when it submits every cell, and must not pass once it marks its non-reference cells
``not_collected`` (every gating verdict then "undecided", a warn). An undecided verdict of a
gating check on a scope where a newcomer has missing cells blocks (exit 1) with "undecided: N
cells withheld (...)", unless the maintainer allows it (``--audit-allow-undecided``, CLI
``--allow-undecided``, ini ``audit_allow_undecided``). Missing cells of the models already on the
board, the newcomer's own complete, keep today's warns."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence

import numpy as np
import pytest

from helpers.builders import write
from helpers.gate_boards import done_when_board
from leaderboard_audit.engine.gate import WITHHELD, submission_audit
from leaderboard_audit.records import Records
from leaderboard_audit.records.missing import REASON_CODE
from leaderboard_audit.reports.markdown import gate_markdown
from leaderboard_audit.reports.submission_text import gate_tables, state_line

ARGS = ("-p", "no:cacheprovider", "-q")
ITEMS = 120  # the review's board: done_when_board("twin", items=120)
BLOCKED = ["manufactured[pooled-old-a>newbie]", "manufactured[pooled-newbie>mid]", "ranking[pooled]"]


def withhold(r: Records, model: str, reason: str = "not_collected", keep: Sequence[str] = ()) -> Records:
    """``r`` with every cell of ``model`` missing (``reason``) but the reference's and ``keep``'s."""
    m = r.models.index(model)
    miss = np.zeros(r.correct.shape, np.int8)
    miss[m] = REASON_CODE[reason]
    for k in (r.grid.reference, *keep):
        miss[m, :, r.grid.keys.index(k)] = 0
    correct = np.array(r.correct)
    correct[miss != 0] = False  # a missing cell is 0 in ``correct`` (records/missing.py)
    return dataclasses.replace(r, correct=correct, missing=miss)


@pytest.fixture(scope="module")
def twin() -> Records:
    return done_when_board("twin", items=ITEMS)


@pytest.fixture(scope="module")
def d02(twin) -> Records:
    """D02's pull request: the twin newcomer, only its reference cells observed."""
    return withhold(twin, "newbie")


@pytest.fixture(scope="module")
def d02_dir(d02, tmp_path_factory):
    return write(d02, tmp_path_factory.mktemp("d02") / "records")


def rows_of(sub: dict) -> dict[str, dict]:
    return {r["id"]: r for r in sub["scopes"]["pooled"]["rows"]}


# -- library --------------------------------------------------------------------------


def test_d02_withheld_cells_block_the_gate(d02):
    sub = submission_audit(d02, ["newbie"], n_boot=1000)
    ov = sub["overall"]
    assert ov["exit_code"] == 1 and ov["status"] == "fail"
    assert ov["blocking"] == BLOCKED
    assert ov["effects"][WITHHELD] == ov["undecided"] == 3 and ov["effects"]["created"] == 0
    rows = rows_of(sub)
    cells = 25 * ITEMS  # every non-reference cell of the newcomer
    for vid in BLOCKED:
        r = rows[vid]
        assert (r["status"], r["effect"], r["gates"], r["undecided_withheld"]) == ("warn", WITHHELD, True, True)
        assert r["why"].startswith(
            f"undecided: {cells:,} cells withheld (newbie: {cells:,} not_collected in 25 configs; "
            "first (bench/sim-00000, gen|letter_plain|p1), (bench/sim-00000, gen|letter_plain|p2); per config: "
            f"gen|letter_plain|p1 {ITEMS}, "
        )
    # band does not gate by default: its undecided verdict stays a warn (context)
    assert (rows["band[pooled-newbie]"]["effect"], rows["band[pooled-newbie]"]["undecided_withheld"]) == (
        "new warn",
        False,
    )
    w = sub["scopes"]["pooled"]["withheld"]
    assert w["count"] == cells and w["models"]["newbie"]["reasons"] == {"not_collected": cells}
    assert len(w["models"]["newbie"]["configs"]) == 25 and all(n == ITEMS for _, n in w["models"]["newbie"]["configs"])
    line = state_line(sub)
    assert line.startswith("submission newbie: FAIL - ")
    assert f"3 undecided on {cells:,} cells it withheld); fails the gate: {', '.join(BLOCKED)} (undecided: " in line
    assert line.endswith("; exit 1")


def test_d02_allow_undecided_restores_the_warns(d02):
    sub = submission_audit(d02, ["newbie"], n_boot=1000, allow_undecided=True)
    ov = sub["overall"]
    assert (ov["exit_code"], ov["status"], ov["blocking"]) == (0, "warn", [])
    assert ov["allow_undecided"] and ov["undecided"] == 3 and ov["effects"][WITHHELD] == 0
    rows = rows_of(sub)
    for vid in BLOCKED:  # today's effects: warns the newcomer brings, flagged as allowed
        assert rows[vid]["effect"] in ("new warn", "warn") and rows[vid]["undecided_withheld"]
    assert "3 undecided on 3,000 cells it withheld, allowed by --audit-allow-undecided); exit 0" in state_line(sub)
    # --audit-strict still fails a warn the newcomer brings, allowed or not
    assert submission_audit(d02, ["newbie"], n_boot=1000, allow_undecided=True, strict=True)["overall"]["exit_code"]


def test_complete_newcomers_are_judged_as_before(twin):
    """Nothing withheld: the honest newcomer passes, the complete twin fails on its created fail."""
    clean = submission_audit(done_when_board("clean", items=ITEMS), ["newbie"], n_boot=1000)
    assert clean["overall"]["exit_code"] == 0 and clean["overall"]["undecided"] == 0
    assert clean["scopes"]["pooled"]["withheld"] is None
    assert "undecided" not in state_line(clean)
    full = submission_audit(twin, ["newbie"], n_boot=1000)["overall"]
    assert (full["exit_code"], full["blocking"], full["effects"][WITHHELD]) == (
        1,
        ["manufactured[pooled-newbie>mid]"],
        0,
    )


@pytest.mark.parametrize("reason", ["not_collected", "failed", "not_possible"])
def test_every_reason_is_withheld_evidence(twin, reason):
    """A reason is the submitter's word: ``not_possible`` (or ``failed``) instead of
    ``not_collected`` must not reopen D02. Keeping one more configuration does not either (the
    review's T3)."""
    sub = submission_audit(withhold(twin, "newbie", reason, keep=["gen|digit_labels|p0"]), ["newbie"], n_boot=1000)
    ov = sub["overall"]
    assert ov["exit_code"] == 1 and ov["effects"]["created"] == 0
    assert {"manufactured[pooled-old-a>newbie]", "manufactured[pooled-newbie>mid]"} <= set(ov["blocking"])
    assert f"undecided: 2,880 cells withheld (newbie: 2,880 {reason} in 24 configs;" in state_line(sub)
    # a verdict decided whatever the missing cells hold never blocks (with not_possible configs, ranking is)
    for r in sub["scopes"]["pooled"]["rows"]:
        assert (r["effect"] == WITHHELD) == (r["gates"] and r["status"] == "warn" and r["undecided_withheld"])


def test_only_the_newcomers_missing_cells_block(twin):
    """The rule is about cells the newcomer withheld: the same undecided gating verdicts, with
    the missing cells an older model's and the newcomer complete, stay warns (exit 0). Dropping
    the withheld-cell condition (blocking any undecided gating verdict) fails this test; dropping
    the rule fails the ones above."""
    clean = done_when_board("clean", items=ITEMS)
    old_missing = submission_audit(withhold(clean, "mid"), ["newbie"], n_boot=1000)
    new_missing = submission_audit(withhold(clean, "newbie"), ["newbie"], n_boot=1000)
    for sub in (old_missing, new_missing):  # the same verdicts are undecided either way
        undecided = {r["id"] for r in sub["scopes"]["pooled"]["rows"] if r["gates"] and "undecided" in r["message"]}
        assert {"manufactured[pooled-old-a>newbie]", "manufactured[pooled-newbie>mid]"} <= undecided
    assert old_missing["scopes"]["pooled"]["withheld"] is None
    assert old_missing["overall"]["exit_code"] == 0 and old_missing["overall"]["undecided"] == 0
    assert new_missing["overall"]["exit_code"] == 1
    assert set(new_missing["overall"]["blocking"]) >= {"manufactured[pooled-newbie>mid]"}


def test_pr_comment_shows_the_blocked_rows_with_their_reason(d02):
    sub = submission_audit(d02, ["newbie"], n_boot=1000)
    md = gate_markdown({"submission_audit": sub})
    assert "FAILS THE GATE: undecided on cells the newcomer withheld" in md
    assert "undecided: 3,000 cells withheld (newbie: 3,000 not_collected in 25 configs" in md  # escaped
    verdicts = next(t for t in gate_tables(sub) if getattr(t, "key", "") == "gate-verdicts")
    first = verdicts.rows[: len(BLOCKED)]  # the blocked rows come first
    assert sorted(r[1] for r in first) == sorted(BLOCKED)
    assert all(str(r[7]).startswith("undecided: 3,000 cells withheld") for r in first)


# -- CLI and pytest --------------------------------------------------------------------


def test_cli_blocks_d02_and_allow_undecided_passes(d02_dir, capsys):
    from leaderboard_audit.cli.audit import main

    assert main([str(d02_dir), "--submission", "newbie", "--boot", "1000"]) == 1
    out = capsys.readouterr().out
    assert "fails the gate: manufactured[pooled-old-a>newbie]" in out and "(undecided: 3,000 cells withheld (" in out
    assert main([str(d02_dir), "--submission", "newbie", "--boot", "1000", "--allow-undecided"]) == 0
    assert "allowed by --audit-allow-undecided); exit 0" in capsys.readouterr().out


@pytest.mark.slow
def test_pytest_gate_blocks_d02_unless_allowed(pytester, d02_dir, tmp_path):
    md, rep = tmp_path / "gate.md", tmp_path / "gate.json"
    args = (f"--audit={d02_dir}", "--audit-submission", "newbie", "--audit-boot", "1000", *ARGS)
    r = pytester.runpytest(*args, "--audit-markdown", str(md), "--audit-report", str(rep))
    assert r.ret == 1
    r.stdout.fnmatch_lines(["submission newbie: FAIL - *fails the gate: *(undecided: 3,000 cells withheld (*; exit 1"])
    assert "FAILS THE GATE: undecided on cells the newcomer withheld" in md.read_text()
    assert json.loads(rep.read_text())["submission_audit"]["overall"]["blocking"] == BLOCKED
    assert pytester.runpytest(*args, "--audit-allow-undecided").ret == 0
    # the gate job's trusted ini (.github/leaderboard-gate.ini) can allow it too
    ini = tmp_path / "gate.ini"
    ini.write_text("[pytest]\naudit_allow_undecided = true\n")
    allowed = pytester.runpytest("-c", str(ini), "--rootdir", str(tmp_path), *args)
    assert allowed.ret == 0
    allowed.stdout.fnmatch_lines(["submission newbie: WARN - *allowed by --audit-allow-undecided); exit 0"])
