"""Likelihood normalisations: one small class per value, in a registry a user can extend.

A likelihood configuration scores each option by its token log-probabilities
after the stem (``lps``) and picks the argmax. The normalisation decides how
those become one number (docs/collect.md, "Likelihood normalisations"):

* ``mean_token_logprob`` (default, the paper's collector): mean over the option's tokens;
* ``acc``: the sum (lm-evaluation-harness ``acc``);
* ``acc_norm``: the sum divided by the option's length in characters (lm-evaluation-harness
  ``acc_norm``, which divides by ``len(choice)``).

``NORMALIZATIONS`` is their :class:`~leaderboard_audit.registry.Registry`;
``register_normalization(MyClass)`` adds one (or a package's entry point in the
``leaderboard_audit.normalizations`` group, the value a ``Normalization`` subclass); a grid file then names it with
``decoding.normalization`` (every likelihood template) or a template's ``normalization``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

from ..registry import Registry


class Normalization:
    """Turns an option's token log-probabilities into its score (higher is better)."""

    name: ClassVar[str]
    rule: ClassVar[str]
    unit: ClassVar[str]

    def score(self, lps: Sequence[float], option: str) -> float:
        raise NotImplementedError


class MeanTokenLogprob(Normalization):
    name = "mean_token_logprob"
    rule = (
        "mean over the option's tokens of log p(token | stem, previous option tokens); option tokens = "
        "tokens of stem+prefix+option past the tokens of stem"
    )
    unit = "nats per token"

    def score(self, lps: Sequence[float], option: str) -> float:
        return math.fsum(lps) / len(lps) if lps else float("-inf")


class SumLogprob(Normalization):
    name = "acc"
    rule = "sum over the option's tokens of log p(token | stem, previous option tokens) (lm-eval acc)"
    unit = "nats"

    def score(self, lps: Sequence[float], option: str) -> float:
        return math.fsum(lps) if lps else float("-inf")


class PerCharLogprob(Normalization):
    name = "acc_norm"
    rule = "sum of the option's token log-probabilities divided by len(option) in characters (lm-eval acc_norm)"
    unit = "nats per character"

    def score(self, lps: Sequence[float], option: str) -> float:
        return math.fsum(lps) / max(1, len(option)) if lps else float("-inf")


def _from_entry_point(ep: Any) -> tuple[str, Normalization, tuple[str, ...]]:
    from ..registry import RegistryError

    origin = f"entry point {ENTRY_POINT_GROUP}:{ep.name} ({ep.value})"
    try:
        obj = ep.load()
    except Exception as exc:  # a broken third-party package: name it
        raise RegistryError(f"{origin} failed to load: {type(exc).__name__}: {exc}") from None
    norm = obj() if isinstance(obj, type) else obj
    if not isinstance(norm, Normalization) or not getattr(norm, "name", ""):
        raise RegistryError(f"{origin} is not a leaderboard_audit.collect.scoring.Normalization with a name")
    return norm.name, norm, ()


ENTRY_POINT_GROUP = "leaderboard_audit.normalizations"
NORMALIZATIONS: Registry[Normalization] = Registry(
    "normalization", group=ENTRY_POINT_GROUP, from_entry_point=_from_entry_point
)


def register_normalization(cls: type[Normalization]) -> type[Normalization]:
    NORMALIZATIONS.register(cls.name, cls())
    return cls


for _cls in (MeanTokenLogprob, SumLogprob, PerCharLogprob):
    register_normalization(_cls)


def get_normalization(name: str) -> Normalization:
    """The normalisation named exactly ``name`` (names are written into config keys, so
    no other spelling is accepted)."""
    if name not in NORMALIZATIONS.names():
        raise ValueError(f"unknown normalization '{name}'; known: {', '.join(NORMALIZATIONS.names())}")
    return NORMALIZATIONS[name]
