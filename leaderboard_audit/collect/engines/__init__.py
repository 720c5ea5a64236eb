"""Engines: vLLM (default), transformers, an OpenAI-compatible API client, and a deterministic fake for tests."""

from __future__ import annotations

from typing import Any

ENGINES = ("vllm", "transformers", "fake", "openai")


def make_engine(name: str, model_path: str, *, dtype: str = "auto", options: dict[str, Any] | None = None):
    """Load ``model_path`` into the named engine (imports torch/vLLM only here)."""
    options = dict(options or {})
    if name == "vllm":
        from .vllm_engine import VLLMEngine

        return VLLMEngine(model_path, dtype=dtype, **options)
    if name in ("transformers", "hf"):
        from .hf_engine import HFEngine

        return HFEngine(model_path, dtype=dtype, **options)
    if name == "openai":
        from .openai_engine import OpenAIEngine

        return OpenAIEngine(model_path, dtype=dtype, **options)
    if name == "fake":
        from .fake import FakeEngine

        return FakeEngine(model_path, **options)
    raise ValueError(f"unknown engine {name!r}; choose one of {', '.join(ENGINES)}")
