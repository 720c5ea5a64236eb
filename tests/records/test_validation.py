"""Each records-v1 violation raises RecordsError naming file, line and problem."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

from leaderboard_audit.records import InferredLegendWarning, RecordsError, load_records, read_records_dir, write_records
from leaderboard_audit.records.errors import MAX_SHOWN, Problem, ProblemLog
from leaderboard_audit.records.grid import infer_grid, parse_grid
from leaderboard_audit.records.writer import dumps_line

KEYS = ["gen|letter_plain|p0", "gen|letter_plain|p1", "gen|digit_labels|p0", "ll|cloze_plain"]
GRID = {
    "format": "leaderboard-audit/records-v1",
    "reference": KEYS[0],
    "configs": [
        {"key": KEYS[0], "scoring": "gen", "template": "letter_plain", "ordering": "p0", "permutation": [0, 1, 2, 3]},
        {"key": KEYS[1], "scoring": "gen", "template": "letter_plain", "ordering": "p1", "permutation": [1, 3, 2, 0]},
        {"key": KEYS[2], "scoring": "gen", "template": "digit_labels", "ordering": "p0", "permutation": [0, 1, 2, 3]},
        {"key": KEYS[3], "scoring": "ll", "template": "cloze_plain", "ordering": None, "permutation": None},
    ],
}
MODELS = ("alpha", "beta")
BENCHES = {"arc": 4, "mmlu": 3}


def line(iid, bits=(1, 0, 1, 0), **extra):
    return {"item_id": iid, "correct": dict(zip(KEYS, bits)), **extra}


def build(root: Path, grid=True, models=MODELS, benches=BENCHES) -> Path:
    """A valid records directory: every model answers every item."""
    root.mkdir(parents=True, exist_ok=True)
    if grid:
        (root / "grid.json").write_text(json.dumps(GRID))
    for b, n in benches.items():
        (root / b).mkdir(exist_ok=True)
        for mi, m in enumerate(models):
            rows = [line(f"{b}-{j}", bits=((j + mi) % 2, 1, 0, (j * mi) % 2)) for j in range(n)]
            write(root / b / f"{m}.jsonl", rows)
    return root


def write(path: Path, rows) -> None:
    path.write_text("".join((r if isinstance(r, str) else dumps_line(r)) + "\n" for r in rows))


def rows_of(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def error(root, **kw) -> RecordsError:
    with pytest.raises(RecordsError) as ei:
        load_records(root, **kw)
    return ei.value


@pytest.fixture
def recs(tmp_path) -> Path:
    return build(tmp_path / "records")


def test_valid_directory_loads(recs):
    rec = load_records(recs)
    assert rec.shape == (2, 7, 4)
    assert rec.items.item_id.tolist()[:4] == ["arc-0", "arc-1", "arc-2", "arc-3"]


def test_corrupted_json_line_names_file_and_line(recs):
    p = recs / "arc" / "beta.jsonl"
    lines = p.read_text().splitlines()
    lines[2] = lines[2][:-7]
    p.write_text("\n".join(lines) + "\n")
    e = error(recs)
    assert f"{p}:3: unreadable JSON" in str(e)
    assert e.problems == [e.problems[0]] and e.problems[0].line == 3 and e.total == 1
    assert "fix: each line must be one JSON object" in str(e)


def test_not_an_object_line(recs):
    p = recs / "arc" / "beta.jsonl"
    write(p, rows_of(p) + ["[1, 2]"])
    assert f"{p}:5: expected a JSON object, got list" in str(error(recs))


@pytest.mark.parametrize(
    "payload,what",
    [
        ("[" * 200_000 + "]" * 200_000, "RecursionError"),  # deep nesting
        ('{"item_id": "x", "n": ' + "9" * 5000 + "}", "ValueError"),  # past int digit limit
        ("\xff\xfe garbage", "JSON"),
    ],
)
def test_hostile_json_is_a_records_error(recs, payload, what):
    p = recs / "arc" / "beta.jsonl"
    with open(p, "ab") as fh:
        fh.write(payload.encode("utf-8", "surrogatepass") + b"\n")
    e = error(recs)
    assert f"{p}:5: unreadable JSON" in str(e) and what in str(e)


def test_model_missing_one_item_names_model_benchmark_item(recs):
    p = recs / "mmlu" / "beta.jsonl"
    write(p, [r for r in rows_of(p) if r["item_id"] != "mmlu-1"])
    e = error(recs)
    msg = str(e)
    assert "model 'beta' lacks item 'mmlu-1' of benchmark 'mmlu'" in msg
    assert str(p) in msg and "intersect" in msg
    assert e.total == 1


def test_item_present_for_one_model_only(recs):
    p = recs / "arc" / "beta.jsonl"
    write(p, rows_of(p) + [line("arc-extra")])
    msg = str(error(recs))
    assert (
        f"{p}:5: item 'arc-extra' of benchmark 'arc' is present for model 'beta' but absent for model 'alpha'"
    ) in msg


def test_duplicate_item_id(recs):
    p = recs / "arc" / "alpha.jsonl"
    rows = rows_of(p)
    write(p, rows + [rows[1]])
    e = error(recs)
    assert f"{p}:5: duplicate item_id 'arc-1' (first on line 2)" in str(e)


def test_missing_config_key(recs):
    p = recs / "arc" / "alpha.jsonl"
    rows = rows_of(p)
    del rows[0]["correct"]["ll|cloze_plain"]
    write(p, rows)
    msg = str(error(recs))
    assert f"{p}:1: item 'arc-0': missing config key(s) 'll|cloze_plain'" in msg
    assert "exactly the legend's config keys" in msg


def test_extra_config_key(recs):
    p = recs / "arc" / "alpha.jsonl"
    rows = rows_of(p)
    rows[3]["correct"]["gen|letter_plain|p9"] = 1
    write(p, rows)
    assert f"{p}:4: item 'arc-3': config key(s) not in the legend 'gen|letter_plain|p9'" in str(error(recs))


@pytest.mark.parametrize(
    "value,shown",
    [
        (2, "2"),
        (-1, "-1"),
        (1.5, "1.5"),
        (-0.0 - 1e-9, "-1e-09"),
        ("1", '"1"'),
        ("missing", '"missing"'),
        ([1], "[1]"),
        ({"a": 1}, '{"a": 1}'),
    ],
)
def test_value_not_a_bit(recs, value, shown):
    p = recs / "mmlu" / "alpha.jsonl"
    rows = rows_of(p)
    rows[1]["correct"]["gen|digit_labels|p0"] = value
    write(p, rows)
    msg = str(error(recs))
    assert f"{p}:2: item 'mmlu-1': correct['gen|digit_labels|p0'] = {shown} is not 0/1" in msg


def test_true_false_are_bits(recs):
    p = recs / "mmlu" / "alpha.jsonl"
    rows = rows_of(p)
    rows[0]["correct"] = {k: bool(v) for k, v in rows[0]["correct"].items()}
    write(p, rows)
    assert load_records(recs).shape == (2, 7, 4)


def test_empty_file(recs):
    p = recs / "arc" / "beta.jsonl"
    p.write_text("\n  \n")
    e = error(recs)
    assert f"{p}: empty file: no records" in str(e)


def test_empty_file_reported_next_to_other_problems(recs):
    (recs / "arc" / "alpha.jsonl").write_text("{broken\n")
    (recs / "mmlu" / "beta.jsonl").write_text("")
    e = error(recs)
    assert e.total == 2 and "empty file" in str(e) and "unreadable JSON" in str(e)


def test_over_long_line(recs):
    p = recs / "arc" / "beta.jsonl"
    rows = rows_of(p)
    rows[1]["question"] = "x" * 5000
    write(p, rows)
    with pytest.raises(RecordsError) as ei:
        read_records_dir(recs, max_line_bytes=1000)
    assert f"{p}:2: line longer than 1000 bytes" in str(ei.value)
    assert read_records_dir(recs).shape == (2, 7, 4)  # the default bound is 4 MiB


def test_model_field_disagrees_with_file_name(recs):
    p = recs / "arc" / "beta.jsonl"
    rows = rows_of(p)
    rows[0]["model"] = "gamma"
    write(p, rows)
    msg = str(error(recs))
    assert f"{p}:1: model 'gamma' does not match the file name 'beta.jsonl'" in msg
    assert "name the file 'gamma.jsonl'" in msg


def test_model_field_is_authoritative_for_hub_ids(tmp_path):
    root = build(tmp_path / "r", models=("Qwen__Qwen3-4B", "beta"))
    rec = load_records(root)
    assert rec.models == ("Qwen/Qwen3-4B", "beta")
    p = root / "arc" / "Qwen__Qwen3-4B.jsonl"
    write(p, [dict(r, model="Qwen/Qwen3-4B") for r in rows_of(p)])
    assert load_records(root).models == ("Qwen/Qwen3-4B", "beta")


def test_model_field_changes_between_lines(recs):
    p = recs / "arc" / "beta.jsonl"
    rows = rows_of(p)
    rows[0]["model"] = "beta"
    rows[2]["model"] = "other"
    write(p, rows)
    assert f"{p}:3: model 'other' differs from 'beta' on an earlier line" in str(error(recs))


def test_model_field_that_cannot_be_a_file_name(recs):
    p = recs / "arc" / "beta.jsonl"
    rows = rows_of(p)
    rows[0]["model"] = ".."
    write(p, rows)
    assert f"{p}:1: model '..' cannot be a file name" in str(error(recs))


def test_benchmark_field_disagrees(recs):
    p = recs / "arc" / "beta.jsonl"
    rows = rows_of(p)
    rows[1]["benchmark"] = "mmlu"
    write(p, rows)
    assert f"{p}:2: benchmark 'mmlu' does not match the directory 'arc'" in str(error(recs))


@pytest.mark.parametrize(
    "field,value,msg",
    [
        ("gold", 1.5, "'gold' must be an option index or a letter"),
        ("question", 3, "'question' must be a string"),
        ("options", ["a", 2], "'options' must be a list of strings"),
        ("pred", {"gen|letter_plain|p0": 1.5}, "'pred' values must be option indices or null"),
        ("pred", {"nope": 1}, "'pred' must be an object keyed by legend config keys"),
        ("margin", {"ll|cloze_plain": "big"}, "'margin' values must be finite numbers or null"),
        ("margin", {"ll|cloze_plain": 10**400}, "'margin' values must be finite numbers or null"),
        ("item_id", "", "missing or empty 'item_id'"),
        ("correct", [1, 0], "'correct' must be an object"),
    ],
)
def test_bad_optional_fields(recs, field, value, msg):
    p = recs / "arc" / "beta.jsonl"
    rows = rows_of(p)
    rows[2][field] = value
    write(p, rows)
    assert f"{p}:3: " in str(error(recs)) and msg in str(error(recs))


def test_integer_item_ids_are_strings(tmp_path):
    root = build(tmp_path / "r")
    for m in MODELS:
        p = root / "arc" / f"{m}.jsonl"
        write(p, [dict(r, item_id=j) for j, r in enumerate(rows_of(p))])
    assert load_records(root).items.item_id.tolist()[:4] == ["0", "1", "2", "3"]


def test_model_without_file_for_a_benchmark(recs):
    (recs / "mmlu" / "beta.jsonl").unlink()
    msg = str(error(recs))
    assert "model 'beta' has no file for benchmark 'mmlu'" in msg and "add mmlu/beta.jsonl" in msg


def test_at_most_ten_offenders_shown_and_the_rest_counted(recs):
    p = recs / "arc" / "alpha.jsonl"
    write(p, [line(f"arc-{j}", bits=(2, 0, 0, 0)) for j in range(25)])
    e = error(recs)
    assert len(e.problems) == MAX_SHOWN == 10 and e.total == 25
    assert "... and 15 more problem(s) of the same kind" in str(e)
    assert str(e).startswith("invalid records (25 problems):")
    assert [q.line for q in e.problems] == list(range(1, 11))


def test_problem_log_and_units():
    log = ProblemLog()
    assert not log
    log.add("t.parquet", 7, "bad", unit="row")
    log.add("f.jsonl", 3, "worse", fix="do this")
    assert str(log.shown[0]) == "t.parquet, row 7: bad" and str(log.shown[1]) == "f.jsonl:3: worse"
    with pytest.raises(RecordsError, match="fix: do this") as ei:
        log.raise_if_any()
    assert ei.value.total == 2 and isinstance(ei.value, ValueError)
    assert str(Problem("f", None, "m")) == "f: m"


# -- symlinks and paths -----------------------------------------------------------------


def test_symlink_leaving_the_records_dir_is_refused(recs, tmp_path):
    outside = tmp_path / "outside.jsonl"
    outside.write_text((recs / "arc" / "beta.jsonl").read_text())
    (recs / "arc" / "beta.jsonl").unlink()
    os.symlink(outside, recs / "arc" / "beta.jsonl")
    e = error(recs)
    assert "outside the records directory" in str(e) and "beta.jsonl" in str(e)


def test_symlinked_benchmark_dir_outside_is_refused(recs, tmp_path):
    (tmp_path / "elsewhere").mkdir()
    for m in MODELS:
        os.replace(recs / "mmlu" / f"{m}.jsonl", tmp_path / "elsewhere" / f"{m}.jsonl")
    (recs / "mmlu").rmdir()
    os.symlink(tmp_path / "elsewhere", recs / "mmlu")
    assert "benchmark directory resolves to" in str(error(recs))


def test_symlinked_grid_outside_is_refused(recs, tmp_path):
    os.replace(recs / "grid.json", tmp_path / "grid.json")
    os.symlink(tmp_path / "grid.json", recs / "grid.json")
    assert "grid.json resolves to" in str(error(recs))


def test_symlink_inside_the_records_dir_is_fine(recs):
    (recs / "arc" / "beta.jsonl").rename(recs / "arc" / ".beta.real")
    os.symlink(recs / "arc" / ".beta.real", recs / "arc" / "beta.jsonl")
    assert load_records(recs).shape == (2, 7, 4)


def test_symlink_loop_is_a_records_error(recs):
    os.symlink(recs / "arc" / "loop.jsonl", recs / "arc" / "loop.jsonl")
    assert "cannot be resolved" in str(error(recs)) or "not a regular file" in str(error(recs))


def test_directory_named_like_a_records_file(recs):
    (recs / "arc" / "gamma.jsonl").mkdir()
    assert "not a regular file" in str(error(recs))


def test_not_a_directory_and_no_benchmarks(tmp_path):
    assert "not a records directory" in str(error(tmp_path / "missing"))
    (tmp_path / "empty").mkdir()
    assert "no benchmark directories" in str(error(tmp_path / "empty"))
    (tmp_path / "one.jsonl").write_text("{}\n")
    assert "a single .jsonl file is not a records set" in str(error(tmp_path / "one.jsonl"))


def test_benchmark_dir_without_model_files(recs):
    (recs / "hellaswag").mkdir()
    assert "benchmark directory holds no <model>.jsonl files" in str(error(recs))


def test_hidden_and_underscore_dirs_are_skipped(recs):
    (recs / ".git").mkdir()
    (recs / "_cache").mkdir()
    (recs / "_cache" / "x.jsonl").write_text("garbage\n")
    assert load_records(recs).benchmarks == ("arc", "mmlu")


# -- grid.json ----------------------------------------------------------------------------


def test_missing_grid_json_infers_the_legend_and_warns(tmp_path):
    root = build(tmp_path / "r", grid=False)
    with pytest.warns(InferredLegendWarning, match="legend inferred") as rec_w:
        rec = load_records(root)
    assert len(rec_w) == 1
    assert rec.grid.inferred and rec.grid.reference == "gen|letter_plain|p0"
    cfg = {c.key: c for c in rec.grid.configs}
    assert cfg["gen|letter_plain|p1"].permutation == (1, 3, 2, 0)  # from the paper's Table 4
    assert cfg["ll|cloze_plain"].permutation is None and cfg["ll|cloze_plain"].scoring == "ll"
    assert any("no grid.json" in n for n in rec.notes)
    assert rec.configs == tuple(sorted(KEYS))  # the order of the first line's keys (sorted on disk)


def test_missing_grid_json_with_unconventional_keys(tmp_path):
    root = build(tmp_path / "r", grid=False)
    for b in BENCHES:
        for m in MODELS:
            p = root / b / f"{m}.jsonl"
            write(p, [dict(r, correct={"weird": 1, **r["correct"]}) for r in rows_of(p)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        e = error(root)
    assert "config key 'weird' does not follow the convention" in str(e)
    assert "add a grid.json" in str(e)


def test_missing_grid_json_without_default_reference():
    with pytest.raises(RecordsError, match="default reference"):
        infer_grid(["gen|letter_plain|p1", "ll|cloze_plain"], "x/grid.json")


@pytest.mark.parametrize(
    "mutate,msg",
    [
        (lambda g: g.update(reference="gen|nope|p0"), "reference 'gen|nope|p0' is not one of"),
        (lambda g: g.update(reference=["x"]), "'reference' must be a config key"),
        (lambda g: g.update(format="other/v9"), "format is 'other/v9'"),
        (lambda g: g.update(configs=[]), "'configs' must be a non-empty list"),
        (lambda g: g["configs"].append(dict(g["configs"][0])), "duplicate key 'gen|letter_plain|p0'"),
        (lambda g: g["configs"][1].update(permutation=[0, 0, 1, 2]), "'permutation' must be a permutation"),
        (lambda g: g["configs"][1].update(permutation=[0, 1, "2", 3]), "'permutation' must be a permutation"),
        (lambda g: g["configs"][2].pop("key"), "configs[2] needs a non-empty string 'key'"),
        (lambda g: g["configs"][2].update(template=5), "'template' must be a string or null"),
    ],
)
def test_invalid_grid(recs, mutate, msg):
    g = json.loads((recs / "grid.json").read_text())
    mutate(g)
    (recs / "grid.json").write_text(json.dumps(g))
    e = error(recs)
    assert msg in str(e) and "grid.json" in str(e)


def test_unreadable_grid_json(recs):
    (recs / "grid.json").write_text('{"configs": [\n  {"key": 1,,}\n')
    e = error(recs)
    assert f"{recs / 'grid.json'}:2: unreadable JSON" in str(e)
    (recs / "grid.json").write_text("[" * 100_000)
    assert "unreadable JSON" in str(error(recs))
    (recs / "grid.json").write_text("[1, 2]")
    assert "grid.json must hold a JSON object" in str(error(recs))


def test_grid_extra_fields_preserved():
    g = json.loads(json.dumps(GRID))
    g["harness"] = {"name": "x"}
    g["configs"][0]["normalization"] = "acc_norm"
    grid = parse_grid(g, "grid.json")
    assert grid.extra == {"harness": {"name": "x"}}
    assert grid.to_json()["configs"][0]["normalization"] == "acc_norm"


# -- the opt-in intersection ---------------------------------------------------------------


def test_intersect_drops_and_counts_per_benchmark(recs):
    pa, pb = recs / "arc" / "alpha.jsonl", recs / "arc" / "beta.jsonl"
    write(pa, [r for r in rows_of(pa) if r["item_id"] != "arc-0"] + [line("arc-only-alpha")])
    write(pb, [r for r in rows_of(pb) if r["item_id"] != "arc-3"])
    e = error(recs)
    assert e.total == 3  # 2 missing + 1 extra
    rec = load_records(recs, intersect=True)
    assert rec.dropped == {"arc": 3, "mmlu": 0}
    assert rec.items.item_id.tolist() == ["arc-1", "arc-2", "mmlu-0", "mmlu-1", "mmlu-2"]
    assert any("dropped per benchmark: arc=3, mmlu=0" in n for n in rec.notes)
    full = load_records(build(recs.parent / "full"))
    np.testing.assert_array_equal(rec.correct[:, :2], full.correct[:, 1:3])


def test_intersect_with_nothing_common(recs):
    p = recs / "mmlu" / "beta.jsonl"
    write(p, [line("other")])
    assert "no item of benchmark 'mmlu' is common to all models" in str(error(recs, intersect=True))


def test_intersect_does_not_excuse_other_problems(recs):
    p = recs / "arc" / "alpha.jsonl"
    rows = rows_of(p)
    del rows[0]["correct"][KEYS[0]]
    write(p, rows)
    assert "missing config key" in str(error(recs, intersect=True))


def test_intersect_without_drops_reports_zero(recs):
    rec = load_records(recs, intersect=True)
    assert rec.dropped == {"arc": 0, "mmlu": 0} and rec.notes == ()


def test_reader_output_round_trips_through_writer(recs, tmp_path):
    rec = load_records(recs)
    write_records(rec, tmp_path / "w")
    assert load_records(tmp_path / "w").equals(rec)


def test_grid_json_that_is_a_directory_or_a_broken_link(recs):
    (recs / "grid.json").unlink()
    (recs / "grid.json").mkdir()
    assert "cannot read grid.json" in str(error(recs))
    (recs / "grid.json").rmdir()
    os.symlink(recs / "nowhere.json", recs / "grid.json")
    assert "cannot read grid.json" in str(error(recs))


def test_over_large_grid_json(recs, monkeypatch):
    from leaderboard_audit.records import reader

    monkeypatch.setattr(reader, "MAX_GRID_BYTES", 100)
    assert "limit 100" in str(error(recs))
