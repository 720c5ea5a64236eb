"""The collection spec's ``[judge]`` table (docs/collect.md, "Judge stage").

Apart from collect/judge.py so that spec.py reads the table without importing the stage
(which imports the collector's run, and so spec.py back).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .judge_prompts import JUDGE_PROMPTS
from .model_spec import models_from_list

REFERENCE = "reference"  # the baseline is the benchmark's best answer (its gold option)
UNPARSED_RULES = ("tie", "drop")
STAGE_VERSION = 1  # bump when the prompts' assembly or the files' layout change
POSITIONS = ("baseline-first", "model-first")  # Arena-Hard's game 1 and game 2


@dataclass
class JudgeSpec:
    judges: list[Any]  # ModelSpec
    output: Path
    baseline: str = REFERENCE
    prompts: list[str] = dataclasses.field(default_factory=lambda: ["arena-hard"])
    benchmark: str = "truthfulqa"
    n_items: int = 20
    answer_max_tokens: int = 256
    judge_max_tokens: int = 256
    unparsed: str = "tie"


JUDGE_KEYS = {
    "models",
    "output",
    "baseline",
    "prompts",
    "benchmark",
    "n_items",
    "answer_max_tokens",
    "judge_max_tokens",
    "unparsed",
}


def judge_from_obj(obj: Any, rel: Callable[[str], Path], models: list[Any], output: Path) -> JudgeSpec:
    """The spec's ``[judge]`` table; ``models`` are the spec's models under test."""
    if not isinstance(obj, dict):
        raise ValueError("'judge' must be a table ([judge])")  # noqa: TRY004
    unknown = set(obj) - JUDGE_KEYS
    if unknown:
        raise ValueError(
            f"unknown [judge] key(s) {', '.join(repr(k) for k in sorted(unknown))}; known: {', '.join(sorted(JUDGE_KEYS))}"
        )
    judges = models_from_list(
        obj.get("models"),
        rel,
        what="judge",
        empty="the [judge] table names no judge: add a [[judge.models]] entry (name, path)",
    )
    baseline = str(obj.get("baseline", REFERENCE))
    under_test = [m.name for m in models]
    if baseline != REFERENCE and baseline not in under_test:
        raise ValueError(
            f"baseline = '{baseline}' is neither 'reference' nor a model of the spec ({', '.join(under_test)})"
        )
    if baseline != REFERENCE and len(under_test) < 2:
        raise ValueError(f"baseline = '{baseline}' leaves no other model to judge")
    prompts = list(obj.get("prompts") or ["arena-hard"])
    for p in prompts:
        if p not in JUDGE_PROMPTS:
            raise ValueError(f"judge prompt '{p}' is not known; known: {', '.join(JUDGE_PROMPTS)}")
    if len(set(prompts)) != len(prompts):
        raise ValueError("a judge prompt appears twice in 'prompts'")
    unparsed = str(obj.get("unparsed", "tie"))
    if unparsed not in UNPARSED_RULES:
        raise ValueError(f"unparsed = '{unparsed}'; known: {', '.join(UNPARSED_RULES)}")
    spec = JudgeSpec(
        judges=judges,
        output=rel(str(obj["output"])) if "output" in obj else output / "_judge",
        baseline=baseline,
        prompts=prompts,
        benchmark=str(obj.get("benchmark", "truthfulqa")),
        n_items=int(obj.get("n_items", 20)),
        answer_max_tokens=int(obj.get("answer_max_tokens", 256)),
        judge_max_tokens=int(obj.get("judge_max_tokens", 256)),
        unparsed=unparsed,
    )
    for key in ("n_items", "answer_max_tokens", "judge_max_tokens"):
        if getattr(spec, key) < 1:
            raise ValueError(f"'{key}' in [judge] must be at least 1")
    return spec
