"""Answer classes (letter / enumeration / refusal / empty / other) and the strict parse rule (issue 14.4)."""

from __future__ import annotations

import json

import pytest
from helpers.collect import _spec

from leaderboard_audit.collect.answers import answer_class, leading_labels
from leaderboard_audit.collect.engines.fake import FakeEngine
from leaderboard_audit.collect.harness import LABEL_STYLES, paper_harness
from leaderboard_audit.collect.run import collect
from leaderboard_audit.collect.summary import answer_classes, classes_line
from leaderboard_audit.records import load_records
from helpers.paths import REPO

L, D = LABEL_STYLES["letter_dot"], LABEL_STYLES["digit_dot"]
REAL = REPO / "fixtures" / "real"


@pytest.mark.parametrize(
    "style,text,cls",
    [
        (L, " A, B, C, D\n", "enumeration"),
        (L, " A, B, C, or D", "enumeration"),
        (L, "\nA. B. C. D", "enumeration"),
        (L, " A) B) C) D)", "enumeration"),
        (D, " 1-4\nExplanation: The", "enumeration"),
        (D, " 1, 2, 3", "enumeration"),
        (L, " A", "letter"),
        (L, " A.\nA.\nB.", "letter"),
        (L, " (D).\n(A) You", "letter"),
        (L, " (D) a single strand of the", "letter"),
        (L, "\nThe answer is: B", "letter"),
        (D, " 3", "letter"),
        (L, "", "empty"),
        (L, " \n\n ", "empty"),
        (L, " I'm sorry, I cannot help", "refusal"),
        (D, "As an AI I will not", "refusal"),
        (L, ":", "other"),
        (D, " A. B. C.", "other"),
        (L, " Yes.", "other"),
        (D, " Scenario one", "other"),
    ],
)
def test_classes(style, text, cls):
    assert answer_class(style, text) == cls


def test_leading_labels_stop_at_the_first_word():
    assert leading_labels(L, " A, B or C then D") == ["A", "B", "C"]
    assert leading_labels(L, "Answer: A, B") == []


class EnumeratingFake(FakeEngine):
    """Answers ' A, B, C, D' to every generation prompt whose hash is even, else ' C'."""

    def generate(self, prompts, max_tokens, *, seed=1234):
        self._tick()
        out = []
        for p in prompts:
            text = " A, B, C, D" if sum(p) % 2 == 0 else " C"
            out.append(self.tokenizer.encode(text)[1:][:max_tokens])
        return out


@pytest.mark.parametrize("rule", ["paper", "strict"])
def test_answer_class_in_records_and_strict_rule(tmp_path, rule, capsys):
    spec = _spec(tmp_path)
    spec.write_text(f'parse = "{rule}"\n' + spec.read_text())
    root = collect(spec, progress=False, engine_factory=lambda m: EnumeratingFake(m.path))
    rec = load_records(root)
    assert len(rec.items) == 24
    keys = [c.key for c in paper_harness().configs]
    n_enum = 0
    for f in root.glob("*/*.jsonl"):
        for line in map(json.loads, f.read_text().splitlines()):
            ac = line["answer_class"]
            assert set(ac) == {k for k in keys if k.startswith("gen|")}
            for k, cls in ac.items():
                assert cls == "other" if k.startswith("gen|digit_labels") else cls in ("enumeration", "letter")
                if cls == "enumeration":
                    n_enum += 1
                    # paper: first label found (slot A); strict: unparseable, scored wrong
                    assert line["pred"][k] is None if rule == "strict" else line["pred"][k] is not None
                    if rule == "strict":
                        assert line["correct"][k] == 0
    assert n_enum > 0
    grid = json.loads((root / "grid.json").read_text())
    assert ("parse" in grid["collector"]) == (rule == "strict")
    summary = answer_classes(root)
    assert sum(summary["two"]["gen|letter_plain|p0"].values()) == 24
    assert any("enumeration" in x for x in classes_line(root))


def test_bad_parse_rule_is_refused(tmp_path, capsys):
    from leaderboard_audit.collect.cli import main

    spec = _spec(tmp_path)
    spec.write_text('parse = "lenient"\n' + spec.read_text())
    assert main([str(spec)]) == 4
    assert f"{spec}:1: parse = 'lenient' is not a parse rule" in capsys.readouterr().err


def test_real_answers_classes_and_strict_reference_accuracy():
    """The bundled real grid: Qwen's letter_plain answers are mostly enumerations; the paper's
    rule reads them as A, which makes its reference accuracy 0.41 instead of 0.02."""
    if not (REAL / "_raw").is_dir():
        pytest.skip("fixtures/real not present")
    cls = answer_classes(REAL)
    qwen = cls["Qwen2.5-Coder-0.5B-Instruct"]
    lp = sum((qwen[f"gen|letter_plain|p{i}"] for i in range(6)), start=type(qwen["gen|letter_plain|p0"])())
    assert sum(lp.values()) == 2400 and lp["enumeration"] == 2201 and lp["letter"] == 199
    ref = "gen|letter_plain|p0"
    paper = strict = 0
    for b in ("arc", "hellaswag", "mmlu", "truthfulqa"):
        raw = {
            r["item_id"]: r["gen"][ref]
            for r in map(json.loads, (REAL / "_raw" / b / "Qwen2.5-Coder-0.5B-Instruct.jsonl").read_text().splitlines())
        }
        for line in map(json.loads, (REAL / b / "Qwen2.5-Coder-0.5B-Instruct.jsonl").read_text().splitlines()):
            paper += line["correct"][ref]
            strict += line["correct"][ref] * (answer_class(L, raw[line["item_id"]]) != "enumeration")
    assert (paper, strict) == (165, 9)
