"""Engines: vLLM (default), transformers, an OpenAI-compatible API client, and a deterministic fake for tests.

Each engine is declared at its class with ``@engine(name, placement, ...)`` (as
lm-evaluation-harness's ``@register_model``): its placement (``"gpu"``: the Ray pool gives
each actor GPUs when the cluster has them; ``"cpu"``; ``"http"``: a client of a server
elsewhere), what it loads, its aliases. ``ENGINES`` is the engines'
:class:`~leaderboard_audit.registry.Registry` of :class:`EngineSpec`; listing it imports the
bundled engine modules (``BUNDLED_MODULES``), which import only the standard library at
module level: torch, vLLM and transformers load when an engine is made. Third-party engines
arrive through the ``leaderboard_audit.engines`` entry point group, naming a class declared
with the same decorator (or an ``EngineSpec``).
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable
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


def engine(
    name: str,
    placement: str,
    *,
    description: str = "",
    aliases: tuple[str, ...] = (),
    local_weights: bool = True,
    takes_dtype: bool = True,
    cpu_binds: bool = False,
    tokenizer: str | None = None,
) -> Callable[[type], type]:
    """Declare the decorated class an engine: ``Class(model_path, [dtype=...,] **options)``
    (collect/engines/base.py, ``Engine``). ``tokenizer``: a class of the same module (its
    name) or ``"module:Class"``, a tokenizer that needs no model (dry runs). The class gets
    ``engine_spec`` and ``engine_aliases``; the registry reads them."""
    if placement not in PLACEMENTS:
        raise ValueError(f"engine {name!r}: placement {placement!r} is not one of {PLACEMENTS}")

    def declare(cls: type) -> type:
        tok = tokenizer if tokenizer is None or ":" in tokenizer else f"{cls.__module__}:{tokenizer}"
        cls.engine_spec = EngineSpec(  # type: ignore[attr-defined]
            name,
            placement,
            f"{cls.__module__}:{cls.__qualname__}",
            description,
            local_weights=local_weights,
            takes_dtype=takes_dtype,
            cpu_binds=cpu_binds,
            tokenizer=tok,
        )
        cls.engine_aliases = tuple(aliases)  # type: ignore[attr-defined]
        return cls

    return declare


def _declared(origin: str, obj: Any) -> tuple[EngineSpec, tuple[str, ...]]:
    """(spec, aliases) of an ``@engine`` class, or of an ``EngineSpec``."""
    spec, aliases = getattr(obj, "engine_spec", obj), tuple(getattr(obj, "engine_aliases", ()))
    if not isinstance(spec, EngineSpec) or spec.placement not in PLACEMENTS:
        raise ValueError(f"{origin} is neither an @engine class nor an EngineSpec with a placement in {PLACEMENTS}")
    return spec, aliases


def _from_entry_point(ep: Any) -> tuple[str, EngineSpec, tuple[str, ...]]:
    from ...registry import RegistryError

    try:
        spec, aliases = _declared(f"entry point {ENTRY_POINT_GROUP}:{ep.name} ({ep.value})", ep.load())
    except Exception as exc:
        raise RegistryError(str(exc) if isinstance(exc, ValueError) else f"{ep.value}: {exc}") from None
    return spec.name, spec, aliases


#: the bundled engines' modules, in the order ``--engine`` lists them (the first is the default)
BUNDLED_MODULES = ("vllm_engine", "hf_engine", "fake", "openai_engine")


def _bundled(reg: Registry[EngineSpec]) -> None:
    import importlib

    for mod in BUNDLED_MODULES:
        module = importlib.import_module(f"{__name__}.{mod}")
        for obj in vars(module).values():
            if isinstance(obj, type) and obj.__module__ == module.__name__ and "engine_spec" in vars(obj):
                spec, aliases = _declared(f"{module.__name__}:{obj.__qualname__}", obj)
                reg.register(spec.name, spec, aliases=aliases, origin=module.__name__)


ENGINES: Registry[EngineSpec] = Registry(
    "engine", group=ENTRY_POINT_GROUP, bundled=_bundled, from_entry_point=_from_entry_point
)
DEFAULT_ENGINE = "vllm"


def engine_spec(name: str) -> EngineSpec:
    try:
        return ENGINES[name]
    except KeyError:
        raise ValueError(f"unknown engine {name!r}; choose one of {', '.join(ENGINES.names())}") from None


def make_engine(name: str, model_path: str, *, dtype: str = "auto", options: dict[str, Any] | None = None):
    """Load ``model_path`` into the named engine (imports torch/vLLM only here)."""
    return engine_spec(name).make(model_path, dtype=dtype, options=options)
