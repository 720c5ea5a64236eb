"""The Hugging Face tokenizer wrapper both real engines share."""

from __future__ import annotations

import json
from pathlib import Path
from collections.abc import Sequence


class HFTokenizer:
    def __init__(self, model_path: str) -> None:
        try:
            from transformers import AutoTokenizer
        except ImportError:
            from ..errors import CollectError

            raise CollectError(
                model_path,
                "this engine tokenizes with the model's Hugging Face tokenizer, and transformers is not installed",
                fix="pip install 'leaderboard-audit[collect]' (or pip install 'transformers>=4.45')",
            ) from None

        self.tok = AutoTokenizer.from_pretrained(model_path)
        eos: set[int] = set()
        if self.tok.eos_token_id is not None:
            eos.add(int(self.tok.eos_token_id))
        gc = Path(model_path) / "generation_config.json"
        if gc.exists():
            e = json.loads(gc.read_text()).get("eos_token_id")
            eos.update([e] if isinstance(e, int) else (e or []))
        elif not Path(model_path).exists():  # a hub id: its generation config's stop tokens too
            try:
                from transformers import GenerationConfig

                e = GenerationConfig.from_pretrained(model_path).eos_token_id
                eos.update([e] if isinstance(e, int) else (e or []))
            except (OSError, ValueError):
                pass
        self.eos_ids = frozenset(eos)
        # A folder converted from GGUF says whether the model wants a BOS token.
        meta = Path(model_path) / "leaderboard-audit.json"
        want = json.loads(meta.read_text()).get("add_bos_token") if meta.exists() else None
        self.bos = self.tok.bos_token_id if want and self.tok.bos_token_id is not None else None

    def encode(self, text: str) -> list[int]:
        ids = list(self.tok(text, add_special_tokens=True)["input_ids"])
        if self.bos is not None and (not ids or ids[0] != self.bos):
            ids.insert(0, self.bos)
        return ids

    def decode(self, ids: Sequence[int]) -> str:
        return self.tok.decode(list(ids), skip_special_tokens=True)

    def chat(self, user_text: str, system: str | None = None, **template_kwargs: object) -> list[int]:
        """One user turn (after a system turn when ``system``) in the model's chat template;
        ``template_kwargs`` (the spec's ``chat_template_kwargs``, e.g. ``enable_thinking=False``)
        go to the template."""
        if not getattr(self.tok, "chat_template", None):
            raise ValueError("chat_template = true but the tokenizer has no chat template")
        turns = [{"role": "system", "content": system}] if system else []
        text = self.tok.apply_chat_template(
            [*turns, {"role": "user", "content": user_text}],
            tokenize=False,
            add_generation_prompt=True,
            **template_kwargs,
        )
        return list(self.tok(text, add_special_tokens=False)["input_ids"])
