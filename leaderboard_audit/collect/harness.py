"""The harness grid as data: templates, label styles, orderings, prompts and parsing.

The paper's grid (its Tables 4 and 5) is :func:`paper_harness`; any other grid
comes from a TOML or JSON file (:func:`load_harness`). Everything here is pure
Python so the unit tests run without torch or vLLM.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Sequence

from ..records.grid import DEFAULT_REFERENCE, PAPER_ORDERINGS, Config, Grid
from .axes import AxesSpec, Variant

# --------------------------------------------------------------------------- labels


@dataclass(frozen=True)
class LabelStyle:
    """How option labels are drawn, and the regular expression that reads an answer back."""

    name: str
    labels: tuple[str, ...]  # label text for display slots 0..3 (A, B, ... or 1, 2, ...)
    fmt: str  # how one option line is drawn, {label} {text}
    regex: str  # searched in the (optionally uppercased) output; group 1 = label
    uppercase: bool  # uppercase the output before matching

    def line(self, slot: int, text: str) -> str:
        return self.fmt.format(label=self.labels[slot], text=text)

    def parse(self, output: str) -> int | None:
        """Display slot named by ``output`` (first match), or None when nothing matches."""
        s = output.upper() if self.uppercase else output
        m = re.search(self.regex, s)
        if m is None:
            return None
        try:
            return self.labels.index(m.group(1))
        except ValueError:  # a regex wider than the labels shown
            return None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "labels": list(self.labels),
            "line_format": self.fmt,
            "parse_regex": self.regex,
            "parse_uppercase": self.uppercase,
            "parse_rule": "first match of parse_regex (re.search) in the generated text"
            + (" uppercased" if self.uppercase else "")
            + "; no match -> pred null, scored wrong",
        }


LETTERS = ("A", "B", "C", "D")
DIGITS = ("1", "2", "3", "4")
LETTER_RE = r"\b([A-D])\b"
DIGIT_RE = r"\b([1-4])\b"

LABEL_STYLES: dict[str, LabelStyle] = {
    "letter_dot": LabelStyle("letter_dot", LETTERS, "{label}. {text}", LETTER_RE, True),
    "letter_paren": LabelStyle("letter_paren", LETTERS, "({label}) {text}", LETTER_RE, True),
    "digit_dot": LabelStyle("digit_dot", DIGITS, "{label}. {text}", DIGIT_RE, False),
    "letter_rparen": LabelStyle("letter_rparen", LETTERS, "{label}) {text}", LETTER_RE, True),
}


def label_style_from_json(obj: dict[str, Any]) -> LabelStyle:
    return LabelStyle(
        obj["name"],
        tuple(obj["labels"]),
        obj["line_format"],
        obj["parse_regex"],
        bool(obj.get("parse_uppercase", False)),
    )


# --------------------------------------------------------------------------- templates


@dataclass(frozen=True)
class Template:
    """A prompt template. ``text`` holds ``[q]`` and, for generation, ``[options]``."""

    name: str
    scoring: str  # "gen" or "ll"
    text: str
    label_style: LabelStyle | None = None  # gen only
    normalization: str | None = None  # ll only; None: the decoding's (collect/scoring.py)

    def render_gen(self, question: str, options: Sequence[str], perm: Sequence[int]) -> str:
        assert self.label_style is not None
        block = "\n".join(self.label_style.line(j, options[perm[j]]) for j in range(len(perm)))
        return self.text.replace("[q]", question).replace("[options]", block)

    def render_stem(self, question: str) -> str:
        return self.text.replace("[q]", question)


PAPER_TEMPLATES: dict[str, Template] = {
    "letter_plain": Template(
        "letter_plain", "gen", "Question: [q]\n[options]\nAnswer with the letter only:", LABEL_STYLES["letter_dot"]
    ),
    "letter_paren": Template(
        "letter_paren", "gen", "[q]\n[options]\nThe correct option is", LABEL_STYLES["letter_paren"]
    ),
    "digit_labels": Template(
        "digit_labels", "gen", "Question: [q]\n[options]\nAnswer (1-4):", LABEL_STYLES["digit_dot"]
    ),
    "instruction": Template(
        "instruction",
        "gen",
        "Read carefully and pick the single best choice.\n[q]\n[options]\nYour choice:",
        LABEL_STYLES["letter_rparen"],
    ),
    "cloze_plain": Template("cloze_plain", "ll", "[q]\nAnswer:"),
    "cloze_question": Template("cloze_question", "ll", "Question: [q]\nAnswer:"),
}

# --------------------------------------------------------------------------- decoding


@dataclass(frozen=True)
class Decoding:
    """Generation and likelihood parameters (the paper's appendix A.4)."""

    temperature: float = 0.0
    top_p: float = 1.0
    seed: int = 1234
    max_tokens: int = 8
    continuation_prefix: str = " "  # option text is scored as stem + prefix + option
    normalization: str = "mean_token_logprob"

    def gen_json(self) -> dict[str, Any]:
        return {
            "decoding": "greedy",
            "temperature": self.temperature,
            "top_p": self.top_p,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            "stop": "end-of-sequence token(s) of the model, or max_tokens",
            "output_text": "generated token ids decoded with the model's tokenizer, special tokens skipped",
        }

    def ll_json(self) -> dict[str, Any]:
        from .scoring import get_normalization

        n = get_normalization(self.normalization)
        return {
            "normalization": self.normalization,
            "normalization_rule": n.rule,
            "continuation_prefix": self.continuation_prefix,
            "decision": "argmax over options; ties -> lowest original option index",
            "margin": f"top-1 minus top-2 normalized log-likelihood ({n.unit})",
        }


# --------------------------------------------------------------------------- harness


@dataclass(frozen=True)
class HarnessConfig:
    key: str
    scoring: str
    template: Template
    ordering: str | None
    permutation: tuple[int, ...] | None
    variant: Variant = field(default_factory=Variant)  # beyond the paper's axes (collect/axes.py)


@dataclass
class Harness:
    """A grid of configurations that the collector can run, plus its disclosure."""

    configs: list[HarnessConfig]
    reference: str = DEFAULT_REFERENCE
    decoding: Decoding = field(default_factory=Decoding)
    name: str = "paper-26"
    axes: AxesSpec | None = None  # declared axes beyond the paper's (None: the paper's grid)
    exemplars: dict[str, list[Any]] = field(default_factory=dict)  # benchmark -> reserved Items (few-shot)

    def max_tokens(self, c: HarnessConfig) -> int:
        """The generation budget of a configuration: the CoT budget under CoT."""
        return self.axes.cot_max_tokens if c.variant.cot and self.axes is not None else self.decoding.max_tokens

    @property
    def keys(self) -> list[str]:
        return [c.key for c in self.configs]

    @property
    def gen_configs(self) -> list[HarnessConfig]:
        return [c for c in self.configs if c.scoring == "gen"]

    @property
    def ll_configs(self) -> list[HarnessConfig]:
        return [c for c in self.configs if c.scoring == "ll"]

    def to_grid(self, extra: dict[str, Any] | None = None) -> Grid:
        """The records legend, disclosing template texts, label styles, decoding and parsing."""
        out = []
        for c in self.configs:
            ex: dict[str, Any] = {"template_text": c.template.text}
            if c.scoring == "gen":
                assert c.template.label_style is not None
                ex["label_style"] = c.template.label_style.to_json()
                ex.update(self.decoding.gen_json())
                if self.axes is not None:
                    from .grid_axes import variant_json

                    ex.update(variant_json(self, c))
            else:
                ex["label_style"] = None
                ex.update(self.decoding.ll_json())
                norm = c.template.normalization
                if norm and norm != self.decoding.normalization:
                    from .scoring import get_normalization

                    n = get_normalization(norm)
                    ex.update(
                        normalization=n.name,
                        normalization_rule=n.rule,
                        margin=f"top-1 minus top-2 normalized log-likelihood ({n.unit})",
                    )
            out.append(Config(c.key, c.scoring, c.template.name, c.ordering, c.permutation, ex))
        gextra: dict[str, Any] = {"harness": self.name, "zero_shot": True}
        if self.axes is not None:
            from .grid_axes import grid_axes_json

            gextra.update(grid_axes_json(self))
        gextra.update(extra or {})
        return Grid(tuple(out), self.reference, extra=gextra)


def build_harness(
    templates: dict[str, Template],
    orderings: dict[str, tuple[int, ...]],
    gen: Sequence[str],
    ll: Sequence[str],
    *,
    reference: str = DEFAULT_REFERENCE,
    decoding: Decoding | None = None,
    name: str = "custom",
) -> Harness:
    configs = [
        HarnessConfig(f"gen|{t}|{o}", "gen", templates[t], o, tuple(p)) for t in gen for o, p in orderings.items()
    ]
    configs += [HarnessConfig(f"ll|{t}", "ll", templates[t], None, None) for t in ll]
    keys = [c.key for c in configs]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicate configuration keys in the harness")
    if reference not in keys:
        raise ValueError(f"reference {reference!r} is not one of the harness keys")
    return Harness(configs, reference, decoding or Decoding(), name)


def paper_harness() -> Harness:
    """The paper's 26 configurations: 4 generation templates x 6 orderings + 2 cloze stems."""
    return build_harness(
        PAPER_TEMPLATES,
        PAPER_ORDERINGS,
        ["letter_plain", "letter_paren", "digit_labels", "instruction"],
        ["cloze_plain", "cloze_question"],
        name="paper-26",
    )


def harness_from_obj(obj: dict[str, Any]) -> Harness:
    """A harness from a decoded TOML/JSON grid file (see docs/collect.md).

    Keys: ``name``, ``reference``, ``orderings`` {name: [perm]}, ``templates``
    {name: {scoring, text, labels}} (labels: a built-in style name or a table
    with labels/line_format/parse_regex/parse_uppercase), ``gen`` and ``ll``
    (lists of template names; default: all templates of that scoring),
    ``decoding`` {max_tokens, temperature, top_p, seed, continuation_prefix}.
    Templates not given fall back to the paper's; ``extends = "paper"`` starts
    from the paper's grid.
    """
    templates = dict(PAPER_TEMPLATES)
    orderings: dict[str, tuple[int, ...]] = dict(PAPER_ORDERINGS) if obj.get("extends") == "paper" else {}
    for name, t in (obj.get("templates") or {}).items():
        scoring = t.get("scoring", "gen")
        style = None
        if scoring == "gen":
            lab = t.get("labels", "letter_dot")
            style = LABEL_STYLES[lab] if isinstance(lab, str) else label_style_from_json({"name": name, **lab})
            if "[options]" not in t["text"]:
                raise ValueError(f"template {name!r}: a generation template needs [options]")
        if "[q]" not in t["text"]:
            raise ValueError(f"template {name!r}: the text needs [q]")
        norm = t.get("normalization")
        if norm is not None:
            from .scoring import get_normalization

            get_normalization(str(norm))
            if scoring != "ll":
                raise ValueError(f"template {name!r}: normalization applies to likelihood templates only")
        templates[name] = Template(name, scoring, t["text"], style, None if norm is None else str(norm))
    for name, p in (obj.get("orderings") or {}).items():
        if sorted(p) != list(range(len(p))):
            raise ValueError(f"ordering {name!r} is not a permutation: {p!r}")
        orderings[name] = tuple(int(x) for x in p)
    if not orderings:
        orderings = dict(PAPER_ORDERINGS)
    own = list((obj.get("templates") or {}).keys())
    base = (
        (["letter_plain", "letter_paren", "digit_labels", "instruction"], ["cloze_plain", "cloze_question"])
        if obj.get("extends") == "paper"
        else ([], [])
    )
    gen = obj.get("gen", base[0] + [n for n in own if templates[n].scoring == "gen" and n not in base[0]])
    ll = obj.get("ll", base[1] + [n for n in own if templates[n].scoring == "ll" and n not in base[1]])
    d = obj.get("decoding") or {}
    dec = Decoding(
        temperature=float(d.get("temperature", 0.0)),
        top_p=float(d.get("top_p", 1.0)),
        seed=int(d.get("seed", 1234)),
        max_tokens=int(d.get("max_tokens", 8)),
        continuation_prefix=str(d.get("continuation_prefix", " ")),
        normalization=str(d.get("normalization", "mean_token_logprob")),
    )
    from .scoring import get_normalization

    get_normalization(dec.normalization)
    if dec.temperature != 0.0:
        raise ValueError("only greedy decoding (temperature 0) is supported")
    ref = obj.get("reference", f"gen|{gen[0]}|{next(iter(orderings))}" if gen else DEFAULT_REFERENCE)
    return build_harness(
        templates, orderings, gen, ll, reference=ref, decoding=dec, name=str(obj.get("name", "custom"))
    )


def load_harness(path: str | Path | None) -> Harness:
    if path is None or str(path) in ("paper", "paper-26"):
        return paper_harness()
    p = Path(path)
    if p.suffix == ".toml":
        obj = tomllib.loads(p.read_text(encoding="utf-8"))
    else:
        obj = json.loads(p.read_text(encoding="utf-8"))
    return harness_from_obj(obj)


def parse_answer(cfg: HarnessConfig, output: str) -> int | None:
    """Original option index named by a generated ``output`` under ``cfg``, or None."""
    assert cfg.template.label_style is not None and cfg.permutation is not None
    slot = cfg.template.label_style.parse(output)
    if slot is None or slot >= len(cfg.permutation):
        return None
    return cfg.permutation[slot]
