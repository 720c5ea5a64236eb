"""Evaluating cells: prompts and requests for chosen (item, configuration) cells, one engine
batch, the records' lines (docs/collect.md).

Apart from run.py (the resumable whole-grid collection) so that the budgeted collection
(collect/budgeted.py), which run.py hands a budgeted spec to, evaluates its rounds' cells
with the same code without importing run.py back.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any
from collections.abc import Sequence

from .answers import answer_class
from .benchmarks import Item, load_items, load_mapped_items
from .grid_axes import with_axes
from .harness import Harness, HarnessConfig, load_harness, parse_answer
from .prompts import cot_answer, gen_text, prompt_ids, uses_chat
from .scoring import get_normalization
from .spec import ModelSpec, Spec

MARGIN_DIGITS = 6


# --------------------------------------------------------------------------- prompts


def gen_prompt_ids(
    tok: Any,
    cfg: HarnessConfig,
    item: Item,
    chat_template: bool,
    chat_kwargs: dict[str, Any] | None = None,
    harness: Harness | None = None,
    exemplars: Sequence[Item] = (),
) -> list[int]:
    """A generation prompt's ids: the paper's zero-shot prompt, or under ``cfg``'s variant
    (shots, CoT, chat template, system prompt: collect/prompts.py)."""
    assert cfg.permutation is not None
    axes = harness.axes if harness is not None else None
    text = gen_text(cfg, item, exemplars, axes)
    system = axes.system_text(cfg.variant) if axes is not None else ""
    return prompt_ids(tok, text, uses_chat(cfg.variant, chat_template), system, chat_kwargs)


def ll_requests(tok: Any, cfg: HarnessConfig, item: Item, prefix: str) -> list[tuple[list[int], int]]:
    """One (ids, start) per option: option tokens are those of stem+prefix+option past the stem."""
    stem = cfg.template.render_stem(item.question)
    ctx = tok.encode(stem)
    out = []
    for opt in item.options:
        full = tok.encode(stem + prefix + opt)
        start = 0
        while start < min(len(ctx), len(full)) and ctx[start] == full[start]:
            start += 1
        start = max(start, 1)
        out.append((full, start))
    return out


def decide(scores: Sequence[float]) -> tuple[int, float]:
    """Argmax (ties -> lowest index) and the top-1 minus top-2 margin."""
    best = max(range(len(scores)), key=lambda j: (scores[j], -j))
    rest = [s for j, s in enumerate(scores) if j != best]
    margin = scores[best] - max(rest) if rest else 0.0
    return best, margin


def run_chunk(
    engine: Any,
    harness: Harness,
    items: Sequence[Item],
    *,
    benchmark: str,
    model: str,
    chat_template: bool,
    parse: str = "paper",
    combined: bool = False,
    chat_kwargs: dict[str, Any] | None = None,
    exemplars: Sequence[Item] = (),
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Records lines and raw sidecar lines for ``items``: two batched engine calls, or one
    (``combined``, engines with ``run``: generation and scoring scheduled together). Under
    declared axes, CoT prompts take one more generation call with their own budget."""
    cells = [Cells(it, benchmark, harness.gen_configs, harness.ll_configs, exemplars) for it in items]
    got = run_cells(
        engine,
        harness,
        cells,
        model=model,
        chat_template=chat_template,
        parse=parse,
        combined=combined,
        chat_kwargs=chat_kwargs,
    )
    return [record_line(c, r, model) for c, r in zip(cells, got)], [raw_line(c, r) for c, r in zip(cells, got)]


@dataclasses.dataclass(frozen=True)
class Cells:
    """Some configurations of one item: what one engine batch evaluates for it."""

    item: Item
    benchmark: str
    gens: Sequence[HarnessConfig]
    lls: Sequence[HarnessConfig]
    exemplars: Sequence[Item] = ()


def record_line(c: Cells, r: dict[str, Any], model: str) -> dict[str, Any]:
    """The records line of one item from its evaluated cells (``run_cells``)."""
    it = c.item
    line: dict[str, Any] = {
        "benchmark": c.benchmark,
        "model": model,
        "item_id": it.item_id,
        "gold": it.gold,
        "question": it.question,
        "options": list(it.options),
        "correct": r["correct"],
        "pred": r["pred"],
    }
    if r["margin"]:
        line["margin"] = r["margin"]
    if r["classes"]:
        line["answer_class"] = r["classes"]
    return line


def raw_line(c: Cells, r: dict[str, Any]) -> dict[str, Any]:
    """The raw sidecar line of one item: generated texts and options' log-likelihoods."""
    return {
        "item_id": c.item.item_id,
        "gen": r["raw_gen"],
        "ll_mean_logprob": r["raw_ll"],
        **({"ll_score": r["raw_other"]} if r["raw_other"] else {}),
    }


#: an environment variable naming a file: every batch of cells handed to an engine appends
#: one JSON line there (the cells, and the prompts and requests the engine got); the CI
#: budget check reads it to prove the engine evaluated exactly the planned cells
CALL_LOG_ENV = "LEADERBOARD_AUDIT_CALL_LOG"


def run_cells(
    engine: Any,
    harness: Harness,
    cells: Sequence[Cells],
    *,
    model: str,
    chat_template: bool,
    parse: str = "paper",
    combined: bool = False,
    chat_kwargs: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Evaluate the given (item, config) cells in one batch (two engine calls, one per CoT
    budget more): per item, its ``correct``, ``pred``, ``margin``, answer ``classes`` and raw
    texts and scores, for its configs only."""
    tok = engine.tokenizer
    dec = harness.decoding
    prompts = [
        gen_prompt_ids(tok, g, c.item, chat_template, chat_kwargs, harness, c.exemplars) for c in cells for g in c.gens
    ]
    budgets = [harness.max_tokens(g) for c in cells for g in c.gens]
    reqs: list[tuple[list[int], int]] = []
    for c in cells:
        for lc in c.lls:
            reqs.extend(ll_requests(tok, lc, c.item, dec.continuation_prefix))
    _log_call(model, cells, len(prompts), len(reqs))
    if combined and hasattr(engine, "run") and prompts and reqs and len(set(budgets)) == 1:
        outs, scored = engine.run(prompts, dec.max_tokens, reqs, seed=dec.seed)
    else:
        outs = _generate_by_budget(engine, prompts, budgets, dec.seed)
        scored = engine.score(reqs) if reqs else []
    results = []
    g = s = 0
    for cell in cells:
        it = cell.item
        correct: dict[str, int] = {}
        pred: dict[str, int | None] = {}
        margin: dict[str, float] = {}
        raw_gen: dict[str, str] = {}
        raw_ll: dict[str, list[float]] = {}
        raw_other: dict[str, list[float]] = {}  # options' scores under another normalization
        classes: dict[str, str] = {}
        for c in cell.gens:
            text = tok.decode(outs[g])
            g += 1
            assert c.template.label_style is not None
            if c.variant.cot:
                p, classes[c.key] = cot_answer(c, text)
            else:
                classes[c.key] = answer_class(c.template.label_style, text)
                p = None if parse == "strict" and classes[c.key] == "enumeration" else parse_answer(c, text)
            raw_gen[c.key] = text
            pred[c.key] = p
            correct[c.key] = int(p is not None and p == it.gold)
        for c in cell.lls:
            norm = get_normalization(c.template.normalization or dec.normalization)
            sc = [norm.score(scored[s + j], it.options[j]) for j in range(len(it.options))]
            s += len(it.options)
            best, mg = decide(sc)
            (raw_ll if norm.name == "mean_token_logprob" else raw_other)[c.key] = sc
            pred[c.key] = best
            correct[c.key] = int(best == it.gold)
            margin[c.key] = round(mg, MARGIN_DIGITS)
        results.append(
            {
                "correct": correct,
                "pred": pred,
                "margin": margin,
                "classes": classes,
                "raw_gen": raw_gen,
                "raw_ll": raw_ll,
                "raw_other": raw_other,
            }
        )
    return results


def _log_call(model: str, cells: Sequence[Cells], n_prompts: int, n_requests: int) -> None:
    where = os.environ.get(CALL_LOG_ENV)
    if not where:
        return
    entry = {
        "model": model,
        "cells": [[c.benchmark, c.item.item_id, k.key] for c in cells for k in (*c.gens, *c.lls)],
        "prompts": n_prompts,
        "requests": n_requests,
        "expected_requests": sum(len(c.item.options) * len(c.lls) for c in cells),
    }
    with open(where, "a", encoding="utf-8") as fh:  # one write per batch: lines never interleave
        fh.write(json.dumps(entry, sort_keys=True) + "\n")


def _generate_by_budget(engine: Any, prompts: list[list[int]], budgets: list[int], seed: int) -> list[list[int]]:
    """One ``generate`` call per distinct budget (ascending), outputs back in prompt order."""
    outs: list[list[int]] = [[] for _ in prompts]
    for budget in sorted(set(budgets)):
        idx = [j for j, b in enumerate(budgets) if b == budget]
        for j, o in zip(idx, engine.generate([prompts[j] for j in idx], budget, seed=seed)):
            outs[j] = o
    return outs


# --------------------------------------------------------------------------- orchestration


def _dtype_rule(dtype: str) -> dict[str, str]:
    return {"dtype_auto": "bfloat16 on a CUDA GPU, float32 on CPU"} if dtype == "auto" else {}


def harness_for(spec: Spec) -> Harness:
    """The spec's grid file (or the paper's) widened by the spec's declared axes."""
    from .errors import CollectError

    try:
        return with_axes(load_harness(spec.grid), spec.axes)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CollectError(
            spec.grid,
            f"cannot read the grid file ({type(exc).__name__}: {exc})",
            fix="see docs/collect.md, 'Custom grids' and 'Wider grids'",
        ) from None


def grid_for(spec: Spec, harness: Harness) -> Any:
    if harness.axes is not None:  # the exemplars of this spec's benchmarks only
        harness = dataclasses.replace(harness, exemplars={b: harness.exemplars.get(b, []) for b in spec.benchmarks})
    extra = {
        "collector": {
            "engine": spec.engine,
            "engine_options": spec.engine_options,
            "models": {
                m.name: {
                    "source": m.path,
                    "dtype": m.dtype,
                    **_dtype_rule(m.dtype),
                    "chat_template": m.chat_template,
                    **({"chat_template_kwargs": m.chat_template_kwargs} if m.chat_template_kwargs else {}),
                    "chat_template_rule": (
                        "generation prompts wrapped as one user turn with "
                        "the model's chat template and its generation "
                        "prompt; cloze stems always raw"
                    )
                    if m.chat_template
                    else "raw prompt text, tokenizer's default special tokens",
                }
                for m in spec.models
            },
            "benchmarks": {
                b: {
                    "n_items": spec.n_items,
                    "seed": 1234,
                    "reserved": 5,
                    "item_offset": spec.item_offset,
                    **({"source": _disclosed_source(spec.benchmark_sources[b])} if b in spec.benchmark_sources else {}),
                }
                for b in spec.benchmarks
            },
            "normalization": harness.decoding.normalization,
            "tokenization": "prompts tokenized once by the collector (HF tokenizer) and passed to the "
            "engine as token ids",
            "chunk_items": spec.chunk_items,
        }
    }
    if spec.batch_items and spec.batch_items > spec.chunk_items:  # absent by default: fingerprints unchanged
        extra["collector"]["batch_items"] = max(1, spec.batch_items // spec.chunk_items) * spec.chunk_items
    if spec.parse != "paper":  # absent for the paper's rule, so earlier outputs keep their fingerprints
        extra["collector"]["parse"] = {
            "rule": spec.parse,
            "enumeration": "an answer whose first non-blank line opens with two or more "
            "distinct labels joined only by punctuation or or/and (' A, B, C, D', ' 1-4') is unparseable: "
            "pred null, scored wrong",
        }
    return harness.to_grid(extra)


def _disclosed_source(mapping: dict[str, Any]) -> dict[str, Any]:
    """A mapped benchmark's source in grid.json: the mapping, with file names (not machine paths)."""
    from .manifest import file_facts

    out = dict(mapping)
    if "files" in out:
        # the content hash makes an edited data file recollect its records (ids alone would not)
        out["sha256"] = {Path(f).name: (file_facts(Path(f)) or {}).get("sha256") for f in out["files"]}
        out["files"] = [Path(f).name for f in out["files"]]
    return out


class _Lazy:
    """Load a model into its engine only when some file actually needs computing."""

    def __init__(self, spec: Spec, m: ModelSpec, factory: Any = None) -> None:
        self.spec, self.m, self.engine, self.factory = spec, m, None, factory
        self.path: str | None = None
        self._prov: dict[str, Any] | None = None

    def options(self) -> dict[str, Any]:
        opts = dict(self.spec.engine_options)
        opts.update(self.m.options)
        return opts

    def get(self) -> Any:
        if self.engine is None and self.factory is not None:
            self.engine = self.factory(self.m)
        if self.engine is None:
            from .engines import make_engine
            from .models import resolve_model_path

            self.path = resolve_model_path(self.m.path)
            self.engine = make_engine(self.spec.engine, self.path, dtype=self.m.dtype, options=self.options())
        return self.engine

    def provenance(self) -> dict[str, Any]:
        """How this run made the model's files: versions, device, engine settings, weight hashes."""
        if self._prov is None:
            from .manifest import device_info, package_versions, weight_hashes

            self._prov = {
                "engine": self.spec.engine,
                "engine_options": self.options(),
                "dtype": self.m.dtype,
                "model_source": self.m.path,
                "chat_template": self.m.chat_template,
                "versions": package_versions(),
                "device": device_info(),
            }
            if self.path is not None:
                self._prov["model_path"] = self.path
                self._prov["weights_sha256"] = weight_hashes(self.path)
            elif self.engine is None:
                self._prov["note"] = "every chunk was resumed from checkpoints; no engine was loaded in this run"
        return self._prov

    def close(self) -> None:
        if self.engine is not None:
            self.engine.close()
            self.engine = None


def _load_benchmark_items(spec: Spec, exemplars: dict[str, list[Item]] | None = None) -> dict[str, list[Item]]:
    """Each benchmark's selected items; ``exemplars`` (when given) receives its reserved items."""
    from .errors import CollectError

    items: dict[str, list[Item]] = {}
    for b in spec.benchmarks:
        n = None if spec.n_items is None else spec.n_items + spec.item_offset
        mapping = spec.benchmark_sources.get(b)
        src = ", ".join(mapping.get("files") or [mapping.get("hub", b)]) if mapping else spec.files_for(b)
        try:
            if mapping:
                reserved, chosen = load_mapped_items(b, mapping, n, with_reserved=True)
            else:
                reserved, chosen = load_items(b, n, files=src, with_reserved=True)
            items[b] = chosen[spec.item_offset :]
            if exemplars is not None:
                exemplars[b] = reserved
        except (OSError, ValueError, KeyError, TypeError, OverflowError, RecursionError) as exc:
            plain = isinstance(exc, ValueError | OSError)
            what = str(exc) if plain else f"{type(exc).__name__}: {str(exc)[:200]}"
            raise CollectError(
                src or b,
                f"cannot read benchmark {b!r} ({what})",
                fix="check benchmarks_dir / [benchmark_files] in the spec",
            ) from None
    return items


def load_items_into(spec: Spec, harness: Harness) -> tuple[Harness, dict[str, list[Item]]]:
    """The benchmarks' items, and the harness holding their reserved items as exemplars
    (when an axis uses them: the paper's grid is unchanged)."""
    exemplars: dict[str, list[Item]] = {}
    items = _load_benchmark_items(spec, exemplars)
    if harness.axes is not None:
        harness = dataclasses.replace(harness, exemplars=exemplars)
    return harness, items
