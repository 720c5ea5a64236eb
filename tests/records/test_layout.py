"""Layouts of a records directory, the release's fields (bits, per-item margin, unparsed count),
legend files, and answer_class (docs/records.md, "The paper's release")."""

from __future__ import annotations

import json
import shutil
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from helpers.records import make_records

from leaderboard_audit.records import (
    ANSWER_CLASS_ABSENT,
    ANSWER_CLASSES,
    UNPARSED_ABSENT,
    InferredLayoutWarning,
    InferredLegendWarning,
    RecordsError,
    load_records,
    write_records,
)
from leaderboard_audit.records.grid import PAPER_ORDERINGS
from leaderboard_audit.records.legend import LEGEND_NAMES


def canonical(tmp_path: Path, **kw) -> tuple[Path, object]:
    rec = make_records(**kw)
    root = tmp_path / "canonical"
    write_records(rec, root)
    return root, load_records(root)


def lines_of(p: Path) -> list[dict]:
    return [json.loads(x) for x in p.read_text(encoding="utf-8").splitlines() if x.strip()]


def put(p: Path, rows: list[dict]) -> None:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def relayout(src: Path, dst: Path, name, *, drop=("model",), edit=None) -> Path:
    """Copy a canonical set into another layout: ``name(benchmark, stem)`` gives the new path."""
    dst.mkdir(parents=True)
    shutil.copy(src / "grid.json", dst / "grid.json")
    for f in sorted(src.glob("*/*.jsonl")):
        rows = [{k: v for k, v in r.items() if k not in drop} for r in lines_of(f)]
        if edit:
            rows = [edit(r) for r in rows]
        put(dst / name(f.parent.name, f.stem), rows)
    return dst


def load_quiet(root: Path, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rec = load_records(root, **kw)
    return rec, [w for w in caught if issubclass(w.category, InferredLayoutWarning)]


def error(root: Path) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RecordsError) as ei:
            load_records(root)
    return str(ei.value)


# -- layouts ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pattern,example",
    [
        ("{b}_{m}.jsonl", "arc_m-a.jsonl"),
        ("{b}-{m}.jsonl", "arc-m-a.jsonl"),
        ("{b}.{m}.jsonl", "arc.m-a.jsonl"),
        ("{b}__{m}.jsonl", "arc__m-a.jsonl"),
        ("{m}_{b}.jsonl", "m-a_arc.jsonl"),
        ("{m}-{b}.jsonl", "m-a-arc.jsonl"),
    ],
)
def test_flat_layout_model_from_the_file_name(tmp_path, pattern, example):
    src, want = canonical(tmp_path)
    root = relayout(src, tmp_path / "flat", lambda b, m: pattern.format(b=b, m=m))
    rec, warned = load_quiet(root)
    assert rec.equals(want)
    assert rec.models == ("m-a", "m-c", "org/m-b")  # org__m-b in a name is org/m-b
    assert len(warned) == 1 and "flat layout" in rec.layout_notes[0]
    assert f"'{example}' -> 'm-a'" in rec.layout_notes[0]
    assert rec.notes == ()


def test_flat_layout_model_from_a_model_field(tmp_path):
    src, want = canonical(tmp_path)
    root = relayout(src, tmp_path / "flat", lambda b, m: f"file-{b}-{len(m)}{m[-1]}.jsonl", drop=())
    rec, _ = load_quiet(root)
    assert rec.equals(want)
    assert "the lines' 'model' field" in rec.layout_notes[0]


def test_flat_layout_needs_a_benchmark_field(tmp_path):
    src, _ = canonical(tmp_path)
    root = relayout(src, tmp_path / "flat", lambda b, m: f"{b}_{m}.jsonl", drop=("model", "benchmark"))
    msg = error(root)
    assert f"{root / 'arc_m-a.jsonl'}: a records file directly in the records directory needs a 'benchmark'" in msg


def test_flat_file_name_without_the_benchmark_and_no_model_field(tmp_path):
    src, _ = canonical(tmp_path)
    root = relayout(src, tmp_path / "flat", lambda b, m: f"{b}_{m}.jsonl")
    (root / "arc_m-a.jsonl").rename(root / "something.jsonl")
    assert (
        "something.jsonl: cannot tell the model: the file name does not start or end with the benchmark 'arc'"
        in error(root)
    )


def test_flat_model_field_wins_over_the_file_name_and_is_noted(tmp_path):
    src, _ = canonical(tmp_path)
    root = relayout(src, tmp_path / "flat", lambda b, m: f"{b}_{m}.jsonl", drop=())
    for b in ("arc", "mmlu"):
        p = root / f"{b}_m-a.jsonl"
        put(p, [dict(r, model="google/m-a") for r in lines_of(p)])
    rec, _ = load_quiet(root)
    assert rec.models == ("google/m-a", "m-c", "org/m-b")
    assert (
        "2 files named otherwise than their 'model' field, which wins (e.g. 'arc_m-a.jsonl' holds "
        "'google/m-a')" in rec.layout_notes[0]
    )


def test_flat_model_field_still_the_same_on_every_line(tmp_path):
    src, _ = canonical(tmp_path)
    root = relayout(src, tmp_path / "flat", lambda b, m: f"{b}_{m}.jsonl", drop=())
    p = root / "arc_m-a.jsonl"
    rows = lines_of(p)
    rows[2]["model"] = "m-z"
    put(p, rows)
    assert f"{p}:3: model 'm-z' differs from 'm-a' on an earlier line" in error(root)


def test_flat_file_name_case_is_ignored(tmp_path):
    src, want = canonical(tmp_path)
    root = relayout(src, tmp_path / "flat", lambda b, m: f"{b.upper()}_{m}.jsonl")
    rec, _ = load_quiet(root)
    assert rec.equals(want)


def test_flat_two_files_for_one_benchmark_and_model(tmp_path):
    src, _ = canonical(tmp_path)
    root = relayout(src, tmp_path / "flat", lambda b, m: f"{b}_{m}.jsonl")
    shutil.copy(root / "arc_m-a.jsonl", root / "m-a_arc.jsonl")
    assert "model 'm-a' of benchmark 'arc' already read from" in error(root)


def test_mixed_flat_and_nested_is_refused(tmp_path):
    src, _ = canonical(tmp_path)
    shutil.copy(src / "arc" / "m-a.jsonl", src / "arc_m-a.jsonl")
    assert "records files both in the directory itself (arc_m-a.jsonl) and in sub-directories (arc/)" in error(src)


@pytest.mark.parametrize("keep", [("benchmark",), ("model",), ("benchmark", "model")])
def test_model_benchmark_layout_told_by_the_fields(tmp_path, keep):
    src, want = canonical(tmp_path)
    drop = tuple(f for f in ("benchmark", "model") if f not in keep)
    root = relayout(src, tmp_path / "swapped", lambda b, m: f"{m}/{b}.jsonl", drop=drop)
    rec, warned = load_quiet(root)
    assert rec.equals(want)
    assert len(warned) == 1 and "layout <model>/<benchmark>.jsonl" in rec.layout_notes[0]


def test_model_benchmark_layout_without_fields_reads_as_canonical(tmp_path):
    """Documented: with nothing in the lines to tell them apart, directories are benchmarks;
    a swapped set then breaks the matching rules (its "models" hold different items)."""
    src, _ = canonical(tmp_path)
    root = relayout(src, tmp_path / "swapped", lambda b, m: f"{m}/{b}.jsonl", drop=("benchmark", "model"))
    assert "model 'mmlu' lacks item 'arc/item-0' of benchmark 'm-a' (present for model 'arc')" in error(root)


def test_model_benchmark_layout_with_a_contradicting_field(tmp_path):
    src, _ = canonical(tmp_path)
    root = relayout(src, tmp_path / "swapped", lambda b, m: f"{m}/{b}.jsonl", drop=("model",))
    p = root / "m-a" / "arc.jsonl"
    rows = lines_of(p)
    rows[0]["model"] = "m-q"
    put(p, rows)
    assert f"{p}:1: model 'm-q' does not match the directory 'm-a'" in error(root)


def test_canonical_layout_has_no_layout_note(tmp_path):
    src, _ = canonical(tmp_path)
    rec, warned = load_quiet(src)
    assert rec.layout_notes == () and warned == []


# -- bits --------------------------------------------------------------------------------------


def test_bits_read_as_correct(tmp_path):
    src, want = canonical(tmp_path)
    root = relayout(
        src,
        tmp_path / "bits",
        lambda b, m: f"{b}/{m}.jsonl",
        drop=(),
        edit=lambda r: {("bits" if k == "correct" else k): v for k, v in r.items()},
    )
    rec, _ = load_quiet(root)
    assert rec.equals(want) and "'bits' read as 'correct'" in rec.layout_notes[0]


def test_bits_and_correct_that_agree_are_accepted(tmp_path):
    src, want = canonical(tmp_path)
    root = relayout(
        src,
        tmp_path / "both",
        lambda b, m: f"{b}/{m}.jsonl",
        drop=(),
        edit=lambda r: dict(r, bits={k: bool(v) for k, v in r["correct"].items()}),
    )
    rec, _ = load_quiet(root)
    assert rec.equals(want)


def test_bits_and_correct_that_differ_are_an_error(tmp_path):
    src, _ = canonical(tmp_path)
    root = relayout(
        src, tmp_path / "both", lambda b, m: f"{b}/{m}.jsonl", drop=(), edit=lambda r: dict(r, bits=dict(r["correct"]))
    )
    p = root / "arc" / "m-a.jsonl"
    rows = lines_of(p)
    key = "gen|letter_plain|p1"
    rows[2]["bits"][key] = 1 - rows[2]["correct"][key]
    put(p, rows)
    msg = error(root)
    assert (
        f"{p}:3: item 'arc/item-2': 'bits' and 'correct' are both present and differ (first at {key!r}: "
        f"correct {rows[2]['correct'][key]}, bits {rows[2]['bits'][key]})"
    ) in msg
    assert "fix: keep one of 'correct' and 'bits'" in msg


# -- legend files ----------------------------------------------------------------------------------


def paper_keys() -> list[str]:
    return ["gen|letter_plain|p0", "gen|letter_plain|p3", "ll|cloze_plain"]


def release_set(tmp_path: Path, legend, name="legend.json") -> Path:
    root = tmp_path / "rel"
    rng = np.random.default_rng(1)
    for b in ("arc", "mmlu"):
        for m in ("alpha", "beta"):
            put(
                root / f"{b}_{m}.jsonl",
                [
                    {"benchmark": b, "item_id": f"{b}-{i}", "bits": {k: int(rng.integers(2)) for k in paper_keys()}}
                    for i in range(3)
                ],
            )
    if legend is not None:
        (root / name).write_text(json.dumps(legend))
    return root


@pytest.mark.parametrize(
    "legend",
    [
        {"gen|letter_plain|p0": [0, 1, 2, 3], "gen|letter_plain|p3": [3, 2, 1, 0], "ll|cloze_plain": None},
        [
            {"key": "gen|letter_plain|p0", "permutation": [0, 1, 2, 3]},
            {"key": "gen|letter_plain|p3", "perm": [3, 2, 1, 0]},
            {"key": "ll|cloze_plain"},
        ],
        {
            "reference": "gen|letter_plain|p0",
            "configurations": {
                "gen|letter_plain|p0": [0, 1, 2, 3],
                "gen|letter_plain|p3": {"permutation": [3, 2, 1, 0]},
                "ll|cloze_plain": None,
            },
        },
    ],
)
def test_release_legend_shapes(tmp_path, legend):
    rec, _ = load_quiet(release_set(tmp_path, legend))
    assert rec.configs == tuple(paper_keys()) and not rec.grid.inferred
    assert rec.grid.configs[1].permutation == (3, 2, 1, 0)  # the file's, not Table 4's (0, 2, 3, 1)
    assert rec.grid.configs[1].template == "letter_plain" and rec.grid.configs[2].scoring == "ll"
    assert "legend read from legend.json" in rec.layout_notes[0]


@pytest.mark.parametrize("name", LEGEND_NAMES[1:])
def test_every_documented_legend_name_is_tried(tmp_path, name):
    rec, _ = load_quiet(release_set(tmp_path, {k: None for k in paper_keys()}, name=name))
    assert not rec.grid.inferred and rec.grid.configs[0].permutation is None
    assert f"legend read from {name}" in rec.layout_notes[0]


def test_two_legend_files_are_an_error(tmp_path):
    root = release_set(tmp_path, {k: None for k in paper_keys()})
    shutil.copy(root / "legend.json", root / "configs.json")
    assert "more than one legend file: ['legend.json', 'configs.json']" in error(root)


def test_bad_release_legend(tmp_path):
    root = release_set(
        tmp_path, {"gen|letter_plain|p0": [0, 0, 1, 2], "gen|letter_plain|p3": None, "ll|cloze_plain": None}
    )
    assert "'permutation' must be a permutation of 0..n-1 or null, got [0, 0, 1, 2]" in error(root)
    (root / "legend.json").write_text('"not a legend"')
    assert "a legend must be a JSON object" in error(root)


def test_no_legend_infers_table_4(tmp_path):
    root = release_set(tmp_path, None)
    with pytest.warns(InferredLegendWarning), pytest.warns(InferredLayoutWarning):
        rec = load_records(root)
    assert rec.grid.inferred and rec.grid.reference == "gen|letter_plain|p0"
    assert rec.grid.configs[1].permutation == PAPER_ORDERINGS["p3"]


# -- per-item margin and unparsed count --------------------------------------------------------


def test_per_item_margin_and_unparsed_count(tmp_path):
    root = release_set(tmp_path, {k: None for k in paper_keys()})
    p = root / "arc_alpha.jsonl"
    rows = lines_of(p)
    for i, r in enumerate(rows):
        r["margin"] = 0.25 * i
        r[("n_unparsed", "unparsed", "unparsed_count")[i]] = i
    put(p, rows)
    rec, _ = load_quiet(root)
    a, cloze = rec.models.index("alpha"), rec.grid.index("ll|cloze_plain")
    assert rec.margin[a, :3, cloze].tolist() == [0.0, 0.25, 0.5]
    assert np.isnan(rec.margin[a, :3, :cloze]).all() and np.isnan(rec.margin[1 - a]).all()
    assert rec.unparsed[a, :3].tolist() == [0, 1, 2] and (rec.unparsed[1 - a] == UNPARSED_ABSENT).all()
    assert "the per-item margin kept as margin['ll|cloze_plain']" in rec.layout_notes[0]
    out = tmp_path / "v1"
    write_records(rec, out)
    assert load_records(out).equals(rec)  # kept through the records-v1 writer
    assert lines_of(out / "arc" / "alpha.jsonl")[1]["unparsed"] == 1


@pytest.mark.parametrize(
    "fields,message",
    [
        ({"n_unparsed": -1}, "'n_unparsed' must be a count from 0 to 3, got -1"),
        ({"n_unparsed": 4}, "'n_unparsed' must be a count from 0 to 3, got 4"),
        ({"unparsed": True}, "'unparsed' must be a count from 0 to 3, got true"),
        ({"unparsed": 1, "n_unparsed": 2}, "unparsed, n_unparsed disagree"),
        ({"margin": "0.3"}, "'margin' must be a finite number or null"),
        ({"margin": float("inf")}, "'margin' must be a finite number or null"),
        ({"margin": 0.3, "cloze_margin": 0.3}, "give the margin once"),
    ],
)
def test_bad_release_fields(tmp_path, fields, message):
    root = release_set(tmp_path, {k: None for k in paper_keys()})
    p = root / "arc_beta.jsonl"
    rows = lines_of(p)
    rows[1].update(fields)
    p.write_text("".join(json.dumps(r, allow_nan=True) + "\n" for r in rows))
    assert f"{p}:2: item 'arc-1': {message}" in error(root)


def test_per_item_margin_without_the_cloze_config(tmp_path):
    root = release_set(tmp_path, None)
    for p in root.glob("*.jsonl"):
        put(
            p,
            [
                dict(r, bits={k: v for k, v in r["bits"].items() if k != "ll|cloze_plain"}, margin=0.1)
                for r in lines_of(p)
            ],
        )
    assert "a per-item 'margin' belongs to config 'll|cloze_plain', which the legend lacks" in error(root)


# -- answer_class --------------------------------------------------------------------------------


def with_classes(rec):
    rng = np.random.default_rng(3)
    codes = rng.integers(ANSWER_CLASS_ABSENT, len(ANSWER_CLASSES), rec.shape).astype(np.int8)
    return replace(rec, answer_class=codes)


def test_answer_class_round_trip_and_views(tmp_path):
    rec = with_classes(make_records())
    rec = replace(rec, unparsed=np.random.default_rng(4).integers(-1, 4, rec.shape[:2]).astype(np.int16))
    write_records(rec, tmp_path / "r")
    back = load_records(tmp_path / "r")
    assert back.equals(rec) and back.answer_class.dtype == np.int8
    arc = back.scope("arc")
    assert arc.answer_class.shape == arc.correct.shape and arc.unparsed.shape == arc.correct.shape[:2]
    assert np.array_equal(arc.answer_class, rec.answer_class[:, rec.items.benchmark == "arc"])
    two = back.select_models(["org/m-b", "m-a"]).select_items([1, 0])
    assert np.array_equal(two.answer_class, rec.answer_class[[2, 0]][:, [1, 0]])
    assert np.array_equal(two.unparsed, rec.unparsed[[2, 0]][:, [1, 0]])
    line = lines_of(tmp_path / "r" / "arc" / "m-a.jsonl")[0]
    assert set(line.get("answer_class", {}).values()) <= set(ANSWER_CLASSES)
    assert not back.equals(replace(rec, answer_class=None))


def test_answer_class_bad_value(tmp_path):
    src, _ = canonical(tmp_path)
    p = src / "mmlu" / "m-c.jsonl"
    rows = lines_of(p)
    rows[0]["answer_class"] = {"gen|letter_plain|p0": "letters"}
    put(p, rows)
    assert f"{p}:1: item 'mmlu/item-0': 'answer_class' values must be one of {list(ANSWER_CLASSES)} or null" in error(
        src
    )
    rows[0]["answer_class"] = {"gen|nope|p0": "letter"}
    put(p, rows)
    assert "'answer_class' must be an object keyed by legend config keys" in error(src)


def test_a_layout_note_quotes_long_names_cut(tmp_path):
    """Long generated names reached the warnings summary whole, one warning per hostile-input
    test (UX review 2026-12-04 #28); a name may be 256 characters."""
    src, _ = canonical(tmp_path)
    root = relayout(src, tmp_path / "flat", lambda b, m: f"{b}_{m}.jsonl", drop=())
    long = "org/" + "x" * 250
    for b in ("arc", "mmlu"):
        p = root / f"{b}_m-a.jsonl"
        put(p, [dict(r, model=long) for r in lines_of(p)])
    rec, _ = load_quiet(root)
    assert long in rec.models  # the data keeps the name whole
    note = rec.layout_notes[0]
    assert "2 files named otherwise" in note and "org/xxx" in note and "…" in note
    assert "x" * 100 not in note
