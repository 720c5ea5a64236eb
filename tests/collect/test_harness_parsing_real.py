"""The parsing regexes on the raw answers real models gave (sidecar of fixtures/real)."""

from __future__ import annotations

import json

import pytest

from leaderboard_audit.collect.harness import paper_harness, parse_answer
from helpers.paths import REPO

REAL = REPO / "fixtures" / "real"
RAW = sorted((REAL / "_raw").glob("*/*.jsonl")) if (REAL / "_raw").is_dir() else []
CFG = {c.key: c for c in paper_harness().configs}


@pytest.mark.skipif(not RAW, reason="fixtures/real has no raw sidecar yet")
@pytest.mark.parametrize("raw", RAW, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_recorded_preds_are_the_regex_reading_of_the_raw_text(raw):
    rec = REAL / raw.parent.name / raw.name
    lines = {json.loads(l)["item_id"]: json.loads(l) for l in rec.read_text().splitlines()}
    n = unparsed = 0
    for l in raw.read_text().splitlines():
        r = json.loads(l)
        line = lines[r["item_id"]]
        for k, text in r["gen"].items():
            p = parse_answer(CFG[k], text)
            assert p == line["pred"][k], (r["item_id"], k, text)
            assert line["correct"][k] == int(p is not None and p == line["gold"])
            n += 1
            unparsed += p is None
        for k, scores in r["ll_mean_logprob"].items():
            best = max(range(len(scores)), key=lambda j: (scores[j], -j))
            assert best == line["pred"][k]
    assert n > 0


# Real outputs of SmolLM2-135M-Instruct (float32, vLLM) on MMLU item
# mmlu/elementary_mathematics/2121, options in p0 order
# ['84 − 11 = t; 73°F', 't − 84 = 11; 95°F', '84 − t = 11; 73°F', 't − 11 = 84; 95°F'].
@pytest.mark.parametrize(
    "key,text,want",
    [
        ("gen|letter_plain|p0", " A\n\nA. 84", 0),
        ("gen|letter_plain|p1", " A\n\nA. t − ", 1),
        ("gen|letter_paren|p5", " (B).\n\nThe answer is", 3),
        ("gen|digit_labels|p0", " 11.\n\nThe answer", None),  # 11 is no label: unparseable
        ("gen|digit_labels|p1", " 84°F\n\nThe", None),  # 84 is one word: unparseable
        ("gen|instruction|p0", " 1\n\nA) 8", 0),  # '1' is no letter; the A) echo is
        ("gen|instruction|p5", " The answer is A) 84", 2),
        ("gen|digit_labels|p2", "\nA) 1\nB)", 0),
    ],
)
def test_real_answers(key, text, want):
    assert parse_answer(CFG[key], text) == want
