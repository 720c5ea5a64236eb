"""Judge outputs as records of graded outcomes (issue 47, item 3): AlpacaEval annotations,
MT-Bench single and pair judgments, each hand-computed on a tiny file in its documented
format (the sources: tatsu-lab/alpaca_eval annotations.json; lm-sys/FastChat
fastchat/llm_judge data/mt_bench/model_judgment/<judge>_single.jsonl and _pair.jsonl)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from leaderboard_audit.importers import load
from leaderboard_audit.records import RecordsError, load_records, write_records


def cell(rec, model, item, key):
    return rec.score[rec.models.index(model), rec.items.item_id.tolist().index(item), rec.grid.keys.index(key)]


def alpaca(path, rows):
    out = []
    for model, instruction, pref, own_len in rows:
        out.append(
            {
                "instruction": instruction,
                "output_1": "x" * 100,
                "generator_1": "gpt4_turbo",
                "output_2": "y" * own_len,
                "generator_2": model,
                "annotator": "weighted_alpaca_eval_gpt4_turbo",
                "preference": pref,
            }
        )
    path.write_text(json.dumps(out))
    return path


def test_alpaca_eval_preferences_are_graded_outcomes(tmp_path):
    src = alpaca(
        tmp_path / "annotations.json",
        [
            ("a", "i1", 2.0, 100),
            ("a", "i2", 1.5, 100),
            ("a", "i3", 1.25, 100),
            ("b", "i1", 1.0, 100),
            ("b", "i2", 1.75, 100),
            ("b", "i3", 2.0, 100),
        ],
    )
    rec = load(src, "judged")
    raw = "judge=weighted_alpaca_eval_gpt4_turbo|length=raw"
    lc = "judge=weighted_alpaca_eval_gpt4_turbo|length=controlled"
    assert rec.grid.keys == (lc, raw) and rec.grid.reference == raw
    assert rec.grid.extra["axis_groups"] == {"length": [raw, lc]}
    # preference - 1: 2 -> 1 (a win), 1.5 -> 1/2, 1.25 -> 1/4, 1 -> 0
    assert [cell(rec, "a", i, raw) for i in ("i1", "i2", "i3")] == [1.0, 0.5, 0.25]
    assert [cell(rec, "b", i, raw) for i in ("i1", "i2", "i3")] == [0.0, 0.75, 1.0]
    # equal lengths: nothing to control for, the controlled outcome is the raw one
    assert np.array_equal(rec.score[:, :, 0], rec.score[:, :, 1])
    assert rec.correct[rec.models.index("a"), 0].tolist() == [True, True]  # won outright under both


def test_alpaca_eval_length_controlled_outcomes_are_clipped_to_the_unit_interval(tmp_path):
    rows = [("a", "i1", 2.0, 900), ("a", "i2", 1.0, 10), ("b", "i1", 1.9, 10), ("b", "i2", 1.0, 900)]
    rec = load(alpaca(tmp_path / "annotations.json", rows), "judged")
    assert ((rec.score >= 0) & (rec.score <= 1)).all()
    assert any("clipped" in n for n in rec.notes)


def mt_single(path, rows):
    path.write_text(
        "".join(
            json.dumps({"question_id": q, "model": m, "judge": ["gpt-4", "single-v1"], "score": s, "turn": t}) + "\n"
            for m, q, t, s in rows
        )
    )
    return path


def test_mt_bench_single_scores_scaled_and_turns_are_items(tmp_path):
    src = mt_single(
        tmp_path / "gpt-4_single.jsonl",
        [("a", 81, 1, 10), ("a", 81, 2, 4), ("b", 81, 1, 1), ("b", 81, 2, 7)],
    )
    rec = load(src, "judged")
    assert rec.grid.keys == ("judge=gpt-4",) and rec.items.item_id.tolist() == ["81/turn-1", "81/turn-2"]
    assert rec.items.benchmark.tolist() == ["mt-bench"] * 2
    # (s - 1) / 9: 10 -> 1, 4 -> 1/3, 1 -> 0, 7 -> 2/3
    assert cell(rec, "a", "81/turn-1", "judge=gpt-4") == 1.0
    assert cell(rec, "a", "81/turn-2", "judge=gpt-4") == pytest.approx(1 / 3)
    assert cell(rec, "b", "81/turn-2", "judge=gpt-4") == pytest.approx(2 / 3)
    assert rec.correct.sum() == 1


def mt_pair(path, rows):
    path.write_text(
        "".join(
            json.dumps(
                {
                    "question_id": q,
                    "model_1": m1,
                    "model_2": m2,
                    "g1_winner": g1,
                    "g2_winner": g2,
                    "judge": ["gpt-4", "pair-v2"],
                    "turn": 1,
                }
            )
            + "\n"
            for q, m1, m2, g1, g2 in rows
        )
    )
    return path


def test_mt_bench_pair_against_the_baseline(tmp_path):
    # pair-baseline mode: model_2 is the baseline; g1 shows model_1 first, g2 model_2 first
    src = mt_pair(
        tmp_path / "gpt-4_pair.jsonl",
        [
            (81, "a", "gpt-3.5-turbo", "model_1", "tie"),
            (82, "a", "gpt-3.5-turbo", "model_2", "model_1"),
            (81, "b", "gpt-3.5-turbo", "tie", "model_2"),
            (82, "b", "gpt-3.5-turbo", "model_1", "model_1"),
        ],
    )
    rec = load(src, "judged")
    first, second = "judge=gpt-4|position=model-first", "judge=gpt-4|position=baseline-first"
    assert rec.models == ("a", "b") and rec.grid.reference == second
    assert rec.grid.extra["axis_groups"] == {"position": [second, first]}
    i1, i2 = "81/turn-1", "82/turn-1"
    assert (cell(rec, "a", i1, first), cell(rec, "a", i1, second)) == (1.0, 0.5)
    assert (cell(rec, "a", i2, first), cell(rec, "a", i2, second)) == (0.0, 1.0)
    assert (cell(rec, "b", i1, first), cell(rec, "b", i1, second)) == (0.5, 0.0)
    assert (cell(rec, "b", i2, first), cell(rec, "b", i2, second)) == (1.0, 1.0)


def test_mt_bench_pairs_without_a_baseline_are_refused(tmp_path):
    src = mt_pair(
        tmp_path / "gpt-4_pair.jsonl",
        [(81, "a", "b", "model_1", "tie"), (81, "b", "c", "tie", "tie"), (81, "a", "c", "tie", "tie")],
    )
    with pytest.raises(RecordsError, match="not all against one baseline") as ei:
        load(src, "judged")
    assert str(src) in str(ei.value) and "--audit-format mt-bench" in str(ei.value)


def test_imported_graded_records_round_trip(tmp_path):
    src = mt_single(
        tmp_path / "gpt-4_single.jsonl", [("a", 81, 1, 10), ("a", 82, 1, 5), ("b", 81, 1, 3), ("b", 82, 1, 1)]
    )
    rec = load(src, "judged")
    write_records(rec, tmp_path / "out")
    assert load_records(tmp_path / "out").equals(rec)
    line = json.loads((tmp_path / "out" / "mt-bench" / "a.jsonl").read_text().splitlines()[1])
    assert line["correct"] == {"judge=gpt-4": 4 / 9}
