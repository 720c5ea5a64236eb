"""``pytest --audit FILE`` on arena and published-table inputs (recognised by content), and
``leaderboard-audit import`` of them, through pytester and the CLI's main."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from helpers.paths import DATA
from leaderboard_audit.cli import main as cli_main

ARGS = ("-p", "no:cacheprovider", "-q")
ALPACA = DATA / "alpaca_eval" / "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv"


def outcomes(result) -> dict[str, int]:
    """Outcome counts without warnings (pytester's cache_dir override) and deselected tests."""
    return {k: v for k, v in result.parseoutcomes().items() if k not in ("warnings", "warning", "deselected")}


def battles(n: int = 400, seed: int = 0) -> list[dict]:
    """A small FastChat battle list: m0 strongest, in time order."""
    rng = np.random.default_rng(seed)
    strength = np.array([1.5, 0.5, 0.0, -0.5, -1.5])
    rows = []
    for k in range(n):
        a, b = rng.choice(5, 2, replace=False)
        p = 1 / (1 + np.exp(strength[b] - strength[a]))
        u = rng.random()
        winner = "tie" if u < 0.1 else "tie (bothbad)" if u < 0.15 else "model_a" if rng.random() < p else "model_b"
        rows.append({"model_a": f"m{a}", "model_b": f"m{b}", "winner": winner, "tstamp": 1.7e9 + k, "anony": True})
    rows.append({"model_a": "m0", "model_b": "m1", "winner": "model_b", "tstamp": 1.8e9, "anony": False})
    return rows


def test_battles_file_audited_by_content(pytester):
    src = pytester.path / "clean_battle_20240101.json"
    src.write_text(json.dumps(battles()))
    report = pytester.path / "r.json"
    r = pytester.runpytest("--audit", str(src), "--audit-boot", "100", "--audit-report", str(report), *ARGS)
    out = json.loads(report.read_text())
    assert out["kind"] == "arena" and out["bootstrap"] == 100
    assert "elo_time" in out["scores"]  # per-battle input with time stamps: the time-ordered rule runs
    assert any("non-anonymous" in n for n in out["notes"])
    n_fail = sum(v["status"] == "fail" for v in out["verdicts"])
    n_skip = sum(v["status"] == "skip" for v in out["verdicts"])
    want = {"failed": n_fail, "skipped": n_skip, "passed": len(out["verdicts"]) - n_fail - n_skip}
    assert outcomes(r) == {k: v for k, v in want.items() if v}
    r.stdout.fnmatch_lines(["*champion under bt_bothbad_halved: m0*"])


def test_table_audited_by_content_and_strict(pytester):
    src = pytester.path / "board.csv"
    shutil.copy(ALPACA, src)
    md = pytester.path / "r.md"
    r = pytester.runpytest("--audit", str(src), "--audit-markdown", str(md), "-k", "exploit or champions", *ARGS)
    assert outcomes(r) == {"failed": 2}
    r.stdout.fnmatch_lines(["*FAIL exploit?table?: NullModel is champion only under length_controlled_winrate*"])
    assert "Examine NullModel first" in md.read_text()
    # warns (the axes' tau 0.843) pass, and fail under --audit-strict
    assert pytester.runpytest("--audit", str(src), "-k", "axes", *ARGS).ret == 0
    assert pytester.runpytest("--audit", str(src), "-k", "axes", "--audit-strict", *ARGS).ret == 1


def test_audit_format_names_the_reader(pytester):
    src = pytester.path / "board.txt"  # no suffix to go by: the format is named
    shutil.copy(ALPACA, src)
    r = pytester.runpytest("--audit", str(src), "--audit-format", "score-table", "-k", "champions", *ARGS)
    assert outcomes(r) == {"failed": 1}


def test_bad_input_is_one_usage_error(pytester):
    src = pytester.path / "clean_battle.json"
    src.write_text(json.dumps([{"model_a": "x", "model_b": "y", "winner": "x"}]))
    r = pytester.runpytest("--audit", str(src), *ARGS)
    assert r.ret == 4
    r.stderr.fnmatch_lines(["*clean_battle.json: battle 0: 'winner' is 'x'; expected one of*"])


def test_html_refused_for_aggregates(pytester):
    src = pytester.path / "board.csv"
    shutil.copy(ALPACA, src)
    r = pytester.runpytest("--audit", str(src), "--audit-html", str(pytester.path / "r.html"), *ARGS)
    assert r.ret == 4
    r.stderr.fnmatch_lines(["*--audit-html is not available for a score-table input*"])


def test_import_then_audit(tmp_path, capsys, pytester):
    out = tmp_path / "imported"
    assert cli_main(["import", "score-table", str(ALPACA), "-o", str(out)]) == 0
    assert "223 models x 2 configurations" in capsys.readouterr().out
    doc = json.loads((out / "score_table.json").read_text())
    assert doc["format"] == "leaderboard-audit/score-table-v1" and doc["reference"] == "win_rate"
    r = pytester.runpytest("--audit", str(out / "score_table.json"), "-k", "exploit", *ARGS)
    assert outcomes(r) == {"failed": 1}
    # other columns, chosen at import time
    out2 = tmp_path / "discrete"
    assert (
        cli_main(["import", "published-table", str(ALPACA), "-o", str(out2), "--columns", "win_rate,discrete_win_rate"])
        == 0
    )
    assert json.loads((out2 / "score_table.json").read_text())["configs"] == ["win_rate", "discrete_win_rate"]


def test_import_battles_round_trip(tmp_path):
    src = tmp_path / "clean_battle.json"
    src.write_text(json.dumps(battles(120)))
    out = tmp_path / "imported"
    assert cli_main(["import", "fastchat", str(src), "-o", str(out)]) == 0
    from leaderboard_audit.arena.data import read_battles, read_counts

    again = read_battles(out / "arena_battles.json")
    assert len(again.a) == 120  # the non-anonymous battle is left out
    assert read_counts(out / "arena_counts.json").n_battles == 120


def test_import_refuses_a_foreign_directory(tmp_path, capsys):
    out = tmp_path / "o"
    out.mkdir()
    (out / "mine.txt").write_text("x")
    assert cli_main(["import", "score-table", str(ALPACA), "-o", str(out)]) == 4
    assert "not a new or empty directory" in capsys.readouterr().err
    assert (out / "mine.txt").exists()


@pytest.mark.parametrize(
    "doc, message",
    [
        ({"models": ["a", "b"], "X": [[0, 0]], "Y": [[1, 0, 0, 0]]}, "X[0] = [0, 0] is not a pair"),
        ({"models": ["a", "b"], "X": [[0, 1]], "Y": [[1, -1, 0, 0]]}, "Y[0] = [1, -1, 0, 0]"),
        ({"models": ["a", "a"], "X": [], "Y": []}, "names 'a' twice"),
    ],
)
def test_count_file_errors_name_the_entry(tmp_path, doc, message):
    from leaderboard_audit.arena.data import ArenaInputError, read_counts

    p = tmp_path / "c.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(ArenaInputError, match=str(p)) as e:
        read_counts(p)
    assert message in str(e.value)


def test_table_errors_name_the_line(tmp_path):
    from leaderboard_audit.arena.data import ArenaInputError
    from leaderboard_audit.arena.table import read_table

    p = tmp_path / "t.csv"
    p.write_text("model,judge_a,judge_b\nx,0.5,0.6\ny,0.4,oops\n")
    with pytest.raises(ArenaInputError, match=r"t.csv: line 3: column 'judge_b' holds 'oops'"):
        read_table(p)
    p.write_text("model,judge_a,judge_a_se,judge_b\nx,0.5,0.01,0.6\ny,0.4,0.01,0.3\n")
    t = read_table(p)
    assert t.configs == ("judge_a", "judge_b") and t.se is not None and np.isnan(t.se[:, 1]).all()


@pytest.mark.slow
def test_outputs_written_under_xdist(pytester):
    pytest.importorskip("xdist")
    src = pytester.path / "board.csv"
    shutil.copy(ALPACA, src)
    report = pytester.path / "r.json"
    r = pytester.runpytest_subprocess(
        "--audit", str(src), "-n", "2", "-k", "exploit", "--audit-report", str(report), *ARGS
    )
    assert r.ret == 1
    assert json.loads(report.read_text())["champions"]["length_controlled_winrate"] == ["NullModel"]
    assert report.stat().st_mode & 0o044  # the umask's permissions, not mkstemp's 0600


def test_library_call_without_pytest(tmp_path):
    from leaderboard_audit.arena.inputs import audit_file

    rep = audit_file(str(ALPACA))
    assert rep["kind"] == "table" and rep["exploit"][0]["model"] == "NullModel"
    (tmp_path / "x.txt").write_text("nothing")
    from leaderboard_audit.arena.data import ArenaInputError

    with pytest.raises(ArenaInputError, match="x.txt: not an arena"):
        audit_file(str(tmp_path / "x.txt"))
