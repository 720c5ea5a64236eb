"""The grid as data: 26 configs, exact Table 5 texts, prompts, parsing (no torch needed)."""

from __future__ import annotations

import json

import pytest

from leaderboard_audit.collect.harness import (
    PAPER_TEMPLATES,
    harness_from_obj,
    load_harness,
    paper_harness,
    parse_answer,
)
from leaderboard_audit.records.grid import PAPER_ORDERINGS, parse_grid


def test_paper_grid_has_26_configs_and_reference():
    h = paper_harness()
    assert len(h.configs) == 26
    assert h.reference == "gen|letter_plain|p0"
    assert len(h.gen_configs) == 24 and len(h.ll_configs) == 2
    assert {c.key for c in h.ll_configs} == {"ll|cloze_plain", "ll|cloze_question"}
    assert dict((c.ordering, c.permutation) for c in h.gen_configs) == PAPER_ORDERINGS
    assert PAPER_ORDERINGS["p1"] == (1, 3, 2, 0) and PAPER_ORDERINGS["p5"] == (2, 3, 1, 0)


def test_template_texts_are_table5_verbatim():
    t = {k: v.text for k, v in PAPER_TEMPLATES.items()}
    assert t == {
        "letter_plain": "Question: [q]\n[options]\nAnswer with the letter only:",
        "letter_paren": "[q]\n[options]\nThe correct option is",
        "digit_labels": "Question: [q]\n[options]\nAnswer (1-4):",
        "instruction": "Read carefully and pick the single best choice.\n[q]\n[options]\nYour choice:",
        "cloze_plain": "[q]\nAnswer:",
        "cloze_question": "Question: [q]\nAnswer:",
    }


def test_prompt_rendering_applies_permutation_and_label_style():
    h = paper_harness()
    cfg = {c.key: c for c in h.configs}
    opts = ["red", "green", "blue", "black"]
    assert (
        cfg["gen|letter_plain|p0"].template.render_gen("Q?", opts, (0, 1, 2, 3))
        == "Question: Q?\nA. red\nB. green\nC. blue\nD. black\nAnswer with the letter only:"
    )
    c = cfg["gen|letter_paren|p1"]  # slot j shows original option perm[j] = 1,3,2,0
    assert (
        c.template.render_gen("Q?", opts, c.permutation)
        == "Q?\n(A) green\n(B) black\n(C) blue\n(D) red\nThe correct option is"
    )
    c = cfg["gen|digit_labels|p4"]
    assert (
        c.template.render_gen("Q?", opts, c.permutation)
        == "Question: Q?\n1. black\n2. red\n3. blue\n4. green\nAnswer (1-4):"
    )
    c = cfg["gen|instruction|p2"]
    assert (
        c.template.render_gen("Q?", opts, c.permutation)
        == "Read carefully and pick the single best choice.\nQ?\nA) red\nB) green\nC) black\nD) blue\nYour choice:"
    )
    assert cfg["ll|cloze_question"].template.render_stem("Q?") == "Question: Q?\nAnswer:"


@pytest.mark.parametrize(
    "key,out,want",
    [
        ("gen|letter_plain|p0", " A", 0),
        ("gen|letter_plain|p0", " b.", 1),  # uppercased before matching
        ("gen|letter_plain|p0", "The answer is C", 2),  # A inside ANSWER is no word
        ("gen|letter_plain|p1", " A", 1),  # slot A under p1 shows option 1
        ("gen|letter_plain|p1", " D\n\nA. x", 0),  # first match wins
        ("gen|letter_paren|p5", " (B).", 3),
        ("gen|digit_labels|p0", " 3", 2),
        ("gen|digit_labels|p0", " 84°F", None),  # no word boundary inside 84
        ("gen|digit_labels|p0", "\nA) 1\nB)", 0),  # the first digit 1..4 in the text
        ("gen|digit_labels|p3", " 2.", 2),
        ("gen|instruction|p4", " A) foo", 3),
        ("gen|letter_plain|p0", " the answer", None),  # THE ANSWER: no standalone A-D
        ("gen|letter_plain|p0", "", None),
        ("gen|letter_plain|p0", " E", None),
    ],
)
def test_parse_answer_maps_back_through_permutation(key, out, want):
    cfg = {c.key: c for c in paper_harness().configs}[key]
    assert parse_answer(cfg, out) == want


def test_grid_json_discloses_everything_and_round_trips():
    g = paper_harness().to_grid({"collector": {"engine": "vllm"}})
    obj = json.loads(json.dumps(g.to_json()))
    back = parse_grid(obj, "grid.json")
    assert back.keys == g.keys and back.reference == "gen|letter_plain|p0"
    c = next(c for c in obj["configs"] if c["key"] == "gen|digit_labels|p2")
    assert c["template_text"] == "Question: [q]\n[options]\nAnswer (1-4):"
    assert c["label_style"]["parse_regex"] == r"\b([1-4])\b"
    assert c["permutation"] == [0, 1, 3, 2]
    assert (c["temperature"], c["top_p"], c["seed"], c["max_tokens"]) == (0.0, 1.0, 1234, 8)
    c = next(c for c in obj["configs"] if c["key"] == "gen|letter_plain|p0")
    assert c["label_style"]["parse_regex"] == r"\b([A-D])\b" and c["label_style"]["parse_uppercase"]
    c = next(c for c in obj["configs"] if c["key"] == "ll|cloze_plain")
    assert c["normalization"] == "mean_token_logprob" and c["permutation"] is None
    assert obj["collector"] == {"engine": "vllm"}


def test_custom_grid_from_toml(tmp_path):
    p = tmp_path / "grid.toml"
    p.write_text("""
name = "tiny"
reference = "gen|mine|id"
[orderings]
id = [0, 1, 2, 3]
rev = [3, 2, 1, 0]
[templates.mine]
scoring = "gen"
text = "Q: [q]\\n[options]\\nA:"
labels = "letter_paren"
[templates.stem]
scoring = "ll"
text = "[q] =>"
[decoding]
max_tokens = 4
""")
    h = load_harness(p)
    assert h.keys == ["gen|mine|id", "gen|mine|rev", "ll|stem"]
    assert h.decoding.max_tokens == 4
    c = h.configs[1]
    assert c.template.render_gen("x", ["a", "b", "c", "d"], c.permutation) == "Q: x\n(A) d\n(B) c\n(C) b\n(D) a\nA:"
    assert parse_answer(c, "(A)") == 3
    ext = harness_from_obj({"extends": "paper", "orderings": {"p6": [1, 0, 2, 3]}})
    assert len(ext.configs) == 4 * 7 + 2


def test_bad_grids_are_refused():
    with pytest.raises(ValueError, match=r"ordering 'x' is not a permutation: \[0, 0, 1, 2\]"):
        harness_from_obj({"orderings": {"x": [0, 0, 1, 2]}})
    with pytest.raises(ValueError, match=r"template 't': a generation template needs \[options\]"):
        harness_from_obj({"templates": {"t": {"scoring": "gen", "text": "[q] no options"}}})
    with pytest.raises(ValueError, match=r"only greedy decoding \(temperature 0\)"):
        harness_from_obj({"extends": "paper", "decoding": {"temperature": 0.7}})
