"""Harness axes beyond the paper's grid: few-shot, chain-of-thought, chat template, system prompt.

Spec keys (docs/collect.md, "Wider grids"), each a list whose first value is the
reference value:

```toml
shots = [0, 5]                 # k exemplars: the benchmark's reserved items (at most 5)
cot = [false, true]            # a reasoning instruction, cot_max_tokens, "the answer is X"
chat_template = [false, true]  # raw prompt vs one user turn in the model's chat template
system_prompt = { none = "", terse = "Answer multiple-choice questions." }   # named variants
design = "one_at_a_time"       # | "product" | [{shots = 5, cot = true}, ...]
cot_max_tokens = 256
```

A configuration is a paper configuration (scoring, template, ordering) plus a
:class:`Variant`; the paper's configurations carry the reference variant and keep
their keys. Other variants append ``|<axis>=<value>`` parts to the key. The
design says which variants run: ``one_at_a_time`` (the paper's configurations at
the reference values plus the reference configuration with each other value of
each axis alone), ``product`` (every generation configuration under every
combination; cloze configurations stay at the reference values) or an explicit
list of variants of the reference configuration.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

AXIS_NAMES = ("shots", "cot", "chat_template", "system_prompt")
DESIGNS = ("one_at_a_time", "product")
MAX_SHOTS = 5  # the selection reserves 5 items per benchmark (collect/benchmarks.py)
COT_MAX_TOKENS = 256
MAX_COT_TOKENS = 32_768  # cot_max_tokens: a generation budget no served model exceeds
MAX_COT_INSTRUCTION_CHARS = 4_096
EXEMPLAR_SEPARATOR = "\n\n"  # between exemplars and before the item (collect/prompts.py)
COT_RULE = (
    'the last "the answer is X" (case-insensitive, X one of the labels, optionally after ":" or in '
    "brackets); else the last label the label style's parse_regex finds; no label -> pred null, "
    "scored wrong, answer class other (or empty/refusal)"
)
COT_INSTRUCTION = 'Think step by step, then finish with "The answer is X", where X is the label of your choice.'


@dataclass(frozen=True)
class Variant:
    """Harness settings beyond scoring x template x ordering. ``chat_template`` None: the
    model's own ``[[models]] chat_template``; ``system_prompt`` None: no system prompt."""

    shots: int = 0
    cot: bool = False
    chat_template: bool | None = None
    system_prompt: str | None = None  # a variant name of AxesSpec.system_prompts

    def differs(self, other: Variant) -> tuple[str, ...]:
        return tuple(a for a in AXIS_NAMES if getattr(self, a) != getattr(other, a))


@dataclass(frozen=True)
class AxesSpec:
    """The declared axes, their values (first = reference) and the design."""

    shots: tuple[int, ...] = (0,)
    cot: tuple[bool, ...] = (False,)
    chat_template: tuple[bool, ...] | None = None  # None: the axis is not declared
    system_prompts: dict[str, str] = field(default_factory=dict)  # name -> text ("" = none)
    design: str | tuple[Variant, ...] = "one_at_a_time"
    cot_max_tokens: int = COT_MAX_TOKENS
    cot_instruction: str = COT_INSTRUCTION

    @property
    def declared(self) -> tuple[str, ...]:
        """Axes with more than one value (or an explicit design that varies them)."""
        out = []
        for a in AXIS_NAMES:
            if len(self.values(a)) > 1:
                out.append(a)
        return tuple(out)

    def values(self, axis: str) -> tuple[Any, ...]:
        if axis == "system_prompt":
            return tuple(self.system_prompts) or (None,)
        if axis == "chat_template":
            return self.chat_template or (None,)
        return tuple(getattr(self, axis))

    @property
    def reference(self) -> Variant:
        return Variant(**{a: self.values(a)[0] for a in AXIS_NAMES})

    def variants(self) -> list[Variant]:
        """The non-reference variants of the reference configuration the design runs."""
        ref = self.reference
        if isinstance(self.design, tuple):
            return [v for v in self.design if v != ref]
        if self.design == "product":
            combos = itertools.product(*(self.values(a) for a in AXIS_NAMES))
            return [v for c in combos if (v := Variant(*c)) != ref]
        return [replace(ref, **{a: x}) for a in AXIS_NAMES for x in self.values(a)[1:]]

    def system_text(self, v: Variant) -> str:
        return self.system_prompts.get(v.system_prompt, "") if v.system_prompt is not None else ""


def key_suffix(v: Variant, ref: Variant) -> str:
    """``|shots=5|cot=on|chat=on|system=terse`` for the axes where ``v`` leaves the reference."""
    parts = []
    for a in v.differs(ref):
        x = getattr(v, a)
        if a == "shots":
            parts.append(f"shots={x}")
        elif a == "cot":
            parts.append(f"cot={'on' if x else 'off'}")
        elif a == "chat_template":
            parts.append(f"chat={'on' if x else 'off'}")
        else:
            parts.append(f"system={x}")
    return "".join("|" + p for p in parts)


def _bool_list(name: str, value: Any) -> tuple[bool, ...]:
    vals = value if isinstance(value, list) else [value]
    if not vals or not all(isinstance(x, bool) for x in vals) or len(set(vals)) != len(vals):
        raise ValueError(f"'{name}' must be a list of distinct true/false values, e.g. [false, true]; got {value!r}")
    return tuple(vals)


def axes_from_obj(obj: dict[str, Any]) -> AxesSpec | None:
    """The axes a spec (or grid file) declares, validated; None when it declares none."""
    keys = {"shots", "cot", "chat_template", "system_prompt", "design", "cot_max_tokens", "cot_instruction"}
    if not keys & set(obj):
        return None
    shots = obj.get("shots", [0])
    shots = shots if isinstance(shots, list) else [shots]
    if not shots or not all(type(k) is int and 0 <= k <= MAX_SHOTS for k in shots) or len(set(shots)) != len(shots):
        raise ValueError(
            f"'shots' must be a list of distinct whole numbers 0..{MAX_SHOTS} (the reserved items per "
            f"benchmark); got {obj.get('shots')!r}"
        )
    cot = _bool_list("cot", obj.get("cot", [False]))
    chat = _bool_list("chat_template", obj["chat_template"]) if "chat_template" in obj else None
    sp = obj.get("system_prompt", {})
    if not isinstance(sp, dict) or not all(isinstance(k, str) and k and isinstance(t, str) for k, t in sp.items()):
        raise ValueError('\'system_prompt\' must be a table of named variants, e.g. { none = "", terse = "..." }')
    for name in sp:
        if not name.replace("_", "").replace("-", "").isalnum():
            raise ValueError(f"system_prompt variant name {name!r}: use letters, digits, - and _ (it is part of a key)")
    budget = obj.get("cot_max_tokens", COT_MAX_TOKENS)
    if type(budget) is not int or not 1 <= budget <= MAX_COT_TOKENS:
        raise ValueError(f"'cot_max_tokens' must be a whole number 1..{MAX_COT_TOKENS:,}; got {budget!r}")
    instruction = obj.get("cot_instruction", COT_INSTRUCTION)
    if not isinstance(instruction, str) or not instruction.strip() or len(instruction) > MAX_COT_INSTRUCTION_CHARS:
        raise ValueError(
            f"the key 'cot_instruction' must be a non-empty string of at most {MAX_COT_INSTRUCTION_CHARS:,} "
            f"characters (the text after each CoT prompt); got {type(instruction).__name__} "
            f"({ascii(instruction)[:60]})"
        )
    spec = AxesSpec(
        tuple(shots),
        cot,
        chat,
        dict(sp),
        "one_at_a_time",
        budget,
        instruction,
    )
    return replace(spec, design=_design(obj.get("design", "one_at_a_time"), spec))


def _design(value: Any, spec: AxesSpec) -> str | tuple[Variant, ...]:
    if isinstance(value, str):
        if value not in DESIGNS:
            raise ValueError(f"design = {value!r}: choose one of {', '.join(DESIGNS)} or a list of variants")
        return value
    if not isinstance(value, list) or not value:
        raise ValueError('\'design\' must be "one_at_a_time", "product" or a non-empty list of variants')
    ref, out = spec.reference, []
    for n, entry in enumerate(value):
        if not isinstance(entry, dict) or set(entry) - set(AXIS_NAMES):
            raise ValueError(f"design[{n}] must be a table of axis values ({', '.join(AXIS_NAMES)}); got {entry!r}")
        for a, x in entry.items():
            if x not in spec.values(a):
                raise ValueError(f"design[{n}]: {a} = {x!r} is not one of the declared values {list(spec.values(a))}")
        out.append(replace(ref, **entry))
    return tuple(out)


def axis_groups(keys: Sequence[str], variants: Sequence[Variant], ref_key: str, ref: Variant) -> dict[str, list[str]]:
    """For each new axis: the reference key plus the configs whose variant leaves the
    reference in that axis alone (configs are given with their variants)."""
    out: dict[str, list[str]] = {}
    for key, v in zip(keys, variants):
        d = v.differs(ref)
        if len(d) == 1 and key.startswith(ref_key + "|"):
            out.setdefault(d[0], [ref_key]).append(key)
    return out
