"""Likelihood normalisations (acc / acc_norm / per-token mean) and chat-template kwargs from the spec (issue 14.5-6)."""

from __future__ import annotations

import json

import pytest
from helpers.collect import _spec

from leaderboard_audit.collect.engines.fake import ByteTokenizer
from leaderboard_audit.collect.harness import harness_from_obj
from leaderboard_audit.collect.run import collect
from leaderboard_audit.collect.scoring import (
    NORMALIZATIONS,
    Normalization,
    get_normalization,
    register_normalization,
)


def test_hand_computed_scores():
    lps = [-1.0, -2.0, -0.5]
    assert get_normalization("mean_token_logprob").score(lps, "abcdef") == pytest.approx(-3.5 / 3)
    assert get_normalization("acc").score(lps, "abcdef") == pytest.approx(-3.5)
    assert get_normalization("acc_norm").score(lps, "abcdef") == pytest.approx(-3.5 / 6)
    with pytest.raises(ValueError, match="unknown normalization 'nope'"):
        get_normalization("nope")


def test_normalisations_change_the_decision():
    # option 0: 1 token at -1.0; option 1: 4 tokens at -0.5 each (longer text)
    s0, s1 = ([-1.0], "a"), ([-0.5] * 4, "abcdefghij")
    pick = {
        n: max((0, 1), key=lambda j, n=n: get_normalization(n).score(*(s0, s1)[j]))
        for n in ("mean_token_logprob", "acc", "acc_norm")
    }
    assert pick == {"mean_token_logprob": 1, "acc": 0, "acc_norm": 1}


def test_a_user_registered_normalization(tmp_path):
    @register_normalization
    class Last(Normalization):
        name = "last_token"
        rule = "log-probability of the option's last token"
        unit = "nats"

        def score(self, lps, option):
            return lps[-1]

    try:
        h = harness_from_obj(
            {
                "extends": "paper",
                "templates": {"cloze_last": {"scoring": "ll", "text": "[q]\nAnswer:", "normalization": "last_token"}},
            }
        )
        cfg = next(c for c in h.to_grid().configs if c.key == "ll|cloze_last")
        assert cfg.extra["normalization"] == "last_token" and cfg.extra["margin"].endswith("(nats)")
    finally:
        NORMALIZATIONS.pop("last_token")


def test_grid_with_acc_norm_collects_and_discloses(tmp_path):
    grid = tmp_path / "grid.toml"
    grid.write_text(
        'extends = "paper"\n[templates.cloze_accnorm]\nscoring = "ll"\ntext = "[q]\\nAnswer:"\n'
        'normalization = "acc_norm"\n'
    )
    spec = _spec(tmp_path)
    spec.write_text(f'grid = "{grid}"\n' + spec.read_text())
    root = collect(spec, progress=False)
    g = json.loads((root / "grid.json").read_text())
    by_key = {c["key"]: c for c in g["configs"]}
    assert by_key["ll|cloze_accnorm"]["normalization"] == "acc_norm"
    assert by_key["ll|cloze_plain"]["normalization"] == "mean_token_logprob"
    raw = json.loads((root / "_raw" / "arc" / "two.jsonl").read_text().splitlines()[0])
    line = json.loads((root / "arc" / "two.jsonl").read_text().splitlines()[0])
    sc = raw["ll_score"]["ll|cloze_accnorm"]
    assert line["pred"]["ll|cloze_accnorm"] == max(range(4), key=lambda j: (sc[j], -j))
    assert set(raw["ll_mean_logprob"]) == {"ll|cloze_plain", "ll|cloze_question"}


def test_bad_normalization_in_a_grid_file(tmp_path, capsys):
    from leaderboard_audit.collect.cli import main

    grid = tmp_path / "grid.toml"
    grid.write_text('[decoding]\nnormalization = "softmax"\n')
    spec = _spec(tmp_path)
    spec.write_text(f'grid = "{grid}"\n' + spec.read_text())
    assert main([str(spec)]) == 4
    assert "unknown normalization 'softmax'" in capsys.readouterr().err


def test_chat_template_kwargs_reach_the_template(tmp_path):
    spec = _spec(tmp_path, models=["c"])
    spec.write_text(spec.read_text() + "chat_template = true\n[models.chat_template_kwargs]\nenable_thinking = false\n")
    seen = []

    from leaderboard_audit.collect.engines.fake import FakeEngine

    class Spy(FakeEngine):
        def generate(self, prompts, max_tokens, *, seed=1234):
            seen.extend(self.tokenizer.decode(p) for p in prompts[:1])
            return super().generate(prompts, max_tokens, seed=seed)

    root = collect(spec, progress=False, engine_factory=lambda m: Spy(m.path))
    assert seen and all("<enable_thinking=False><assistant>" in s for s in seen)
    g = json.loads((root / "grid.json").read_text())
    assert g["collector"]["models"]["c"]["chat_template_kwargs"] == {"enable_thinking": False}
    assert ByteTokenizer().chat("x") == ByteTokenizer().encode("<user>x<assistant>")
