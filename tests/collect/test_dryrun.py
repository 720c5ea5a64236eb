"""--dry-run: the counted work equals what the runner sends; the floor is 2 x params x tokens / peak."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from leaderboard_audit.collect.dryrun import (
    ModelWork,
    _Counter,
    count_work,
    params_from_folder,
    params_from_name,
    plan,
    report,
)
from leaderboard_audit.collect.engines.fake import FakeEngine
from leaderboard_audit.collect.run import collect
from leaderboard_audit.collect.spec import spec_from_obj


def _spec(tmp: Path, **kw):
    arc = tmp / "arc.jsonl"
    arc.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"Q{i}",
                    "question": f"What is {i} times {i}?",
                    "choices": {"text": [f"answer {i}-{j}" * (j + 1) for j in range(4)], "label": list("ABCD")},
                    "answerKey": "ABCD"[i % 4],
                }
            )
            + "\n"
            for i in range(13)
        )
    )
    obj = {
        "output": str(tmp / "out"),
        "engine": "fake",
        "n_items": 7,
        "chunk_items": 3,
        "benchmarks": ["arc"],
        "benchmark_files": {"arc": str(arc)},
        "models": [{"name": "tiny-1.5b", "path": "fake-a"}],
    }
    obj.update(kw)
    return spec_from_obj(obj)


class _Counting(FakeEngine):
    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.gen = self.ll = self.tokens = self.max_new = 0

    def generate(self, prompts, max_tokens, *, seed=1234):
        self.gen += len(prompts)
        self.tokens += sum(len(p) for p in prompts)
        self.max_new += len(prompts) * max_tokens
        return super().generate(prompts, max_tokens, seed=seed)

    def score(self, requests):
        self.ll += len(requests)
        self.tokens += sum(len(ids) for ids, _ in requests)
        return super().score(requests)


@pytest.mark.parametrize("chat", [False, True])
def test_counts_equal_what_the_runner_sends(tmp_path, chat):
    spec = _spec(tmp_path, models=[{"name": "tiny-1.5b", "path": "fake-a", "chat_template": chat}])
    engines = []

    def factory(m):
        engines.append(_Counting(m.path))
        return engines[0]

    collect(spec, progress=False, engine_factory=factory)
    (w,), counts, _ = plan(spec)
    e = engines[0]
    assert counts == {"arc": 7}
    assert (w.gen_prompts, w.ll_requests, w.prefill_tokens, w.max_generated_tokens) == (
        e.gen,
        e.ll,
        e.tokens,
        e.max_new,
    )
    assert w.gen_prompts == 7 * 24 and w.ll_requests == 7 * 2 * 4 and w.tokens_from == "tokenizer"
    assert (w.params, w.active_params, w.params_from) == (1.5e9, 1.5e9, "name")


def test_estimate_without_a_tokenizer_is_characters_over_four(tmp_path):
    spec = _spec(tmp_path)
    from leaderboard_audit.collect.benchmarks import load_items
    from leaderboard_audit.collect.harness import paper_harness

    h = paper_harness()
    items = {"arc": load_items("arc", 7, files=spec.files_for("arc"))}
    n_gen, n_ll, toks = count_work(h, items, _Counter(None), False)
    chars = sum(
        len(c.template.render_gen(it.question, it.options, c.permutation)) for it in items["arc"] for c in h.gen_configs
    )
    chars_ll = [
        len(c.template.render_stem(it.question) + " " + o)
        for it in items["arc"]
        for c in h.ll_configs
        for o in it.options
    ]
    assert (n_gen, n_ll) == (168, 56)
    assert abs(toks - (chars / 4 + sum(chars_ll) / 4)) <= n_gen + n_ll  # rounding per prompt


def test_params_from_names():
    assert params_from_name("llama3.1-8b") == (8e9, 8e9)
    assert params_from_name("qwen3-30b-a3b") == (30e9, 3e9)
    assert params_from_name("meta-llama/Llama-3.3-70B-Instruct") == (70e9, 70e9)
    assert params_from_name("SmolLM2-135M-Instruct") == (135e6, 135e6)
    assert params_from_name("gemma4-e4b") == (4e9, 4e9)
    assert params_from_name("mixtral-8x7b") == (46.7e9, 12.9e9)
    assert params_from_name("Qwen2.5-Coder-0.5B-Instruct") == (0.5e9, 0.5e9)
    assert params_from_name("my-model") is None


def test_params_from_safetensors_headers(tmp_path):
    for name, shapes in (("a.safetensors", {"w": [3, 4], "b": [4]}), ("b.safetensors", {"e": [10, 2]})):
        header = {k: {"dtype": "F32", "shape": v, "data_offsets": [0, 0]} for k, v in shapes.items()}
        header["__metadata__"] = {"format": "pt"}
        raw = json.dumps(header).encode()
        (tmp_path / name).write_bytes(struct.pack("<Q", len(raw)) + raw)
    assert params_from_folder(tmp_path) == 12 + 4 + 20
    assert params_from_folder(tmp_path / "nothing") is None


def test_floor_is_two_flops_per_parameter_per_token():
    from leaderboard_audit.collect.harness import paper_harness

    w = ModelWork(
        "m",
        10,
        4,
        prefill_tokens=1000,
        max_generated_tokens=500,
        tokens_from="tokenizer",
        params=2e9,
        active_params=1e9,
        params_from="name",
    )
    assert w.flops() == 2 * 1e9 * 1500
    text = report([w], {"arc": 1}, paper_harness(), accelerators={"X": 1.0, "Y": 0.1})
    row = next(x for x in text.splitlines() if x.startswith("| m "))
    assert "| 3.0 s " in row and "| 30.0 s " in row and "2B (1B active)" in row
    unknown = ModelWork("u", 1, 1, 10, 8, "tokenizer", None, None, "unknown")
    text = report([w, unknown], {"arc": 1}, paper_harness(), accelerators={"X": 1.0})
    assert "| 3.0 s+" in text and "'?' / '+'" in text


def test_cli_dry_run_prints_and_writes_nothing(tmp_path, capsys):
    from leaderboard_audit.collect.cli import main

    spec = _spec(tmp_path)
    lines = [
        f'output = "{spec.output}"',
        'engine = "fake"',
        "n_items = 7",
        'benchmarks = ["arc"]',
        "[benchmark_files]",
        f'arc = "{spec.benchmark_files["arc"]}"',
        "[[models]]",
        'name = "a-7b"',
        'path = "fake-a"',
        "[[models]]",
        'name = "b-3b"',
        'path = "fake-b"',
    ]
    (tmp_path / "s.toml").write_text("\n".join(lines) + "\n")
    assert main([str(tmp_path / "s.toml"), "--dry-run", "--accelerator", "h100"]) == 0
    out = capsys.readouterr().out
    assert "2 models x 7 items (arc 7) x 26 configs (24 generation, 2 likelihood)" in out
    assert "H100 floor" in out and "A100 floor" not in out
    assert not Path(spec.output).exists()
    with pytest.raises(SystemExit, match="known: H200"):
        main([str(tmp_path / "s.toml"), "--dry-run", "--accelerator", "TPU"])
    assert main([str(tmp_path / "s.toml"), "--dry-run", "--peak-tflops", "100"]) == 0
    assert "custom floor" in capsys.readouterr().out


def test_tokenizer_proxy_arguments():
    from leaderboard_audit.collect.dryrun import parse_proxies

    assert parse_proxies(["qwen3=gguf:qwen2.5-coder-0.5b-instruct", "gguf:smollm2-135m-instruct", "/t/a=b"]) == [
        ("qwen3", "gguf:qwen2.5-coder-0.5b-instruct"),
        ("", "gguf:smollm2-135m-instruct"),
        ("", "/t/a=b"),
    ]
    assert parse_proxies("Gemma=/tok") == [("gemma", "/tok")] and parse_proxies(None) == []


@pytest.mark.parametrize(
    "axes",
    [
        {"cot": [False, True], "system_prompt": {"none": "", "terse": "Be brief."}},
        {"shots": [0, 2], "cot": [False, True], "design": "product", "cot_max_tokens": 64},
        {"chat_template": [False, True], "system_prompt": {"none": "", "long": "You are careful. " * 5}},
    ],
)
def test_counts_under_declared_axes_equal_what_the_runner_sends(tmp_path, axes):
    """C15: d0b4150 priced the paper's 26 configurations whatever axes the spec declared (28 run
    here for the first spec), and every generation at the decoding's budget (CoT has its own)."""
    spec = _spec(tmp_path, **axes)
    engines = []

    def factory(m):
        engines.append(_Counting(m.path))
        return engines[0]

    root = collect(spec, progress=False, engine_factory=factory)
    (w,), counts, harness = plan(spec)
    e = engines[0]
    collected = json.loads((Path(root) / "grid.json").read_text())["configs"]
    assert len(harness.configs) == len(collected) > 26
    assert (w.gen_prompts, w.ll_requests, w.prefill_tokens, w.max_generated_tokens) == (
        e.gen,
        e.ll,
        e.tokens,
        e.max_new,
    )
    text = report([w], counts, harness, accelerators={"H100": 989.0})
    assert f"x {len(collected)} configs" in text.splitlines()[0]
    assert "generation budgets:" in text.splitlines()[1]
