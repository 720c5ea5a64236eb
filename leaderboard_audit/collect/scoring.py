"""Likelihood normalisations: one small class per value, in a registry a user can extend.

A likelihood configuration scores each option by its token log-probabilities
after the stem (``lps``) and picks the argmax. The normalisation decides how
those become one number (docs/collect.md, "Likelihood normalisations"):

* ``mean_token_logprob`` (default, the paper's collector): mean over the option's tokens;
* ``acc``: the sum (lm-evaluation-harness ``acc``);
* ``acc_norm``: the sum divided by the option's length in characters (lm-evaluation-harness
  ``acc_norm``, which divides by ``len(choice)``).

``register_normalization(MyClass)`` adds one; a grid file then names it with
``decoding.normalization`` (every likelihood template) or a template's ``normalization``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar


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


NORMALIZATIONS: dict[str, Normalization] = {}


def register_normalization(cls: type[Normalization]) -> type[Normalization]:
    NORMALIZATIONS[cls.name] = cls()
    return cls


for _cls in (MeanTokenLogprob, SumLogprob, PerCharLogprob):
    register_normalization(_cls)


def get_normalization(name: str) -> Normalization:
    if name not in NORMALIZATIONS:
        raise ValueError(f"unknown normalization '{name}'; known: {', '.join(NORMALIZATIONS)}")
    return NORMALIZATIONS[name]
