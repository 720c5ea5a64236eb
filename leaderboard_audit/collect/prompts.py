"""Generation prompts under a variant (collect/axes.py) and chain-of-thought answer extraction.

* few-shot: ``k`` exemplars (the benchmark's reserved items, in order) rendered in the
  configuration's own template and ordering, each followed by its answer (`` <label>``;
  under CoT `` The answer is <label>.``) and a blank line, then the item;
* CoT: the reasoning instruction on a new line after the item's prompt;
* system prompt: a system turn under the chat template, else its text and a blank line
  before the prompt;
* chat template: the whole text (exemplars included) as one user turn.

CoT answers are read by :func:`extract_cot`: the last "the answer is X" (case-insensitive,
X a label of the style, optionally in brackets), else the last label anywhere; no label:
class ``other`` (or ``empty``/``refusal``), pred null, scored wrong.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .answers import _REFUSAL
from .axes import EXEMPLAR_SEPARATOR, AxesSpec, Variant
from .benchmarks import Item
from .harness import HarnessConfig, LabelStyle


def gold_label(cfg: HarnessConfig, item: Item) -> str:
    """The label under which ``cfg`` shows ``item``'s gold option."""
    assert cfg.permutation is not None and cfg.template.label_style is not None
    return cfg.template.label_style.labels[list(cfg.permutation).index(item.gold)]


def gen_text(cfg: HarnessConfig, item: Item, exemplars: Sequence[Item], axes: AxesSpec | None) -> str:
    """The prompt text of ``item`` under ``cfg`` (before the chat template and system prompt)."""
    assert cfg.permutation is not None
    v = cfg.variant
    main = cfg.template.render_gen(item.question, item.options, cfg.permutation)
    if v.shots:
        if len(exemplars) < v.shots:
            raise ValueError(f"{cfg.key}: {v.shots} shots asked, the benchmark reserves {len(exemplars)} items")
        shots = [
            cfg.template.render_gen(e.question, e.options, cfg.permutation) + answer_text(cfg, e)
            for e in exemplars[: v.shots]
        ]
        main = EXEMPLAR_SEPARATOR.join([*shots, main])
    if v.cot:
        assert axes is not None
        main += "\n" + axes.cot_instruction
    return main


def answer_text(cfg: HarnessConfig, e: Item) -> str:
    label = gold_label(cfg, e)
    return f" The answer is {label}." if cfg.variant.cot else f" {label}"


def prompt_ids(
    tok: Any,
    text: str,
    chat: bool,
    system: str = "",
    chat_kwargs: dict[str, Any] | None = None,
) -> list[int]:
    """Token ids of a generation prompt: raw (system text first) or one chat user turn."""
    if not chat:
        return tok.encode(system + EXEMPLAR_SEPARATOR + text if system else text)
    kw = dict(chat_kwargs or {})
    if system:
        kw["system"] = system
    return tok.chat(text, **kw) if kw else tok.chat(text)


def uses_chat(v: Variant, model_chat_template: bool) -> bool:
    return model_chat_template if v.chat_template is None else v.chat_template


def _stated_re(style: LabelStyle) -> re.Pattern[str]:
    labels = "|".join(re.escape(x) for x in style.labels)
    return re.compile(rf"the answer is\s*[:\-]?\s*[\(\[\*]*\s*({labels})\b", re.IGNORECASE)


def extract_cot(style: LabelStyle, output: str) -> tuple[int | None, str]:
    """(display slot, how): ``stated`` (the last "the answer is X"), ``last_label`` (the
    last label the style's regex finds) or ``none``."""
    stated = list(_stated_re(style).finditer(output))
    if stated:
        x = stated[-1].group(1)
        x = x.upper() if style.uppercase else x
        if x in style.labels:
            return style.labels.index(x), "stated"
    s = output.upper() if style.uppercase else output
    found = [m.group(1) for m in re.finditer(style.regex, s) if m.group(1) in style.labels]
    if found:
        return style.labels.index(found[-1]), "last_label"
    return None, "none"


def cot_answer(cfg: HarnessConfig, output: str) -> tuple[int | None, str]:
    """(original option index or None, answer class) of a CoT generation."""
    style = cfg.template.label_style
    assert style is not None and cfg.permutation is not None
    slot, _ = extract_cot(style, output)
    if slot is None or slot >= len(cfg.permutation):
        if not output.strip():
            return None, "empty"
        return None, "refusal" if _REFUSAL.search(output) else "other"
    return cfg.permutation[slot], "letter"
