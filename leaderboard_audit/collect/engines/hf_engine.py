"""transformers engine: the same token-id prompts as vLLM, one prompt at a time.

Generation is a plain greedy loop over the KV cache (argmax, first index on
ties, stop at EOS or ``max_tokens``). Scoring runs the decoder body once and
applies the LM head only to the positions that predict option tokens, so no
full-vocabulary logits are materialized for the stem.
"""

from __future__ import annotations

from collections.abc import Sequence

from . import engine
from .base import cut_at_eos
from .hf_tok import HFTokenizer


@engine("transformers", "cpu", description="Hugging Face transformers", aliases=("hf",))
class HFEngine:
    name = "transformers"

    def __init__(self, model_path: str, *, dtype: str = "float32", threads: int | None = None, **_: object) -> None:
        import torch
        from transformers import AutoModelForCausalLM

        if threads:
            torch.set_num_threads(int(threads))
        self.torch = torch
        self.tokenizer = HFTokenizer(model_path)
        dtype = "float32" if dtype == "auto" else dtype  # a CPU reference engine
        tdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
        self.model = AutoModelForCausalLM.from_pretrained(model_path, torch_dtype=tdtype, attn_implementation="eager")
        self.model.eval()

    def generate(self, prompts: Sequence[Sequence[int]], max_tokens: int, *, seed: int = 1234) -> list[list[int]]:
        torch = self.torch
        torch.manual_seed(seed)
        outs = []
        eos = self.tokenizer.eos_ids
        with torch.inference_mode():
            for p in prompts:
                ids = torch.tensor([list(p)], dtype=torch.long)
                out = self.model(input_ids=ids, use_cache=True, logits_to_keep=1)
                past = out.past_key_values
                gen: list[int] = []
                for _ in range(max_tokens):
                    nxt = int(torch.argmax(out.logits[0, -1].float()))
                    gen.append(nxt)
                    if nxt in eos or len(gen) >= max_tokens:
                        break
                    out = self.model(input_ids=torch.tensor([[nxt]]), past_key_values=past, use_cache=True)
                    past = out.past_key_values
                outs.append(cut_at_eos(gen, eos))
        return outs

    def score(self, requests: Sequence[tuple[Sequence[int], int]]) -> list[list[float]]:
        torch = self.torch
        res = []
        with torch.inference_mode():
            for ids, start in requests:
                n = len(ids)
                keep = n - start + 1  # positions start-1 .. n-1 (last one unused)
                out = self.model(input_ids=torch.tensor([list(ids)]), use_cache=False, logits_to_keep=keep)
                logits = out.logits[0, :-1].float()  # predicts ids[start:]
                lp = torch.log_softmax(logits, dim=-1)
                tgt = torch.tensor(list(ids[start:]))
                res.append(lp.gather(1, tgt[:, None])[:, 0].tolist())
        return res

    def close(self) -> None:
        del self.model
