"""``leaderboard-audit collect SPEC --dry-run``: the work a spec asks for, and a time floor.

For every model: the generation prompts and likelihood requests the runner
would send, their prefill tokens (counted with the model's tokenizer where it
loads locally, else with a ``--tokenizer-proxy`` (``PATH`` for every model, or
``NAME_PART=PATH`` for the models whose name contains NAME_PART), else estimated at
:data:`CHARS_PER_TOKEN`), the most tokens generation can produce
(prompts x ``max_tokens``), and a floor on time per accelerator:

    seconds >= 2 x active parameters x (prefill + generated tokens) / peak bf16 FLOP/s

A floor, not a forecast: decoding is memory-bound and no engine reaches peak,
so real runs take several times longer (docs/collect.md, "Dry run", gives
measured ratios). Nothing is loaded onto an accelerator and no engine starts.
"""

from __future__ import annotations

import json
import math
import re
import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .axes import EXEMPLAR_SEPARATOR
from .benchmarks import Item
from .harness import Harness
from .spec import ModelSpec, Spec
from ..records.words import count

CHARS_PER_TOKEN = 4.0

# Peak dense bf16 tensor throughput, TFLOP/s, from the vendors' datasheets (no sparsity).
ACCELERATORS: dict[str, tuple[float, str]] = {
    "H200": (989.0, "NVIDIA H200 SXM"),
    "H100": (989.0, "NVIDIA H100 SXM (PCIe: 756)"),
    "A100": (312.0, "NVIDIA A100"),
    "A40": (149.7, "NVIDIA A40 (the paper's GPUs)"),
    "L4": (121.0, "NVIDIA L4"),
    "CPU": (0.4, "2 x86 cores with AVX-512 BF16, ~3 GHz x 64 bf16 FLOP/cycle/core (this project's CI)"),
}

# Parameters (total, active per token) of the paper's roster, for names no folder describes.
KNOWN_PARAMS: dict[str, tuple[float, float]] = {
    "mixtral-8x7b": (46.7e9, 12.9e9),
}


@dataclass
class ModelWork:
    model: str
    gen_prompts: int
    ll_requests: int
    prefill_tokens: int
    max_generated_tokens: int
    tokens_from: str  # "tokenizer", "proxy <path>", "estimate (4.0 chars/token)"
    params: float | None  # total
    active_params: float | None
    params_from: str

    @property
    def tokens(self) -> int:
        return self.prefill_tokens + self.max_generated_tokens

    def flops(self) -> float | None:
        return None if self.active_params is None else 2.0 * self.active_params * self.tokens


def params_from_name(name: str) -> tuple[float, float] | None:
    """``llama3.1-8b`` -> 8e9; ``qwen3-30b-a3b`` -> (30e9, 3e9); ``SmolLM2-135M`` -> 135e6."""
    key = name.lower().rsplit("/", 1)[-1]
    for k, v in KNOWN_PARAMS.items():
        if k in key:
            return v
    # "e4b" (Gemma's effective size) counts as 4B
    m = re.search(r"(?<![a-z0-9.])e?(\d+(?:\.\d+)?)([bm])(?![a-z])", key)
    if not m:
        return None
    total = float(m.group(1)) * (1e9 if m.group(2) == "b" else 1e6)
    a = re.search(r"-a(\d+(?:\.\d+)?)b(?![a-z])", key)
    return total, (float(a.group(1)) * 1e9 if a else total)


def params_from_folder(path: Path) -> float | None:
    """The sum of tensor sizes in the folder's safetensors headers (no weights are read)."""
    files = sorted(path.glob("*.safetensors"))
    if not files:
        return None
    n = 0
    for f in files:
        with open(f, "rb") as fh:
            (size,) = struct.unpack("<Q", fh.read(8))
            header = json.loads(fh.read(size))
        n += sum(math.prod(v["shape"]) for k, v in header.items() if k != "__metadata__")
    return float(n)


def _local_folder(m: ModelSpec) -> Path | None:
    if m.path.startswith("gguf:"):
        try:
            from .models import CACHE, KNOWN, _sha256, gguf_file
        except ImportError:
            return None
        name = m.path[len("gguf:") :]
        if name not in KNOWN:
            return None
        try:
            g = gguf_file(name, install=False)
        except FileNotFoundError:
            return None
        folder = CACHE / "models" / f"{_sha256(g)[:16]}-float32"
        return folder if (folder / "config.json").exists() else None
    p = Path(m.path)
    return p if p.is_dir() else None


def _load_tokenizer(path: str) -> Any:
    """A folder or hub id (offline: a dry run never downloads); ``gguf:NAME`` reads only the tokenizer."""
    if path.startswith("gguf:"):
        from .models import KNOWN, gguf_file

        name = path[len("gguf:") :]
        if name not in KNOWN:
            raise ValueError(f"unknown gguf model {name!r}; known: {', '.join(KNOWN)}")
        return _GGUFTokenizer(gguf_file(name))
    from .engines.hf_tok import HFTokenizer

    if not Path(path).is_dir():  # a hub id: only from the local cache, never the network
        from huggingface_hub import snapshot_download

        path = snapshot_download(path, local_files_only=True)
    return HFTokenizer(path)


class _GGUFTokenizer:
    """The tokenizer inside a GGUF file, without converting the weights (counts may miss a BOS token)."""

    def __init__(self, gguf: Path) -> None:
        from transformers import AutoTokenizer

        self.tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)

    def encode(self, text: str) -> list[int]:
        return list(self.tok(text)["input_ids"])

    def chat(self, user_text: str) -> list[int]:
        text = self.tok.apply_chat_template(
            [{"role": "user", "content": user_text}], tokenize=False, add_generation_prompt=True
        )
        return list(self.tok(text, add_special_tokens=False)["input_ids"])


class _Counter:
    """Token counts of prompts: a real tokenizer, or characters / CHARS_PER_TOKEN."""

    def __init__(self, tok: Any = None, chars_per_token: float = CHARS_PER_TOKEN) -> None:
        self.tok, self.cpt = tok, chars_per_token

    def text(self, s: str) -> int:
        return len(self.tok.encode(s)) if self.tok is not None else max(1, round(len(s) / self.cpt))

    def chat(self, s: str) -> int:
        return len(self.tok.chat(s)) if self.tok is not None else self.text(s) + 8

    def prompt(self, s: str, chat: bool, system: str = "", chat_kwargs: dict[str, Any] | None = None) -> int:
        """A generation prompt under a variant, as ``prompts.prompt_ids`` builds it."""
        if self.tok is not None:
            from .prompts import prompt_ids

            return len(prompt_ids(self.tok, s, chat, system, chat_kwargs))
        if not chat:
            return self.text(system + EXEMPLAR_SEPARATOR + s if system else s)
        return self.text(s) + 8 + (self.text(system) + 4 if system else 0)


def count_work(
    harness: Harness,
    items: dict[str, list[Item]],
    counter: _Counter,
    chat_template: bool,
    chat_kwargs: dict[str, Any] | None = None,
) -> tuple[int, int, int]:
    """(generation prompts, likelihood requests, prefill tokens), as run.run_chunk builds them:
    under the declared axes (shots, CoT instruction, system prompt, chat template) too."""
    from .prompts import gen_text, uses_chat

    gens, lls = harness.gen_configs, harness.ll_configs
    prefix = harness.decoding.continuation_prefix
    axes = harness.axes
    n_gen = n_ll = tokens = 0
    for b, its in items.items():
        exemplars = harness.exemplars.get(b, [])
        for it in its:
            for c in gens:
                text = gen_text(c, it, exemplars, axes)
                system = axes.system_text(c.variant) if axes is not None else ""
                tokens += counter.prompt(text, uses_chat(c.variant, chat_template), system, chat_kwargs)
                n_gen += 1
            for c in lls:
                stem = c.template.render_stem(it.question)
                for opt in it.options:
                    tokens += counter.text(stem + prefix + opt)
                    n_ll += 1
    return n_gen, n_ll, tokens


def gen_budget(harness: Harness, items: dict[str, list[Item]]) -> int:
    """The most tokens generation can produce: each prompt's own budget (``cot_max_tokens``
    under CoT, else the decoding's ``max_tokens``), as ``run._generate_by_budget`` asks for them."""
    return sum(len(its) for its in items.values()) * sum(harness.max_tokens(c) for c in harness.gen_configs)


def budgets_line(harness: Harness) -> str:
    """``generation budgets: 24 configs x 32 tokens, 4 configs x 256 tokens (one generate call each)``."""
    from collections import Counter

    per = Counter(harness.max_tokens(c) for c in harness.gen_configs)
    parts = ", ".join(f"{n} config(s) x {b:,} tokens" for b, n in sorted(per.items()))
    return f"generation budgets: {parts} (one generate call per budget and chunk)" if per else ""


def parse_proxies(spec: str | list[str] | None) -> list[tuple[str, str]]:
    """``["qwen=gguf:qwen2.5-coder-0.5b-instruct", "/path/tok"]`` -> [(name part, path), ("", path)]."""
    out = []
    for s in [spec] if isinstance(spec, str) else (spec or []):
        sub, sep, path = s.partition("=")
        out.append((sub.lower(), path) if sep and not sub.startswith(("gguf:", "/", ".")) else ("", s))
    return out


def plan(
    spec: Spec,
    *,
    tokenizer_proxy: str | list[str] | None = None,
    harness: Harness | None = None,
    items: dict[str, list[Item]] | None = None,
) -> tuple[list[ModelWork], dict[str, int], Harness]:
    """The work of every model in ``spec``, under the configurations the run collects (the grid
    widened by the declared axes, ``run.harness_for``); nothing runs."""
    from .cells import harness_for, load_items_into

    harness = harness or harness_for(spec)
    if items is None:
        harness, items = load_items_into(spec, harness)
    from ..registry import load_target
    from .engines import engine_spec

    engine = engine_spec(spec.engine)
    proxies = parse_proxies(tokenizer_proxy)
    loaded: dict[str, Any] = {}
    cache: dict[tuple[str, bool], tuple[int, int, int]] = {}
    out = []
    for m in spec.models:
        folder = _local_folder(m)
        tok, source = None, f"estimate ({CHARS_PER_TOKEN:g} chars/token)"
        if engine.tokenizer is not None:  # an engine whose tokenizer needs no model (the fake)
            tok, source = load_target(engine.tokenizer)(), "tokenizer"
        elif folder is not None or (not m.path.startswith("gguf:") and "/" in m.path):
            try:
                tok, source = _load_tokenizer(str(folder or m.path)), "tokenizer"
            except Exception:  # noqa: BLE001 - offline hub id, no transformers: fall back
                tok = None
        proxy = next((p for sub, p in proxies if sub and sub in m.name.lower()), None) or next(
            (p for sub, p in proxies if not sub), None
        )
        if tok is None and proxy is not None:
            if proxy not in loaded:
                loaded[proxy] = _load_tokenizer(proxy)
            tok, source = loaded[proxy], f"proxy {proxy}"
        kwargs = m.chat_template_kwargs or None
        key = (
            source if source != "tokenizer" else f"tok:{folder or m.path}",
            m.chat_template,
            json.dumps(kwargs, sort_keys=True, default=str),
        )
        if key not in cache:
            cache[key] = count_work(harness, items, _Counter(tok), m.chat_template, kwargs)
        n_gen, n_ll, prefill = cache[key]
        total = folder and params_from_folder(folder)
        named = params_from_name(m.name) or params_from_name(m.path)
        if total:
            params, active, pfrom = total, total, "safetensors"
            if named and named[1] < named[0]:  # a mixture of experts: the name says the active share
                active = total * named[1] / named[0]
                pfrom = "safetensors, active share from the name"
        elif named:
            params, active, pfrom = named[0], named[1], "name"
        else:
            params = active = None
            pfrom = "unknown"
        out.append(ModelWork(m.name, n_gen, n_ll, prefill, gen_budget(harness, items), source, params, active, pfrom))
    return out, {b: len(v) for b, v in items.items()}, harness


def fmt_seconds(s: float | None) -> str:
    if s is None:
        return "?"
    if s < 60:
        return f"{s:.1f} s"
    if s < 3600:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.2f} h"


def fmt_count(x: float | None) -> str:
    if x is None:
        return "?"
    for unit, f in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= f:
            return f"{x / f:.3g}{unit}"
    return f"{x:g}"


def report(works: list[ModelWork], counts: dict[str, int], harness: Harness, *, accelerators: dict[str, float]) -> str:
    from tabulate import tabulate

    n_items = sum(counts.values())
    per_bench = ", ".join(f"{b} {n:,}" for b, n in counts.items())
    head_line = (
        f"dry run: {count(len(works), 'model')} x {n_items:,} items ({per_bench}) x {len(harness.configs)} "
        f"configs ({len(harness.gen_configs)} generation, {len(harness.ll_configs)} likelihood)"
    )
    lines = [head_line] + ([budgets_line(harness)] if harness.gen_configs else [])
    rows = []
    tot_flops = 0.0
    unknown = False
    for w in works:
        f = w.flops()
        unknown |= f is None
        tot_flops += f or 0.0
        row = [
            w.model,
            fmt_count(w.params) + ("" if w.active_params == w.params else f" ({fmt_count(w.active_params)} active)"),
            f"{w.gen_prompts:,}",
            f"{w.ll_requests:,}",
            fmt_count(w.prefill_tokens),
            fmt_count(w.max_generated_tokens),
            w.tokens_from,
        ]
        row += [fmt_seconds(None if f is None else f / (p * 1e12)) for p in accelerators.values()]
        rows.append(row)
    tp = sum(w.prefill_tokens for w in works)
    tg = sum(w.max_generated_tokens for w in works)
    rows.append(
        [
            "total",
            "",
            f"{sum(w.gen_prompts for w in works):,}",
            f"{sum(w.ll_requests for w in works):,}",
            fmt_count(tp),
            fmt_count(tg),
            "",
        ]
        + [fmt_seconds(tot_flops / (p * 1e12)) + ("+" if unknown else "") for p in accelerators.values()]
    )
    head = ["model", "params", "gen prompts", "ll requests", "prefill tok", "gen tok (max)", "tokens from"]
    head += [f"{k} floor" for k in accelerators]
    lines.append(tabulate(rows, head, tablefmt="github", disable_numparse=True))
    lines.append(
        "floor = 2 x active params x (prefill + generated tokens) / peak bf16 FLOP/s ("
        + ", ".join(f"{k} {v:g} TFLOP/s" for k, v in accelerators.items())
        + "); real runs are slower: decoding is memory-bound and no engine reaches peak."
    )
    if unknown:
        lines.append(
            "'?' / '+': a model's parameter count is unknown (name it like 'org/name-8b' or use a "
            "local folder with safetensors)"
        )
    return "\n".join(lines)


def dry_run_main(
    spec: Spec,
    *,
    accelerator: str | None = None,
    peak_tflops: float | None = None,
    tokenizer_proxy: str | list[str] | None = None,
) -> int:
    if peak_tflops is not None:
        accels = {accelerator or "custom": float(peak_tflops)}
    elif accelerator is not None:
        key = accelerator.upper()
        if key not in ACCELERATORS:
            raise SystemExit(f"--accelerator {accelerator}: known: {', '.join(ACCELERATORS)}; or give --peak-tflops")
        accels = {key: ACCELERATORS[key][0]}
    else:
        accels = {k: v[0] for k, v in ACCELERATORS.items()}
    works, counts, harness = plan(spec, tokenizer_proxy=tokenizer_proxy)
    print(report(works, counts, harness, accelerators=accels))
    if spec.budgeted:  # the plan chooses its cells from the answers, so only its ceiling is known
        from .budgeted import budget_fraction

        f = budget_fraction(spec)
        print(
            f"budgeted collection ({'--until-decided, cap' if spec.until_decided else '--budget'} {f:g}): at most "
            f"{f:.0%} of the grid's cells above, fewer when every robust status is known sooner "
            "(docs/collect.md, 'Budgeted collection with an engine')"
        )
    sys.stdout.flush()
    return 0
