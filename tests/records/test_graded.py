"""Graded outcomes (issue 47, item 1): a cell's outcome in [0, 1] in every form."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from helpers.records import assert_round_trips, load_quiet, make_records
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leaderboard_audit.records import RecordsError, write_records
from leaderboard_audit.records.packed import packed_bytes, write_packed
from leaderboard_audit.records.table import write_table

ROUND = settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
#: the outcomes judged leaderboards give: preferences, MT-Bench ninths, weighted preferences
OUTCOME = st.one_of(
    st.sampled_from([0.0, 0.5, 1.0, 0.25, 0.75]),
    st.integers(1, 10).map(lambda s: (s - 1) / 9),
    st.floats(0, 1, allow_nan=False, allow_subnormal=False),
)


def graded(rec, score, miss=None):
    score = np.asarray(score, dtype=np.float64)
    if miss is not None:
        miss = np.asarray(miss, dtype=np.int8)
        score = np.where(miss != 0, 0.0, score)
    has = bool(((score > 0) & (score < 1)).any())
    return replace(
        rec,
        correct=score == 1,
        score=score if has else None,
        missing=None if miss is None or not miss.any() else miss,
    )


@pytest.mark.slow
@ROUND
@given(data=st.data())
def test_round_trip_of_graded_records_through_every_form(data):
    rec = make_records(seed=data.draw(st.integers(0, 50)))
    n = int(np.prod(rec.shape))
    score = np.array(data.draw(st.lists(OUTCOME, min_size=n, max_size=n))).reshape(rec.shape)
    miss = None
    if data.draw(st.booleans()):  # graded and missing compose
        miss = np.array(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))).reshape(rec.shape)
    g = graded(rec, score, miss)
    assert_round_trips(g)


def test_boolean_set_has_no_score_and_its_bytes_are_unchanged(tmp_path):
    import pyarrow as pa

    rec = make_records()
    write_records(rec, tmp_path / "r")
    got = load_quiet(tmp_path / "r")
    assert got.score is None and not got.graded
    blob = packed_bytes(got)
    assert "score" not in pa.ipc.open_file(pa.py_buffer(blob)).schema.names
    # outcomes of only 0 and 1 are no score: the packed bytes are the boolean set's
    assert packed_bytes(graded(got, got.correct.astype(float))) == blob


def test_jsonl_graded_values_and_the_bit_is_won_outright(tmp_path):
    rec = make_records(models=("a", "b"), benches=(("arc", 3),))
    write_records(rec, tmp_path)
    p = tmp_path / "arc" / "a.jsonl"
    rows = [json.loads(x) for x in p.read_text().splitlines()]
    keys = list(rows[0]["correct"])
    rows[0]["correct"][keys[0]] = 0.5
    rows[1]["correct"][keys[1]] = 1.0
    rows[2]["correct"][keys[2]] = None
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    got = load_quiet(tmp_path)
    j = {k: i for i, k in enumerate(got.grid.keys)}
    m = got.models.index("a")
    assert got.graded and got.score[m, 0, j[keys[0]]] == 0.5 and not got.correct[m, 0, j[keys[0]]]
    assert got.score[m, 1, j[keys[1]]] == 1.0 and got.correct[m, 1, j[keys[1]]]
    assert got.missing[m, 2, j[keys[2]]] == 1 and got.score[m, 2, j[keys[2]]] == 0
    # the other model's file holds bits only: its scores are its bits
    b = got.models.index("b")
    assert np.array_equal(got.score[b], got.correct[b].astype(float))
    assert got.scope("arc").score.shape == got.shape and got.select_models(["a"]).score.shape[0] == 1


@pytest.mark.parametrize(
    "raw,shown",
    [("1.5", "1.5"), ("-0.25", "-0.25"), ("NaN", "NaN"), ("Infinity", "Infinity"), ('"0.5"', '"0.5"')],
)
def test_bad_graded_value_names_file_line_and_fix(tmp_path, raw, shown):
    rec = make_records(models=("a", "b"), benches=(("arc", 3),))
    write_records(rec, tmp_path)
    p = tmp_path / "arc" / "b.jsonl"
    lines = p.read_text().splitlines()
    key = next(iter(json.loads(lines[1])["correct"]))
    obj = json.loads(lines[1])
    obj["correct"][key] = "@@"
    lines[1] = json.dumps(obj).replace('"@@"', raw)
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(RecordsError) as ei:
        load_quiet(tmp_path)
    msg = str(ei.value)
    assert f"{p}:2: item 'arc/item-1': correct[{key!r}] = " in msg
    assert "nor a graded outcome in [0, 1]" in msg and "Graded outcomes" in msg
    assert ei.value.problems[0].line == 2


def test_csv_graded_text_and_bad_cells_name_the_line(tmp_path):
    rec = make_records(models=("a", "b"), benches=(("arc", 2),), pred=False, margin=False, text=False)
    score = rec.correct.astype(float)
    score[0, 1, 2] = 0.5
    write_table(graded(rec, score), tmp_path / "t.csv")
    got = load_quiet(tmp_path / "t.csv")
    assert got.graded and got.score[0, 1, 2] == 0.5
    lines = (tmp_path / "t.csv").read_text().splitlines()
    head = lines[0].split(",")
    row = lines[3].split(",")
    row[head.index("correct")] = "1.25"
    lines[3] = ",".join(row)
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(RecordsError) as ei:
        load_quiet(tmp_path / "t.csv")
    assert f"{tmp_path / 't.csv'}:4: " in str(ei.value)
    assert "correct = 1.25 is not 0/1 or a graded outcome in [0, 1]" in str(ei.value)


def test_packed_score_is_checked_against_the_bits(tmp_path):
    from leaderboard_audit.records.packed import read_packed

    rec = make_records(models=("a", "b"), benches=(("arc", 2),))
    score = rec.correct.astype(float)
    score[0, 0, 0] = 0.5
    g = graded(rec, score)
    write_packed(g, tmp_path / "x.arrow")
    assert read_packed(tmp_path / "x.arrow").equals(g)
    bad = replace(g, correct=g.correct.copy())
    bad.correct[1, 1, 1] = not bad.correct[1, 1, 1]  # a bit that is not `score == 1`
    write_packed(bad, tmp_path / "y.arrow")
    with pytest.raises(RecordsError, match="'correct' is not 'score == 1'"):
        read_packed(tmp_path / "y.arrow")


def test_pack_command_keeps_scores(tmp_path):
    from leaderboard_audit.cli.main import main as cli_main
    from leaderboard_audit.records.packed import read_packed

    rec = make_records(models=("a", "b"), benches=(("arc", 3),))
    score = rec.correct.astype(float)
    score[1, 2, 0] = 1 / 9
    g = graded(rec, score)
    write_records(g, tmp_path / "r")
    assert cli_main(["pack", str(tmp_path / "r"), "-o", str(tmp_path / "x.arrow")]) == 0
    assert read_packed(tmp_path / "x.arrow").equals(g)
