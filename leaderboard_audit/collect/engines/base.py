"""What an engine must do: greedy generation and prompt scoring over token ids.

Prompts are tokenized once, by the collector, with the model's Hugging Face
tokenizer, and handed to every engine as token ids, so the vLLM and the
transformers engines see exactly the same inputs.
"""

from __future__ import annotations

from typing import Protocol
from collections.abc import Sequence


class Tokenizer(Protocol):
    eos_ids: frozenset[int]

    def encode(self, text: str) -> list[int]: ...
    def decode(self, ids: Sequence[int]) -> str: ...
    def chat(self, user_text: str) -> list[int]: ...


class Engine(Protocol):
    name: str
    tokenizer: Tokenizer

    def generate(self, prompts: Sequence[Sequence[int]], max_tokens: int, *, seed: int = 1234) -> list[list[int]]:
        """Greedy continuations (token ids, at most ``max_tokens``), one per prompt."""

    def score(self, requests: Sequence[tuple[Sequence[int], int]]) -> list[list[float]]:
        """For (ids, start): log p(ids[t] | ids[:t]) for t in start..len(ids)-1."""

    def close(self) -> None: ...


def cut_at_eos(ids: Sequence[int], eos: frozenset[int]) -> list[int]:
    out = []
    for t in ids:
        if t in eos:
            break
        out.append(int(t))
    return out
