"""A harness widened by declared axes (collect/axes.py), and what grid.json discloses of them.

``with_axes`` adds the design's variants to a harness; ``grid_axes_json`` writes the
grid-level disclosure (``axis_groups`` for every axis, the paper's three among them, and
``axes``: values, reference values, design, rules); ``variant_json`` the per-config fields.
The paper's grid without declared axes writes neither (its grid.json, and so its records'
fingerprints, are unchanged).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .axes import AXIS_NAMES, COT_RULE, EXEMPLAR_SEPARATOR, AxesSpec, axis_groups, key_suffix

# Harness and HarnessConfig (collect/harness.py) are typed Any here: harness.to_grid imports
# this module, and the import graph stays acyclic (tests/checks/test_check_registry.py).
Harness = HarnessConfig = Any


def with_axes(h: Harness, axes: AxesSpec | None) -> Harness:
    """``h`` with the configurations ``axes``' design adds (None or no variant: ``h``)."""
    if axes is None:
        return h
    ref_v = axes.reference
    base = [dataclasses.replace(c, variant=ref_v) for c in h.configs]
    ref = next(c for c in base if c.key == h.reference)
    targets = [c for c in base if c.scoring == "gen"] if axes.design == "product" else [ref]
    if ref.scoring != "gen":
        raise ValueError(
            f"the reference {h.reference!r} is a likelihood configuration; declared axes vary a generation reference"
        )
    extra = [
        dataclasses.replace(c, key=c.key + key_suffix(v, ref_v), variant=v) for c in targets for v in axes.variants()
    ]
    configs = base + extra
    keys = [c.key for c in configs]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicate configuration keys after adding the declared axes")
    return dataclasses.replace(h, configs=configs, axes=axes)


def paper_groups(h: Harness) -> dict[str, list[str]]:
    """The paper's three axes over the reference-variant configurations (AUDITS.md "Axes")."""
    assert h.axes is not None
    rv = h.axes.reference
    cs = [c for c in h.configs if c.variant == rv]
    r = next(c for c in cs if c.key == h.reference)
    return {
        "ordering": [c.key for c in cs if c.scoring == r.scoring and c.template.name == r.template.name],
        "format": [c.key for c in cs if c.scoring == r.scoring and c.ordering == r.ordering],
        "scoring": [c.key for c in cs if c.key == r.key or c.scoring != r.scoring],
    }


def grid_axes_json(h: Harness) -> dict[str, Any]:
    """Grid-level keys: ``axis_groups`` (each with at least one config besides the reference)
    and ``axes`` (the declared values, the reference values, the design and the rules)."""
    axes = h.axes
    assert axes is not None
    groups = {a: g for a, g in paper_groups(h).items() if len(g) > 1}
    groups.update(axis_groups(h.keys, [c.variant for c in h.configs], h.reference, axes.reference))
    design = axes.design if isinstance(axes.design, str) else [v.__dict__ for v in axes.design]
    out: dict[str, Any] = {
        "axis_groups": groups,
        "axes": {
            "values": {a: list(axes.values(a)) for a in AXIS_NAMES if a in axes.declared},
            "reference": {a: getattr(axes.reference, a) for a in AXIS_NAMES},
            "design": design,
            "design_rule": {
                "one_at_a_time": "the paper's configurations at the reference values, plus the reference "
                "configuration with each other value of each axis alone",
                "product": "every generation configuration under every combination of the axes' values; "
                "cloze configurations at the reference values",
            }.get(design if isinstance(design, str) else "", "the listed variants of the reference configuration"),
            "key_rule": "a variant's key is its configuration's key plus |shots=k, |cot=on/off, |chat=on/off, "
            "|system=<name> for each axis it leaves the reference in",
        },
    }
    if any(v > 0 for v in axes.shots):
        out["zero_shot"] = False
    return out


def variant_json(h: Harness, c: HarnessConfig) -> dict[str, Any]:
    """Per generation config: its variant, its budget and, where they apply, the rules."""
    axes = h.axes
    assert axes is not None
    v = c.variant
    out: dict[str, Any] = {"shots": v.shots, "cot": v.cot, "max_tokens": h.max_tokens(c)}
    if v.shots:
        out["exemplars"] = {b: [e.item_id for e in its[: v.shots]] for b, its in sorted(h.exemplars.items())}
        out["exemplar_rule"] = (
            f"the benchmark's first {v.shots} reserved items, each rendered in this template and ordering "
            f"and followed by ' <gold label>'{' as The answer is <label>.' if v.cot else ''}, joined by "
            f"{EXEMPLAR_SEPARATOR!r} before the item"
        )
    if v.cot:
        out["cot_instruction"] = axes.cot_instruction
        out["cot_rule"] = "the instruction on a new line after the item's prompt"
        out["answer_extraction"] = COT_RULE
    if v.chat_template is not None:
        out["chat_template"] = v.chat_template
    if axes.system_prompts:
        out["system_prompt"] = {"name": v.system_prompt, "text": axes.system_text(v)}
        out["system_prompt_rule"] = (
            "a system turn under the chat template; without it, the text and a blank line before the prompt; "
            "empty text: no system prompt"
        )
    return out
