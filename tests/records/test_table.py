"""The long table (CSV / TSV / Parquet): round trips, equivalence with the directory, errors."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers.paths import TINY
from helpers.records import SMALL_GRID, make_records

from leaderboard_audit.records import (
    PRED_ABSENT,
    PRED_UNPARSEABLE,
    InferredLegendWarning,
    RecordsError,
    load_records,
    write_records,
)
from leaderboard_audit.records.table import read_table, table_frame, write_table
from leaderboard_audit.records.writer import grid_bytes

pytest.importorskip("pyarrow")

KEYS = list(SMALL_GRID.keys)
SUFFIXES = ["csv", "tsv", "parquet", "pq"]


def frame(models=("alpha", "beta"), benches=(("arc", 3), ("mmlu", 2))) -> pd.DataFrame:
    rows = []
    for m_i, m in enumerate(models):
        for b, n in benches:
            for j in range(n):
                for k_i, k in enumerate(KEYS):
                    rows.append(
                        {"model": m, "benchmark": b, "item_id": f"{b}-{j}", "config": k, "correct": (j + k_i + m_i) % 2}
                    )
    return pd.DataFrame(rows)


def save(df: pd.DataFrame, path: Path, grid=True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if grid:
        (path.parent / "grid.json").write_bytes(grid_bytes(SMALL_GRID))
    if path.suffix in (".parquet", ".pq"):
        df.to_parquet(path, index=False)
    else:
        df.to_csv(path, index=False, sep="\t" if path.suffix == ".tsv" else ",", lineterminator="\n")
    return path


def error(path, **kw) -> RecordsError:
    with pytest.raises(RecordsError) as ei:
        load_records(path, **kw)
    return ei.value


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_round_trip_exact_and_byte_identical(tmp_path, suffix):
    rec = make_records()
    rec = rec.__class__(
        **{
            **rec.__dict__,
            "items": rec.items.__class__(
                rec.items.benchmark, rec.items.item_id, rec.items.gold, rec.items.question, [None] * len(rec.items)
            ),
        }
    )  # options are not in the table
    path = write_table(rec, tmp_path / f"t.{suffix}")
    first = path.read_bytes()
    back = load_records(path)
    assert back.equals(rec)
    write_table(back, tmp_path / f"t.{suffix}")
    assert path.read_bytes() == first
    assert (tmp_path / "grid.json").read_bytes() == grid_bytes(SMALL_GRID)


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_table_and_directory_agree(tmp_path, suffix):
    rec = load_records(TINY)
    write_table(rec, tmp_path / f"tiny.{suffix}")
    back = load_records(tmp_path / f"tiny.{suffix}")
    assert back.models == rec.models and back.grid.to_json() == rec.grid.to_json()
    for name in ("correct", "pred"):
        np.testing.assert_array_equal(getattr(back, name), getattr(rec, name))
    assert back.items.item_id.tolist() == rec.items.item_id.tolist()
    assert back.items.gold == rec.items.gold and back.items.question == rec.items.question
    assert back.margin is None


def test_table_frame_shape():
    rec = make_records()
    df = table_frame(rec)
    M, N, K = rec.shape
    assert len(df) == M * N * K
    assert list(df.columns[:5]) == ["model", "benchmark", "item_id", "config", "correct"]
    assert set(df.columns) >= {"gold", "question", "pred", "margin"}


def test_rows_in_any_order(tmp_path):
    df = frame()
    shuffled = df.sample(frac=1.0, random_state=3)
    a = load_records(save(df, tmp_path / "a" / "t.csv"))
    b = load_records(save(shuffled, tmp_path / "b" / "t.csv"))
    assert a.models == b.models
    order = [list(b.items.item_id).index(i) for i in a.items.item_id]
    np.testing.assert_array_equal(a.correct, b.correct[:, order])


def test_text_bits_true_false(tmp_path):
    df = frame()
    df["correct"] = df["correct"].map({0: "false", 1: "True"})
    rec = load_records(save(df, tmp_path / "t.csv"))
    np.testing.assert_array_equal(rec.correct, load_records(save(frame(), tmp_path / "u" / "t.csv")).correct)


def test_parquet_boolean_and_integer_ids(tmp_path):
    df = frame(benches=(("arc", 3),))
    df["correct"] = df["correct"].astype(bool)
    df["item_id"] = df["item_id"].str.slice(4).astype(int) * 10
    rec = load_records(save(df, tmp_path / "t.parquet"))
    assert rec.items.item_id.tolist() == ["0", "10", "20"]


# -- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_missing_required_columns(tmp_path, suffix):
    p = save(frame().drop(columns=["correct", "config"]), tmp_path / f"t.{suffix}")
    e = error(p)
    assert "missing required column(s) ['config', 'correct']" in str(e)
    assert (e.problems[0].line == 1) == (suffix == "csv")


def test_value_not_a_bit_names_csv_line(tmp_path):
    df = frame()
    df.loc[7, "correct"] = 2
    p = save(df, tmp_path / "t.csv")
    e = error(p)
    assert f"{p}:9: model 'alpha', item 'arc-1' of benchmark 'arc', config '{KEYS[3]}': correct = 2 is not 0/1" in str(
        e
    )
    assert e.problems[0].line == 9  # row index 7 + header + 1


def test_value_not_a_bit_names_parquet_row(tmp_path):
    df = frame()
    df["correct"] = df["correct"].astype(int)
    df.loc[7, "correct"] = 2
    p = save(df, tmp_path / "t.parquet")
    e = error(p)
    assert f"{p}, row 7: model 'alpha', item 'arc-1'" in str(e) and "correct = 2 is not 0/1" in str(e)


@pytest.mark.parametrize("value", ["2", "yes", "1.5", "nan", "-0.5", "", " 1", "0.5 ", "1e5", "\u0661"])
def test_text_values_not_bits(tmp_path, value):
    df = frame().astype({"correct": str})
    df.loc[0, "correct"] = value
    assert f"{tmp_path / 't.csv'}:2: " in str(error(save(df, tmp_path / "t.csv")))


def test_parquet_float_outcomes_of_0_and_1_read_as_bits(tmp_path):
    df = frame()
    want = read_table(save(df, tmp_path / "a.csv"))
    df["correct"] = df["correct"].astype(float)  # a graded column whose outcomes are all 0/1
    got = read_table(save(df, tmp_path / "t.parquet"))
    assert got.score is None and np.array_equal(got.correct, want.correct)


def test_parquet_float_outside_unit_interval_names_row(tmp_path):
    df = frame()
    df["correct"] = df["correct"].astype(float)
    df.loc[3, "correct"] = float("nan")
    df.loc[7, "correct"] = 1.5
    e = error(save(df, tmp_path / "t.parquet"))
    assert e.total == 2 and "row 7" in str(e) and "correct = 1.5 is not 0/1 or a graded outcome in [0, 1]" in str(e)


def test_duplicate_rows(tmp_path):
    df = frame()
    df = pd.concat([df, df.iloc[[5]]], ignore_index=True)
    p = save(df, tmp_path / "t.csv")
    msg = str(error(p))
    assert (
        f"{p}:{len(df) + 1}: model 'alpha', item 'arc-1' of benchmark 'arc', config '{KEYS[1]}': "
        "duplicate row (first at line 7)" in msg
    )


def test_missing_config_key_for_one_model_item(tmp_path):
    df = frame()
    df = df.drop(index=[9, 10]).reset_index(drop=True)  # alpha, arc-2, two configs
    p = save(df, tmp_path / "t.csv")
    e = error(p)
    assert (
        f"{p}:10: model 'alpha', item 'arc-2' of benchmark 'arc': missing config key(s) '{KEYS[1]}', '{KEYS[2]}'"
    ) in str(e)
    assert e.total == 1


def test_item_missing_for_one_model(tmp_path):
    df = frame()
    gone = (df.model == "beta") & (df.item_id == "mmlu-1")
    p = save(df[~gone], tmp_path / "t.csv")
    e = error(p)
    assert "model 'beta' lacks item 'mmlu-1' of benchmark 'mmlu'" in str(e)
    rec = load_records(p, intersect=True)
    assert rec.dropped == {"arc": 0, "mmlu": 1}
    assert rec.items.item_id.tolist() == ["arc-0", "arc-1", "arc-2", "mmlu-0"]


def test_item_only_for_one_model_names_its_line(tmp_path):
    df = frame()
    extra = pd.DataFrame(
        [{"model": "beta", "benchmark": "arc", "item_id": "arc-x", "config": k, "correct": 1} for k in KEYS]
    )
    p = save(pd.concat([df, extra], ignore_index=True), tmp_path / "t.parquet")
    e = error(p)
    assert (
        f"{p}, row {len(df)}: item 'arc-x' of benchmark 'arc' is present for model 'beta' but absent for model 'alpha'"
    ) in str(e)
    assert load_records(p, intersect=True).dropped == {"arc": 1, "mmlu": 0}


def test_model_without_rows_for_a_benchmark(tmp_path):
    df = frame()
    p = save(df[~((df.model == "beta") & (df.benchmark == "mmlu"))], tmp_path / "t.csv")
    assert "model 'beta' has no rows for benchmark 'mmlu'" in str(error(p))


def test_config_not_in_legend(tmp_path):
    df = frame()
    df.loc[3, "config"] = "gen|letter_plain|p7"
    p = save(df, tmp_path / "t.csv")
    assert (
        f"{p}:5: model 'alpha', item 'arc-0' of benchmark 'arc', config 'gen|letter_plain|p7': "
        "config key not in the legend" in str(error(p))
    )


def test_empty_key_cells(tmp_path):
    df = frame()
    df.loc[4, "model"] = ""
    p = save(df, tmp_path / "t.csv")
    assert f"{p}:6: empty 'model'" in str(error(p))
    df = frame()
    df.loc[4, "item_id"] = None
    p = save(df, tmp_path / "t.parquet")
    assert f"{p}, row 4: empty 'item_id'" in str(error(p))


def test_inferred_legend_warns(tmp_path):
    p = save(frame(), tmp_path / "t.csv", grid=False)
    with pytest.warns(InferredLegendWarning, match="no grid.json; legend inferred"):
        rec = load_records(p)
    assert rec.grid.inferred and rec.configs == tuple(KEYS)  # order of first appearance
    df = frame()
    df.loc[df.config == KEYS[3], "config"] = "weird"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "does not follow the convention" in str(error(save(df, tmp_path / "u" / "t.csv", grid=False)))


def test_grid_symlink_outside_refused(tmp_path):
    p = save(frame(), tmp_path / "in" / "t.csv")
    os.replace(tmp_path / "in" / "grid.json", tmp_path / "grid.json")
    os.symlink(tmp_path / "grid.json", tmp_path / "in" / "grid.json")
    assert "outside the records directory" in str(error(p))


def test_empty_and_header_only_files(tmp_path):
    (tmp_path / "grid.json").write_bytes(grid_bytes(SMALL_GRID))
    (tmp_path / "e.csv").write_text("")
    assert "empty file" in str(error(tmp_path / "e.csv"))
    (tmp_path / "h.csv").write_text("model,benchmark,item_id,config,correct\n")
    assert "empty file: no records" in str(error(tmp_path / "h.csv"))
    (tmp_path / "n.csv").write_text("model,benchmark,item_id,config,correct\n\n\n")
    assert "empty file: no records" in str(error(tmp_path / "n.csv"))


def test_malformed_csv(tmp_path):
    p = save(frame(), tmp_path / "t.csv")
    text = p.read_text().splitlines()
    text[3] += ",surplus"
    p.write_text("\n".join(text) + "\n")
    e = error(p)
    assert e.problems[0].line == 4 and "unreadable CSV" in str(e)
    p.write_text('model,benchmark,item_id,config,correct\n"alpha,arc\n')
    assert "unreadable CSV" in str(error(p))
    p.write_bytes(b"model,benchmark,item_id,config,correct\nalpha,arc,\xff,x,1\n")
    assert "not UTF-8" in str(error(p))


def test_every_row_with_surplus_fields(tmp_path):
    (tmp_path / "grid.json").write_bytes(grid_bytes(SMALL_GRID))
    p = tmp_path / "t.csv"
    p.write_text("model,benchmark,item_id,config,correct\nalpha,arc,a,x,1,9\n")
    assert "more fields than the header" in str(error(p))


def test_unreadable_parquet(tmp_path):
    (tmp_path / "t.parquet").write_bytes(b"PAR1 not really parquet PAR1")
    assert "unreadable Parquet" in str(error(tmp_path / "t.parquet"))


def test_wrong_column_types_in_parquet(tmp_path):
    df = frame()
    df["model"] = 3.5
    assert "column 'model' must hold strings" in str(error(save(df, tmp_path / "t.parquet")))


def test_csv_line_numbers_with_multiline_cells_and_blank_lines(tmp_path):
    df = frame()
    df["question"] = ["line one\nline two" if i % 4 == 0 else "q" for i in range(len(df))]
    df.loc[13, "correct"] = 5
    p = save(df, tmp_path / "t.csv")
    text = p.read_text()
    p.write_text(text.replace("\n", "\n\n", 1))  # a blank line after the header
    e = error(p)
    physical = p.read_text().split("\n")
    line = e.problems[0].line
    assert line == 13 + 2 + 1 + 4  # 4 multi-line cells above, 1 blank line
    assert physical[line - 1].startswith(f"alpha,mmlu,mmlu-0,{KEYS[1]},")
    assert physical[line - 1].split(",")[4] == "5"


def test_pred_and_margin_conventions(tmp_path):
    df = frame()
    df["pred"] = ["" if i % 3 == 0 else ("null" if i % 3 == 1 else "2") for i in range(len(df))]
    df["margin"] = ["" if i % 2 else "0.125" for i in range(len(df))]
    df["gold"] = ["1" if i % 2 else "B" for i in range(len(df))]
    rec = load_records(save(df, tmp_path / "t.csv"))
    flat = rec.pred.reshape(-1)
    assert set(flat.tolist()) == {PRED_ABSENT, PRED_UNPARSEABLE, 2}
    assert np.nanmax(rec.margin) == 0.125 and np.isnan(rec.margin).any()
    assert rec.items.gold[0] == "B"  # first row of the item wins


@pytest.mark.parametrize(
    "col,value,msg",
    [
        ("pred", "1.5", "pred = 1.5 is not an option index"),
        ("pred", "-3", "pred = -3 is not an option index"),
        ("pred", "x", "pred = x is not an option index"),
        ("pred", "99999", "pred = 99999 is not an option index"),
        ("margin", "inf", "margin = inf is not a finite number"),
        ("margin", "nan", "margin = nan is not a finite number"),
        ("margin", "abc", "margin = abc is not a finite number"),
    ],
)
def test_bad_pred_and_margin(tmp_path, col, value, msg):
    df = frame()
    df[col] = ""
    df.loc[2, col] = value
    p = save(df, tmp_path / "t.csv")
    assert f"{p}:4: " in str(error(p)) and msg in str(error(p))


def test_at_most_ten_offenders_shown(tmp_path):
    df = frame()
    df["correct"] = 7
    e = error(save(df, tmp_path / "t.csv"))
    assert len(e.problems) == 10 and e.total == len(df)
    assert f"... and {len(df) - 10} more problem(s)" in str(e)


def test_unknown_suffix_and_missing_file(tmp_path):
    with pytest.raises(RecordsError, match="unknown table type"):
        read_table(tmp_path / "t.xlsx")
    with pytest.raises(RecordsError, match="no such file"):
        read_table(tmp_path / "t.csv")
    with pytest.raises(RecordsError, match="unknown table type"):
        write_table(make_records(), tmp_path / "t.json")


def test_extra_columns_are_ignored(tmp_path):
    df = frame()
    df["note"] = "whatever"
    assert load_records(save(df, tmp_path / "t.csv")).shape == (2, 5, 4)


def test_tiny_as_csv_matches_readme_numbers(tmp_path):
    write_table(load_records(TINY), tmp_path / "tiny.csv")
    rec = load_records(tmp_path / "tiny.csv")
    assert rec.correct.sum(axis=1).tolist() == [[6, 4, 5, 4], [5, 4, 4, 6], [5, 3, 4, 2]]
    assert json.loads((tmp_path / "grid.json").read_text())["reference"] == "gen|letter_plain|p0"
    write_records(rec, tmp_path / "dir")
    assert load_records(tmp_path / "dir").equals(rec)


# -- answer_class and unparsed ------------------------------------------------------------------


def records_with_extras():
    from dataclasses import replace

    from helpers.records import make_records

    from leaderboard_audit.records import ANSWER_CLASSES

    rec = make_records()
    rng = np.random.default_rng(5)
    return replace(
        rec,
        answer_class=rng.integers(-1, len(ANSWER_CLASSES), rec.shape).astype(np.int8),
        unparsed=rng.integers(-1, 4, rec.shape[:2]).astype(np.int16),
    )


@pytest.mark.parametrize("name", ["t.csv", "t.tsv", "t.parquet"])
def test_answer_class_and_unparsed_round_trip_through_the_table(tmp_path, name):
    from leaderboard_audit.records.table import write_table

    rec = records_with_extras()
    write_table(rec, tmp_path / name)
    back = load_records(tmp_path / name)
    assert np.array_equal(back.answer_class, rec.answer_class)
    assert np.array_equal(back.unparsed, rec.unparsed)
    assert back.answer_class.dtype == np.int8 and back.unparsed.dtype == np.int16


def test_bad_answer_class_and_unparsed_in_the_table(tmp_path):
    from leaderboard_audit.records.table import table_frame

    df = table_frame(records_with_extras())
    df = df.drop(columns=["question"])
    df["answer_class"] = df["answer_class"].astype(object)
    df.loc[3, "answer_class"] = "letters"
    p = save(df, tmp_path / "t.csv")
    assert f"{p}:5: " in str(error(p)) and "answer_class = letters is not one of ['letter'" in str(error(p))
    df = table_frame(records_with_extras()).drop(columns=["question"])
    first = df.index[df["unparsed"].notna()][0]
    df["unparsed"] = df["unparsed"].astype("Int64")
    df.loc[first + 1, "unparsed"] = int(df.loc[first, "unparsed"]) + 1  # same (model, item), other config
    p = save(df, tmp_path / "u.csv")
    assert f"{p}:{first + 3}: " in str(error(p)) and "unparsed differs from an earlier row of the same model" in str(
        error(p)
    )
    df.loc[first + 1, "unparsed"] = 99
    df.loc[first, "unparsed"] = 99
    p = save(df, tmp_path / "v.csv")
    assert "unparsed = 99 is more than the 4 configs of the legend" in str(error(p))
