"""A deterministic stand-in engine (no torch): bytes as tokens, hashed 'model'.

It lets the orchestration (chunks, resume, atomic writes, progress) be tested
in the main environment. Its answers are a pure function of the prompt.
"""

from __future__ import annotations

import hashlib
import os
import struct
import time
from collections.abc import Sequence

from . import engine
from .base import cut_at_eos

EOS = 0
COT_BUDGET = 32  # from this many new tokens on, the fake reasons before it answers
COT_TEXTS = (
    " Option {y} looks close, but the facts fit {x}. The answer is {x}.",
    " Step by step: {y} fails, so the answer is ({x}).",
    " Between {y} and {x}, I pick {x}",
    " I need more context to decide.",
)


class ByteTokenizer:
    eos_ids = frozenset({EOS})

    def encode(self, text: str) -> list[int]:
        return [1] + [b + 2 for b in text.encode("utf-8")]  # 1 = BOS

    def decode(self, ids: Sequence[int]) -> str:
        return bytes(t - 2 for t in ids if t >= 2).decode("utf-8", errors="replace")

    def chat(self, user_text: str, system: str | None = None, **template_kwargs: object) -> list[int]:
        opts = "".join(f"<{k}={v}>" for k, v in sorted(template_kwargs.items()))
        turn = f"<system>{system}" if system else ""
        return self.encode(turn + "<user>" + user_text + opts + "<assistant>")


def _h(*parts: object) -> bytes:
    return hashlib.sha256(repr(parts).encode()).digest()


@engine(
    "fake",
    "cpu",
    description="deterministic fake (tests)",
    local_weights=False,
    takes_dtype=False,
    tokenizer="ByteTokenizer",
)
class FakeEngine:
    name = "fake"

    def __init__(self, model_path: str, *, delay: float = 0.0, crash_after: int | None = None) -> None:
        self.model = model_path
        self.tokenizer = ByteTokenizer()
        self.delay = delay
        self.calls = 0
        env = os.environ.get("LEADERBOARD_AUDIT_FAKE_CRASH_AFTER")
        self.crash_after = crash_after if crash_after is not None else (int(env) if env else None)
        #: crash (as above) only while this file does not exist, creating it first: one process
        #: of all that share the environment dies once (a killed actor that is then restarted)
        self.crash_once = os.environ.get("LEADERBOARD_AUDIT_FAKE_CRASH_ONCE")

    def _tick(self) -> None:
        self.calls += 1
        if self.delay:
            time.sleep(self.delay)
        if self.crash_after is not None and self.calls > self.crash_after:
            if self.crash_once:
                try:
                    fd = os.open(self.crash_once, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                except FileExistsError:
                    return  # some process already died once
                os.close(fd)
            os._exit(137)  # like SIGKILL: no cleanup, no flush

    def generate(self, prompts: Sequence[Sequence[int]], max_tokens: int, *, seed: int = 1234) -> list[list[int]]:
        self._tick()
        outs = []
        for p in prompts:
            d = _h(self.model, tuple(p))
            choice = d[0] % 7
            text = [" A", " B", " C", " D", " 3", " the answer", "\n(B)"][choice]
            if max_tokens >= COT_BUDGET:  # a reasoning budget: a reasoned answer (or none)
                text = COT_TEXTS[d[1] % len(COT_TEXTS)].format(x="ABCD"[d[2] % 4], y="ABCD"[d[3] % 4])
            ids = self.tokenizer.encode(text)[1:] + [EOS, 5, 6]
            outs.append(cut_at_eos(ids, self.tokenizer.eos_ids)[:max_tokens])
        return outs

    def score(self, requests: Sequence[tuple[Sequence[int], int]]) -> list[list[float]]:
        self._tick()
        out = []
        for ids, start in requests:
            lps = []
            for t in range(start, len(ids)):
                d = _h(self.model, tuple(ids[max(0, t - 8) : t + 1]))
                lps.append(-struct.unpack("<I", d[:4])[0] / 2**32 * 5.0)
            out.append(lps)
        return out

    def close(self) -> None:
        pass
