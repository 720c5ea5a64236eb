"""Judge outputs in their native formats (files written here in each documented format,
the source of each format named), and planted truths: a position-biased judge, a
length-exploiting model, no false alarms beyond 5% when nothing differs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from helpers.judges import alpaca_annotations, arena_hard_judgments

from leaderboard_audit.arena.audit import audit_table
from leaderboard_audit.arena.data import ArenaInputError
from leaderboard_audit.arena.formats import sniff
from leaderboard_audit.arena.judges import Outcomes, read_alpaca_annotations, read_arena_hard, read_mt_bench


def verdict(report, vid):
    return next(v for v in report["verdicts"] if v["id"] == vid)


def arena_hard_dir(tmp: Path, strength: dict[str, float], bias: float, n: int = 80, seed: int = 0) -> Path:
    """Arena-Hard judgments with one position bias for every model (``bias`` > 0: the judge
    favours the answer shown first, A)."""
    return arena_hard_judgments(tmp, strength, dict.fromkeys(strength, bias), n=n, seed=seed)


def test_arena_hard_by_hand(tmp_path):
    root = tmp_path / "judge-y"
    root.mkdir()
    rows = [
        {"question_id": 1, "model": "m", "judge": "judge-y", "games": [{"score": "B>>A"}, {"score": "A>B"}]},
        {"question_id": 2, "model": "m", "judge": "judge-y", "games": [{"score": "A=B"}, {"score": "B>A"}]},
        {"question_id": 3, "model": "m", "judge": "judge-y", "games": [{"score": None}, {"score": "B>A"}]},
    ]
    (root / "m.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    (root / "n.jsonl").write_text(json.dumps({**rows[0], "model": "n"}))
    assert sniff(root / "m.jsonl") == "arena-hard"
    t = read_arena_hard(root)
    col = {c: k for k, c in enumerate(t.configs)}
    m = t.models.index("m")
    # game 1 (baseline as A): B>>A -> 1, A=B -> 1/2; game 2 (model as A): A>B -> 1, B>A -> 0
    assert t.scores[m, col["judge=judge-y|position=baseline-first|scale=3way"]] == 0.75
    assert t.scores[m, col["judge=judge-y|position=model-first|scale=5way"]] == pytest.approx((0.75 + 0.25) / 2)
    assert t.scores[m, col["judge=judge-y|position=both|scale=5way"]] == pytest.approx((1 + 0.75 + 0.5 + 0.25) / 4)
    assert t.reference == "judge=judge-y|position=both|scale=5way"
    assert set(t.axes) == {"position", "scale"}
    assert any("did not score" in n for n in t.notes)


def test_position_biased_judge_is_load_bearing(tmp_path):
    strength = {"m1": 0.9, "m2": 0.6, "m3": 0.3, "m4": 0.0, "m5": -0.3}
    biased = audit_table(read_arena_hard(arena_hard_dir(tmp_path / "b", strength, bias=0.6)))
    v = verdict(biased, "judge_axis[table-position]")
    assert v["status"] == "fail" and "load-bearing" in v["message"]
    assert biased["judge_axes"]["position"]["mean_shift"] > 0.1  # model-first minus baseline-first
    fair = audit_table(read_arena_hard(arena_hard_dir(tmp_path / "f", strength, bias=0.0)))
    assert verdict(fair, "judge_axis[table-position]")["status"] == "pass"


def test_length_exploiting_model_is_flagged(tmp_path):
    quality = {"honest-a": 0.6, "honest-b": 0.45, "honest-c": 0.3, "verbose": 0.0}
    length = {"honest-a": 1000, "honest-b": 1000, "honest-c": 1000, "verbose": 3500}
    src = alpaca_annotations(tmp_path / "annotations.json", quality, length, gamma=2.0, n=150, seed=1)
    assert sniff(src) == "alpaca-eval-annotations"
    rep = audit_table(read_alpaca_annotations(src))
    assert rep["champions"]["judge=judge-x|length=raw"] == ["verbose"]
    assert rep["champions"]["judge=judge-x|length=controlled"] == ["honest-a"]
    flagged = [e for e in rep["exploit"] if e["flagged"]]
    # named first: the most decisive lone crown (with two configurations honest-a's LC crown
    # is a lone decisive crown too, listed after it: docs/audits.md)
    assert flagged[0]["model"] == "verbose" and flagged[0]["config"] == "judge=judge-x|length=raw"
    assert flagged[0]["lead_z"] > flagged[1]["lead_z"]
    assert rep["next_steps"][0].startswith("Examine verbose first")
    assert verdict(rep, "judge_axis[table-length]")["status"] == "fail"


def null_table(rng: np.random.Generator, M: int = 8, n: int = 60):
    """Every model equal, a judge with no position bias: two positions x two scales."""
    out = Outcomes()
    draws = rng.choice(
        5, size=(M, n, 2), p=[0.15, 0.2, 0.3, 0.2, 0.15]
    ).tolist()  # one call: 17 of 22 s were rng.choice's
    for m in range(M):
        for i in range(n):
            for p, pos in enumerate(("first", "second")):
                k = draws[m][i][p]
                out.add(f"m{m}", {"position": pos, "scale": "3way"}, [0.0, 0.0, 0.5, 1.0, 1.0][k])
                out.add(f"m{m}", {"position": pos, "scale": "5way"}, k / 4)
    return out.table("null")


@pytest.mark.slow
def test_false_alarms_under_no_real_differences():
    rng = np.random.default_rng(47)
    runs = 400
    alarms = {"judge_axis_position": 0, "printed_pair_separated": 0, "identified_any": 0, "exploit": 0}
    pairs = 0
    for _ in range(runs):
        rep = audit_table(null_table(rng))
        alarms["judge_axis_position"] += verdict(rep, "judge_axis[table-position]")["status"] != "pass"
        alarms["identified_any"] += rep["identified"]["identified_pairs"] > 0
        alarms["exploit"] += verdict(rep, "exploit[table]")["status"] == "fail"
        sep = [p["separated"] for p in rep["printed_pairs"]]
        alarms["printed_pair_separated"] += sum(sep)
        pairs += len(sep)
    rates = {k: v / (pairs if k == "printed_pair_separated" else runs) for k, v in alarms.items()}
    # nominal 5%, plus two Monte Carlo standard errors of a 5% rate over 400 runs (the
    # position test's rate over 2,000 null tables is 5.4% +- 0.5%: docs/audits.md)
    assert all(r <= 0.05 + 2 * (0.05 * 0.95 / runs) ** 0.5 for r in rates.values()), rates


def test_mt_bench_single_and_pair(tmp_path):
    # lm-sys/FastChat fastchat/llm_judge: data/mt_bench/model_judgment/gpt-4_single.jsonl and _pair.jsonl
    single = tmp_path / "judge-x_single.jsonl"
    rows = [
        {"question_id": 81, "model": "a", "judge": ["judge-x", "single-v1"], "score": 10, "turn": 1},
        {"question_id": 82, "model": "a", "judge": ["judge-x", "single-v1"], "score": 4, "turn": 1},
        {"question_id": 81, "model": "b", "judge": ["judge-x", "single-v1"], "score": 1, "turn": 1},
        {"question_id": 82, "model": "b", "judge": ["judge-x", "single-v1"], "score": -1, "turn": 1},
    ]
    single.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert sniff(single) == "mt-bench"
    t = read_mt_bench(single)
    assert t.models == ("a", "b") and t.configs == ("judge=judge-x|turn=1",)
    assert t.scores[:, 0].tolist() == pytest.approx([(1 + 3 / 9) / 2, 0.0])
    assert t.n[:, 0].tolist() == [2, 1]
    pair = tmp_path / "judge-x_pair.jsonl"
    rows = [
        {"question_id": 81, "model_1": "a", "model_2": "b", "g1_winner": "model_1", "g2_winner": "tie",
         "judge": ["judge-x", "pair-v2"], "turn": 1},
        {"question_id": 82, "model_1": "b", "model_2": "a", "g1_winner": "model_1", "g2_winner": "error",
         "judge": ["judge-x", "pair-v2"], "turn": 1},
    ]  # fmt: skip
    pair.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    t = read_mt_bench(pair)
    col = {c: k for k, c in enumerate(t.configs)}
    a, b = t.models.index("a"), t.models.index("b")
    first, second = col["judge=judge-x|position=first|turn=1"], col["judge=judge-x|position=second|turn=1"]
    # a shown first: wins q81 g1 -> 1; b shown first: tie q81 g2 (b first) -> 1/2, wins q82 g1 -> 1
    assert t.scores[a, first] == 1.0 and t.scores[b, first] == pytest.approx(0.75)
    assert t.scores[a, second] == pytest.approx(0.25) and t.scores[b, second] == 0.0
    assert t.axes == {"position": [("judge=judge-x|position=first|turn=1", "judge=judge-x|position=second|turn=1")]}


def test_judge_errors_name_file_and_line(tmp_path):
    f = tmp_path / "m.jsonl"
    f.write_text(json.dumps({"model": "m", "games": [{"score": "A>B"}, {"score": "A>>>B"}]}) + "\n")
    with pytest.raises(ArenaInputError, match=r"m.jsonl: line 1: game 2 score 'A>>>B'"):
        read_arena_hard(f)
    f.write_text(json.dumps({"model": "m", "judge": ["j", "single-v1"], "score": 11, "turn": 1}) + "\n")
    with pytest.raises(ArenaInputError, match=r"m.jsonl: line 1: 'score' is 11"):
        read_mt_bench(f)


def test_judge_folder_audited_through_pytest(pytester):
    strength = {"m1": 0.9, "m2": 0.3, "m3": -0.3}
    root = arena_hard_dir(pytester.path / "run", strength, bias=0.6, n=60)
    assert sniff(root) == "arena-hard"  # model_judgment/, recognised from its first file
    r = pytester.runpytest("--audit", str(root), "-k", "judge_axis", "-p", "no:cacheprovider", "-q")
    r.stdout.fnmatch_lines(["*FAIL judge_axis?table-position?: the position axis alone moves scores*load-bearing*"])
    assert r.ret == 1


def test_records_folder_is_not_a_judge_folder(tmp_path):
    from helpers.builders import stable_records, write

    assert sniff(write(stable_records(), tmp_path / "rec")) is None


def test_judged_records_carry_the_item_checks(tmp_path):
    """Arena-Hard judgments as records: each cell the graded outcome against the baseline
    (3-way and 5-way, both positions); the judge axes are declared axis groups, so the
    item-level checks read them."""
    from leaderboard_audit.arena.judges import AH_3WAY, AH_5WAY
    from leaderboard_audit.engine import audit
    from leaderboard_audit.importers import load

    root = arena_hard_dir(tmp_path, {"m1": 0.9, "m2": 0.6, "m3": 0.0}, bias=0.6, n=60)
    rec = load(root, "judged")
    assert rec.shape == (3, 60, 4) and rec.graded
    key = "judge=judge-x|position={}|scale={}".format
    ref = key("baseline-first", "5way")
    assert rec.grid.reference == ref
    assert rec.grid.extra["axis_groups"] == {
        "position": [ref, key("model-first", "5way")],
        "scale": [ref, key("baseline-first", "3way")],
    }
    # each outcome is the game's own label read for the model (game 2 shows the model as A)
    mirror = {"A>>B": "B>>A", "A>B": "B>A", "A=B": "A=B", "B>A": "A>B", "B>>A": "A>>B"}
    rows = [json.loads(x) for x in (root / "judge-x" / "m1.jsonl").read_text().splitlines()]
    m = rec.models.index("m1")
    ids = [str(i) for i in rec.items.item_id.tolist()]
    col = {k: j for j, k in enumerate(rec.grid.keys)}
    for row in rows:
        k = ids.index(row["question_id"])
        g1, g2 = row["games"][0]["score"], mirror[row["games"][1]["score"]]
        for scale, table in (("3way", AH_3WAY), ("5way", AH_5WAY)):
            assert rec.score[m, k, col[key("baseline-first", scale)]] == table[g1]
            assert rec.score[m, k, col[key("model-first", scale)]] == table[g2]
    assert np.array_equal(rec.correct, rec.score == 1)  # the bit is a win outright
    report = audit(rec, n_boot=200)
    band = [v for v in report["scopes"]["pooled"]["verdicts"] if v["check"] == "band"]
    assert all(v["status"] == "fail" for v in band)  # the biased judge moves every model's win share


def test_judged_through_pytest_and_import(pytester, tmp_path):
    from leaderboard_audit.cli import main as cli_main

    root = arena_hard_dir(pytester.path / "run", {"m1": 0.9, "m2": 0.0}, bias=0.0, n=40)
    r = pytester.runpytest(
        "--audit", str(root), "--audit-format", "judged", "-k", "champions", "-p", "no:cacheprovider", "-q"
    )
    got = r.parseoutcomes()
    assert r.ret in (0, 1) and got.get("passed", 0) + got.get("failed", 0) == 1  # champions (pooled folds in)
    out = tmp_path / "records"
    assert cli_main(["import", "judged", str(root), "-o", str(out)]) == 0
    assert (out / "grid.json").exists()


def test_arena_hard_judge_prompt_is_an_axis(tmp_path):
    """Lines naming a ``judge_prompt`` (the collector's judge stage) add a ``prompt`` axis;
    without the key the configurations are as before (test_arena_hard_by_hand)."""
    root = tmp_path / "judge-z"
    root.mkdir()
    rows = []
    for model in ("m", "n"):
        for prompt, labels in (("arena-hard", ["B>A", "A>B"]), ("mt-bench-pair", ["A>B", "A>B"])):
            games = [{"score": x} for x in labels]
            rows.append({"question_id": 1, "model": model, "judge": "judge-z", "judge_prompt": prompt, "games": games})
    (root / "all.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    t = read_arena_hard(root)
    assert set(t.axes) == {"prompt", "position", "scale"}
    col = {c: k for k, c in enumerate(t.configs)}
    m = t.models.index("m")
    assert t.scores[m, col["judge=judge-z|prompt=arena-hard|position=model-first|scale=3way"]] == 1.0
    assert t.scores[m, col["judge=judge-z|prompt=mt-bench-pair|position=baseline-first|scale=3way"]] == 0.0
    from leaderboard_audit.importers.judged import load_judged

    rec = load_judged(root)
    assert set(rec.grid.axis_groups) == {"prompt", "position", "scale"}


def test_judge_axis_on_columns_of_one_value_each(tmp_path):
    """4 questions, a judge that always names A (the 135M judge of .ci/judge_check.sh on one CPU):
    every column is one value, so both SEs are 0. The position shift is tested with the
    variance of both columns pooled (d^2 / (n_a + n_b - 1): t = sqrt(7), 6 degrees); an
    all-tie prompt shifts nothing and counts no degree."""
    from scipy import stats

    root = tmp_path / "judge"
    root.mkdir()
    for model in ("chat", "raw"):
        rows = [
            {"question_id": q, "model": model, "judge": "J", "judge_prompt": prompt, "games": [{"score": g}] * 2}
            for q in range(4)
            for prompt, g in (("a-verdict-first", "A>>B"), ("b-unparsed", "A=B"))
        ]
        (root / f"{model}.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    t = read_arena_hard(root)
    assert t.se is not None and np.all(t.se == 0)
    rep = audit_table(t)
    z = stats.norm.isf(stats.t.sf(7**0.5, 6))  # the normal z of t's two-sided tail
    v = verdict(rep, "judge_axis[table-position]")
    assert v["status"] == "fail" and rep["judge_axes"]["position"]["p"] == pytest.approx(stats.chi2.sf(2 * z * z, 2))
    assert rep["judge_axes"]["position"]["rms_shift"] == 1.0
    # the prompt axis at the reference (both positions averaged): 0.5 under either prompt
    assert verdict(rep, "judge_axis[table-prompt]")["status"] == "pass"
    assert rep["judge_axes"]["prompt"]["p"] == 1.0
