"""The collector's declared axes (collect/axes.py, prompts.py, grid_axes.py): spec
validation, designs, few-shot and CoT prompts, CoT answer extraction, system prompts,
grid.json's axis_groups, and `pytest --audit` over the collected records (fake engine)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from leaderboard_audit.collect.axes import AxesSpec, Variant, axes_from_obj
from leaderboard_audit.collect.benchmarks import Item
from leaderboard_audit.collect.engines.fake import ByteTokenizer
from leaderboard_audit.collect.grid_axes import with_axes
from leaderboard_audit.collect.harness import LABEL_STYLES, paper_harness
from leaderboard_audit.collect.prompts import cot_answer, extract_cot, gen_text, prompt_ids
from leaderboard_audit.collect.run import collect
from leaderboard_audit.records import load_records
from helpers.collect import _spec

LETTER = LABEL_STYLES["letter_dot"]
ITEM = Item("x/1", "Two plus two?", ("3", "4", "5", "6"), 1)
EX = [Item("x/e1", "One plus one?", ("2", "1", "3", "4"), 0), Item("x/e2", "Sky colour?", ("red", "blue", "g", "y"), 1)]


def cfg(key: str, **variant):
    c = {c.key: c for c in paper_harness().configs}[key]
    return dataclasses.replace(c, variant=Variant(**variant))


# ------------------------------------------------------------------ prompts


def test_two_shot_prompt_uses_the_configs_template_ordering_and_gold_labels():
    # p1 shows original options (1, 3, 2, 0): e1's gold 0 sits in slot D, e2's gold 1 in slot A
    text = gen_text(cfg("gen|letter_plain|p1", shots=2), ITEM, EX, None)
    e1 = "Question: One plus one?\nA. 1\nB. 4\nC. 3\nD. 2\nAnswer with the letter only: D"
    e2 = "Question: Sky colour?\nA. blue\nB. y\nC. g\nD. red\nAnswer with the letter only: A"
    item = "Question: Two plus two?\nA. 4\nB. 6\nC. 5\nD. 3\nAnswer with the letter only:"
    assert text == f"{e1}\n\n{e2}\n\n{item}"


def test_cot_prompt_and_cot_exemplars():
    axes = AxesSpec(cot=(False, True))
    text = gen_text(cfg("gen|letter_plain|p0", shots=1, cot=True), ITEM, EX, axes)
    assert text.startswith(
        "Question: One plus one?\nA. 2\nB. 1\nC. 3\nD. 4\nAnswer with the letter only: The answer is A.\n\n"
    )
    assert text.endswith("Answer with the letter only:\n" + axes.cot_instruction)


def test_too_many_shots_is_refused():
    with pytest.raises(ValueError, match="3 shots asked, the benchmark reserves 2"):
        gen_text(cfg("gen|letter_plain|p0", shots=3), ITEM, EX, None)


def test_system_prompt_raw_and_under_the_chat_template():
    tok = ByteTokenizer()
    assert tok.decode(prompt_ids(tok, "Q?", False, "Be brief.")) == "Be brief.\n\nQ?"
    assert tok.decode(prompt_ids(tok, "Q?", True, "Be brief.")) == "<system>Be brief.<user>Q?<assistant>"
    assert tok.decode(prompt_ids(tok, "Q?", True, "")) == "<user>Q?<assistant>"


# ------------------------------------------------------------------ CoT extraction


@pytest.mark.parametrize(
    ("text", "slot", "how"),
    [
        ("B looks right. The answer is (C).", 2, "stated"),
        ("the answer is B, no wait: The answer is: D", 3, "stated"),  # the last statement
        ("Between B and D, I pick D", 3, "last_label"),
        ("I need more context to decide.", None, "none"),
        ("The answer is E; so C", 2, "last_label"),  # E is no label: the last label
    ],
)
def test_extract_cot(text, slot, how):
    assert extract_cot(LETTER, text) == (slot, how)


def test_cot_answer_maps_slots_through_the_ordering_and_classes_no_label_as_other():
    c = cfg("gen|letter_plain|p1", cot=True)  # slot C shows original option 2, slot D option 0
    assert cot_answer(c, "So the answer is D.") == (0, "letter")
    assert cot_answer(c, "It depends on the context.") == (None, "other")
    assert cot_answer(c, "  ") == (None, "empty")
    assert cot_answer(c, "I cannot answer that.") == (None, "refusal")


# ------------------------------------------------------------------ spec and designs


@pytest.mark.parametrize(
    ("obj", "msg"),
    [
        ({"shots": [0, 6]}, "'shots' must be a list of distinct whole numbers 0..5"),
        ({"shots": [0, 0]}, "distinct"),
        ({"cot": ["yes"]}, "'cot' must be a list of distinct true/false"),
        ({"design": "grid"}, "design = 'grid': choose one of one_at_a_time, product"),
        ({"shots": [0, 5], "design": [{"shots": 3}]}, r"design\[0\]: shots = 3 is not one of the declared values"),
        ({"system_prompt": {"a b": "x"}}, "use letters, digits"),
        ({"cot": [False, True], "cot_max_tokens": 0}, "'cot_max_tokens' must be a whole number 1..32,768"),
        # C16 (issue 46): any type became the instruction text; any budget was accepted
        ({"cot": [False, True], "cot_max_tokens": 10**12}, "'cot_max_tokens' must be a whole number 1..32,768"),
        ({"cot": [False, True], "cot_instruction": {"a": 1}}, "'cot_instruction' must be a non-empty string"),
        ({"cot": [False, True], "cot_instruction": 7}, "'cot_instruction' must be a non-empty string"),
        ({"cot": [False, True], "cot_instruction": "  "}, "'cot_instruction' must be a non-empty string"),
        ({"cot": [False, True], "cot_instruction": "x" * 5000}, "at most 4,096 characters"),
    ],
)
def test_axes_spec_errors(obj, msg):
    with pytest.raises(ValueError, match=msg):
        axes_from_obj(obj)


def test_designs_and_keys():
    h = paper_harness()
    one = with_axes(h, axes_from_obj({"shots": [0, 5], "cot": [False, True]}))
    assert one.keys[:26] == h.keys
    assert one.keys[26:] == ["gen|letter_plain|p0|shots=5", "gen|letter_plain|p0|cot=on"]
    prod = with_axes(h, axes_from_obj({"shots": [0, 5], "cot": [False, True], "design": "product"}))
    assert len(prod.configs) == 26 + 24 * 3  # every generation config under the 3 other combinations
    assert "gen|digit_labels|p4|shots=5|cot=on" in prod.keys
    listed = with_axes(h, axes_from_obj({"shots": [0, 5], "cot": [False, True], "design": [{"shots": 5, "cot": True}]}))
    assert listed.keys[26:] == ["gen|letter_plain|p0|shots=5|cot=on"]
    sp = with_axes(
        h, axes_from_obj({"system_prompt": {"none": "", "terse": "Be brief."}, "chat_template": [False, True]})
    )
    assert sp.keys[26:] == ["gen|letter_plain|p0|chat=on", "gen|letter_plain|p0|system=terse"]
    grid = sp.to_grid().to_json()
    assert grid["axis_groups"]["system_prompt"] == ["gen|letter_plain|p0", "gen|letter_plain|p0|system=terse"]
    assert grid["axis_groups"]["chat_template"] == ["gen|letter_plain|p0", "gen|letter_plain|p0|chat=on"]
    # only single-axis departures form a group: the listed design's one config varies two axes
    assert set(listed.to_grid().to_json()["axis_groups"]) == {"ordering", "format", "scoring"}


def test_a_bad_cot_instruction_is_a_named_error_exit_4_from_the_cli(tmp_path, capsys):
    """C16 through ``leaderboard-audit collect``: d0b4150 collected with the instruction "{'a': 1}"."""
    from leaderboard_audit.collect.cli import main

    p = _spec(tmp_path)
    p.write_text("cot = [false, true]\ncot_instruction = { a = 1 }\n" + p.read_text())
    assert main([str(p)]) == 4
    err = capsys.readouterr().err
    assert f"{p}:2: the key 'cot_in" in err and "got dict ({'a': 1})" in err  # the CLI cuts long lines
    assert "Traceback" not in err


def test_the_cot_budget_is_its_own_generate_call():
    h = with_axes(paper_harness(), axes_from_obj({"cot": [False, True], "cot_max_tokens": 64}))
    assert {h.max_tokens(c) for c in h.gen_configs} == {8, 64}


def test_chat_template_axis_conflicts_with_a_models_own_setting(tmp_path):
    from leaderboard_audit.collect.errors import CollectError
    from leaderboard_audit.collect.spec import load_spec

    p = _spec(tmp_path)
    p.write_text(p.read_text().replace('path = "fake-two"', 'path = "fake-two"\nchat_template = true'))
    p.write_text("chat_template = [false, true]\n" + p.read_text())
    with pytest.raises(CollectError, match="drop chat_template = true from \\[\\[models\\]\\] two"):
        load_spec(p)


# ------------------------------------------------------------------ end to end (fake engine)


@pytest.fixture(scope="module")
def wide(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wide")
    p = _spec(tmp)
    p.write_text("shots = [0, 5]\ncot = [false, true]\ncot_max_tokens = 48\n" + p.read_text())
    return collect(p, progress=False)


def test_collected_grid_declares_the_new_axes(wide):
    g = json.loads((wide / "grid.json").read_text())
    assert set(g["axis_groups"]) == {"ordering", "format", "scoring", "shots", "cot"}
    assert g["axis_groups"]["shots"] == ["gen|letter_plain|p0", "gen|letter_plain|p0|shots=5"]
    assert g["zero_shot"] is False and g["axes"]["values"] == {"shots": [0, 5], "cot": [False, True]}
    conf = {c["key"]: c for c in g["configs"]}
    five = conf["gen|letter_plain|p0|shots=5"]
    assert five["shots"] == 5 and len(five["exemplars"]["arc"]) == 5 and five["max_tokens"] == 8
    assert conf["gen|letter_plain|p0|cot=on"]["max_tokens"] == 48
    rec = load_records(wide)
    assert len(rec.grid) == 28 and rec.grid.axis_groups is not None
    # the exemplars are reserved items: never among the evaluated ones
    assert not set(five["exemplars"]["arc"]) & set(rec.items.item_id)


def test_cot_bits_recompute_from_the_raw_answers(wide):
    h = with_axes(paper_harness(), axes_from_obj({"shots": [0, 5], "cot": [False, True]}))
    c = {x.key: x for x in h.configs}["gen|letter_plain|p0|cot=on"]
    seen = set()
    for b in ("arc", "mmlu"):
        lines = [json.loads(x) for x in (wide / b / "two.jsonl").read_text().splitlines()]
        raws = [json.loads(x) for x in (wide / "_raw" / b / "two.jsonl").read_text().splitlines()]
        for line, raw in zip(lines, raws):
            text = raw["gen"][c.key]
            pred, klass = cot_answer(c, text)
            assert (line["pred"][c.key], line["answer_class"][c.key]) == (pred, klass)
            assert line["correct"][c.key] == int(pred is not None and pred == line["gold"])
            seen.add(klass)
    assert seen == {"letter", "other"}  # the fake reasons to a label, or to none


def test_pytest_audit_reports_every_axis(pytester, wide):
    report = wide.parent / "r.json"
    r = pytester.runpytest("--audit", str(wide), "--audit-report", str(report), "-p", "no:cacheprovider", "-q")
    out = r.stdout.str()
    assert r.ret in (0, 1), out
    assert "declared axes, mean axis-robust accuracy / min Kendall tau:" in out
    assert "per-axis variance share v_axis/V" in out
    rep = json.loads(report.read_text())
    s = rep["scopes"]["pooled"]
    assert set(s["axes"]["groups"]) == {"ordering", "format", "scoring", "cot", "shots", "joint"}  # JSON sorts keys
    assert "ordering (6) " in out and "cot (2) " in out and "shots (2) " in out and "joint (28) " in out
    assert set(s["axes"]["axis_kendall_min"]) == set(s["axes"]["groups"])
    (v,) = [v for v in s["verdicts"] if v["id"] == "axes[pooled]"]
    assert v["evidence"]["load_bearing"] in s["axes"]["groups"]
    for m in rep["records"]["models"]:
        assert set(s["brittleness"][m]["v_axis_share"]) == {"ordering", "format", "scoring", "cot", "shots"}


# ------------------------------------------------------------------ importers given a mapping


def test_import_writes_declared_axis_groups(tmp_path, capsys):
    from helpers.lmeval import SMOL, SMOL_LL

    from leaderboard_audit.importers.cli import main as import_main

    mp, ax = tmp_path / "map.json", tmp_path / "axes.json"
    mp.write_text(json.dumps(SMOL_LL))
    ax.write_text(json.dumps({"stem": ["ll|cloze_question", "ll|cloze_plain"]}))
    out = tmp_path / "records"
    args = ["lm-eval", str(SMOL), "-o", str(out), "--metric", "acc", "--mapping", str(mp)]
    assert import_main([*args, "--axis-groups", str(ax)]) == 0
    assert load_records(out).grid.axis_groups == {"stem": ("ll|cloze_question", "ll|cloze_plain")}
    ax.write_text(json.dumps({"stem": ["ll|cloze_plain", "ll|nope"]}))
    assert import_main([*args[:3], str(tmp_path / "bad"), *args[4:], "--axis-groups", str(ax)]) != 0
    err = capsys.readouterr().err
    assert "axis 'stem': 'll|nope' is not a config key" in err and "does not hold the reference" in err
