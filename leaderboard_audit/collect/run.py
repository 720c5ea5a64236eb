"""Run models on benchmarks under a harness grid and write records-v1 (docs/collect.md).

Layout written under the output directory::

    grid.json                          legend (template texts, decoding, parsing, engine)
    <benchmark>/<model>.jsonl          one line per item, written atomically when complete
    _raw/<benchmark>/<model>.jsonl     sidecar: generated text and per-option log-likelihoods
    _raw/<benchmark>/<model>.manifest.json   fingerprint, line count + SHA-256 of both files, provenance
    _work/<benchmark>/<model>/chunk-NNNNN.json   checkpoints while a file is in progress

A killed run restarts where it stopped: finished files whose fingerprint and
manifest match are kept, well-formed finished chunks are reused, the rest is
recomputed. Chunks have fixed boundaries and a batch (a group of chunks) is always
computed whole, so every engine call sees the same batch as in an uninterrupted
run and the final bytes are identical.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any
from collections.abc import Sequence

from ..records.reader import filename_for_model
from ..records.writer import (
    atomic_write_bytes,
    dumps_line,
    grid_bytes,
    write_grid,
    write_model_lines,
)
from .answers import answer_class
from .benchmarks import Item, load_items, load_mapped_items
from .grid_axes import with_axes
from .harness import Harness, HarnessConfig, load_harness, parse_answer
from .prompts import cot_answer, gen_text, prompt_ids, uses_chat
from .progress import Progress
from .scoring import get_normalization
from .spec import ModelSpec, Spec, load_spec, spec_from_obj

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


# --------------------------------------------------------------------------- one chunk


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
    tok = engine.tokenizer
    gens, lls = harness.gen_configs, harness.ll_configs
    dec = harness.decoding
    prompts = [gen_prompt_ids(tok, c, it, chat_template, chat_kwargs, harness, exemplars) for it in items for c in gens]
    budgets = [harness.max_tokens(c) for _ in items for c in gens]
    reqs: list[tuple[list[int], int]] = []
    for it in items:
        for c in lls:
            reqs.extend(ll_requests(tok, c, it, dec.continuation_prefix))
    if combined and hasattr(engine, "run") and prompts and reqs and len(set(budgets)) == 1:
        outs, scored = engine.run(prompts, dec.max_tokens, reqs, seed=dec.seed)
    else:
        outs = _generate_by_budget(engine, prompts, budgets, dec.seed)
        scored = engine.score(reqs) if reqs else []
    lines, raws = [], []
    g = s = 0
    for it in items:
        correct: dict[str, int] = {}
        pred: dict[str, int | None] = {}
        margin: dict[str, float] = {}
        raw_gen: dict[str, str] = {}
        raw_ll: dict[str, list[float]] = {}
        raw_other: dict[str, list[float]] = {}  # options' scores under another normalization
        classes: dict[str, str] = {}
        for c in gens:
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
        for c in lls:
            norm = get_normalization(c.template.normalization or dec.normalization)
            sc = [norm.score(scored[s + j], it.options[j]) for j in range(len(it.options))]
            s += len(it.options)
            best, mg = decide(sc)
            (raw_ll if norm.name == "mean_token_logprob" else raw_other)[c.key] = sc
            pred[c.key] = best
            correct[c.key] = int(best == it.gold)
            margin[c.key] = round(mg, MARGIN_DIGITS)
        line: dict[str, Any] = {
            "benchmark": benchmark,
            "model": model,
            "item_id": it.item_id,
            "gold": it.gold,
            "question": it.question,
            "options": list(it.options),
            "correct": correct,
            "pred": pred,
        }
        if margin:
            line["margin"] = margin
        if classes:
            line["answer_class"] = classes
        lines.append(line)
        raws.append(
            {
                "item_id": it.item_id,
                "gen": raw_gen,
                "ll_mean_logprob": raw_ll,
                **({"ll_score": raw_other} if raw_other else {}),
            }
        )
    return lines, raws


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


def _chunk_ok(got: Any, ids: list[str], keys: Sequence[str]) -> bool:
    """A checkpoint is reused only if it holds one well-formed line and raw line per expected item."""
    if not isinstance(got, dict) or got.get("ids") != ids:
        return False
    lines, raw = got.get("lines"), got.get("raw")
    if not (isinstance(lines, list) and isinstance(raw, list) and len(lines) == len(raw) == len(ids)):
        return False
    want = sorted(keys)
    for x, r, i in zip(lines, raw, ids):
        if not (isinstance(x, dict) and isinstance(r, dict) and x.get("item_id") == i == r.get("item_id")):
            return False
        if not isinstance(x.get("correct"), dict) or sorted(x["correct"]) != want:
            return False
    return True


def _prepare_output(root: Path) -> None:
    """Create the output folder and prove it writable before any model loads."""
    import tempfile

    from .errors import CollectError

    try:
        if root.exists() and not root.is_dir():
            raise CollectError(
                root,
                "the output path exists and is not a directory",
                fix="choose another `output` in the spec or pass --output",
            )
        root.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-probe.", dir=root)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise CollectError(
            root,
            f"cannot write the output directory ({exc.strerror or exc})",
            fix="choose a writable `output` in the spec or pass --output",
        ) from None


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


def collect(
    spec_path_or_obj: str | os.PathLike[str] | dict[str, Any] | Spec,
    *,
    progress: bool = True,
    engine_factory: Any = None,
    only_models: Sequence[str] | None = None,
    verbose: bool = False,
) -> Path:
    """Collect the records a spec describes; returns the records directory.

    Idempotent and resumable: call it again after a kill and it finishes the
    job, with final files byte-identical to an uninterrupted run. Each
    (benchmark, model) file has its own fingerprint, so adding a model or a
    benchmark to the spec computes only the new files; ``only_models`` limits
    the run to those models (the CI gate: docs/ci-gate.md).
    ``engine_factory(model_spec) -> engine`` replaces engine loading (tests).
    vLLM, torch, transformers and datasets are quiet while it runs (errors still
    print) unless ``verbose`` (collect/quiet.py).
    """
    from .quiet import libraries_quiet

    with libraries_quiet(verbose):
        return _collect(spec_path_or_obj, progress=progress, engine_factory=engine_factory, only_models=only_models)


def _collect(
    spec_path_or_obj: str | os.PathLike[str] | dict[str, Any] | Spec,
    *,
    progress: bool,
    engine_factory: Any,
    only_models: Sequence[str] | None,
) -> Path:
    from .errors import CollectError

    if isinstance(spec_path_or_obj, Spec):
        spec = spec_path_or_obj
    elif isinstance(spec_path_or_obj, dict):
        spec = spec_from_obj(spec_path_or_obj)
    else:
        spec = load_spec(spec_path_or_obj)
    names = [m.name for m in spec.models]
    for want in only_models or ():
        if want not in names:
            raise CollectError(
                want, f"--only-model {want!r} is not a model of the spec", fix=f"use one of: {', '.join(names)}"
            )
    run_models = [m for m in spec.models if not only_models or m.name in only_models]
    harness = harness_for(spec)
    root = Path(spec.output)
    existed = root.exists()
    fresh = not existed or (root.is_dir() and not any(root.iterdir()))
    _prepare_output(root)
    try:
        return _collect_into(spec, harness, root, run_models, progress=progress, engine_factory=engine_factory)
    except BaseException:
        if fresh:
            _drop_if_nothing_collected(root, keep_folder=existed)
        raise


def _drop_if_nothing_collected(root: Path, keep_folder: bool) -> None:
    """A run into a new (or empty) folder that stops before collecting anything (a missing
    engine, an interrupt while loading) leaves no grid.json and no empty ``_work/`` behind
    (UX review 2026-12-04 #30); once a chunk or a records file exists it stays, to resume."""
    import shutil

    collected = ("chunk-*.json", "*.jsonl", "*.manifest.json")  # not grid.json, not a fingerprint
    if any(p.is_file() for pattern in collected for p in root.rglob(pattern)):
        return
    if not keep_folder:
        shutil.rmtree(root, ignore_errors=True)
        return
    for p in root.iterdir():  # the folder was given empty: left empty
        shutil.rmtree(p, ignore_errors=True) if p.is_dir() and not p.is_symlink() else p.unlink(missing_ok=True)


def _collect_into(
    spec: Spec, harness: Harness, root: Path, run_models: list[Any], *, progress: bool, engine_factory: Any
) -> Path:
    harness, items = load_items_into(spec, harness)
    write_grid(grid_for(spec, harness), root)

    total = sum(len(v) for v in items.values()) * len(run_models)
    prog = Progress(total, len(harness.configs), enabled=progress)
    t_start = time.monotonic()
    for m in run_models:
        lazy = _Lazy(spec, m, engine_factory)
        try:
            # Chunk-major: chunk 0 of every benchmark, then chunk 1, ... so that a run cut
            # short holds the same first items everywhere (a smaller N then reuses them all).
            plans = {b: _FilePlan(spec, harness, root, b, m, items[b], prog) for b in spec.benchmarks}
            n_groups = max(len(p.groups) for p in plans.values()) if plans else 0
            for g in range(n_groups):
                for b in spec.benchmarks:
                    _collect_file(plans[b], lazy, only_group=g)
            for b in spec.benchmarks:
                _collect_file(plans[b], lazy)
        finally:
            lazy.close()
    if progress:
        print(f"[collect] done: {root} ({time.monotonic() - t_start:.1f}s)", file=sys.stderr, flush=True)
    return root


def load_items_into(spec: Spec, harness: Harness) -> tuple[Harness, dict[str, list[Item]]]:
    """The benchmarks' items, and the harness holding their reserved items as exemplars
    (when an axis uses them: the paper's grid is unchanged)."""
    exemplars: dict[str, list[Item]] = {}
    items = _load_benchmark_items(spec, exemplars)
    if harness.axes is not None:
        harness = dataclasses.replace(harness, exemplars=exemplars)
    return harness, items


class _FilePlan:
    """Where one (benchmark, model) file lives and what its content depends on."""

    def __init__(
        self, spec: Spec, harness: Harness, root: Path, b: str, m: ModelSpec, its: list[Item], prog: Progress
    ) -> None:
        from .manifest import MANIFEST_SUFFIX

        self.spec, self.harness, self.root, self.b, self.m, self.its, self.prog = spec, harness, root, b, m, its, prog
        self.fname = filename_for_model(m.name)
        stem = self.fname[: -len(".jsonl")]
        self.final = root / b / self.fname
        self.rawdir = root / "_raw" / b
        self.manifest_path = self.rawdir / (stem + MANIFEST_SUFFIX)
        self.legacy_fp = self.rawdir / (stem + ".fingerprint")
        self.work = root / "_work" / b / stem
        # The legend restricted to this model and this benchmark: another model or benchmark in
        # the spec leaves this file's fingerprint alone.
        own = dataclasses.replace(spec, models=[m], benchmarks=[b])
        gbytes = grid_bytes(grid_for(own, harness))
        gbase = grid_bytes(grid_for(dataclasses.replace(own, n_items=None, item_offset=0), harness))
        self.fp = spec.fingerprint(b, m, gbytes, [it.item_id for it in its])
        self.base_fp = spec.fingerprint(b, m, gbase, [])  # everything but the item selection
        self.done = False
        self.warned = False
        # Checkpoints hold chunk_items items; one engine call covers a group of batch_items // chunk_items
        # consecutive chunks. A group is always computed whole, so every engine call sees the same batch as
        # in an uninterrupted run whatever was resumed (byte-identical resume even if the engine's numerics
        # depend on the batch).
        size = max(1, spec.chunk_items)
        chunks = [(k, its[lo : lo + size]) for k, lo in enumerate(range(0, len(its), size))]
        per = max(1, (spec.batch_items or size) // size)
        self.groups = [chunks[i : i + per] for i in range(0, len(chunks), per)]


def file_complete(plan: _FilePlan) -> bool:
    """The file exists and its manifest certifies it for this spec (nothing to collect)."""
    from .manifest import read_manifest, verify

    why = verify(read_manifest(plan.manifest_path), plan.root, fingerprint=plan.fp, need_raw=plan.spec.raw_sidecar)
    return plan.final.exists() and why is None


def prepare_work(plan: _FilePlan) -> None:
    """The file's checkpoint folder, emptied when its harness/model/engine changed (chunks
    check their own item ids). The Ray driver calls it once before running groups concurrently."""
    work = plan.work
    if (work / "fingerprint").exists() and (work / "fingerprint").read_text().strip() != plan.base_fp:
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    if _read_text(work / "fingerprint") != plan.base_fp:
        atomic_write_bytes(work / "fingerprint", (plan.base_fp + "\n").encode())


def _collect_file(plan: _FilePlan, lazy: _Lazy, only_group: int | None = None) -> None:
    """Finish one (benchmark, model) file; with ``only_group``, just checkpoint that group of chunks."""
    from .manifest import file_facts, read_manifest, verify

    spec, harness, root, b, m, its, prog = (plan.spec, plan.harness, plan.root, plan.b, plan.m, plan.its, plan.prog)
    fname, final, rawdir, work = plan.fname, plan.final, plan.rawdir, plan.work
    if plan.done:
        return
    manifest = read_manifest(plan.manifest_path)
    why = verify(manifest, root, fingerprint=plan.fp, need_raw=spec.raw_sidecar)
    if final.exists() and why is None:
        plan.done = True
        prog.skip(len(its), f"({b}/{m.name}, complete)")
        return
    if final.exists() and manifest is not None and why != "the spec changed" and not plan.warned:
        plan.warned = True
        print(f"[collect] {b}/{fname}: {why}; recollecting it", file=sys.stderr, flush=True)
    if only_group is not None and only_group >= len(plan.groups):
        return
    # Same harness, model and engine, other items (e.g. a larger N): reuse finished items whose
    # file still matches its manifest. A chunk is reused only if it held exactly the same items,
    # so its batch was the same.
    o_lines: list[Any] = []
    o_raws: list[Any] = []
    if spec.raw_sidecar and verify(manifest, root, base_fingerprint=plan.base_fp) is None:
        o_lines = [json.loads(x) for x in final.read_text(encoding="utf-8").splitlines()]
        o_raws = [json.loads(x) for x in (rawdir / fname).read_text(encoding="utf-8").splitlines()]
        if [x["item_id"] for x in o_lines] != [x["item_id"] for x in o_raws]:
            o_lines = o_raws = []
    o_pos = {x["item_id"]: i for i, x in enumerate(o_lines)}
    prepare_work(plan)
    lines: list[dict[str, Any]] = []
    raws: list[dict[str, Any]] = []
    for gi, group in enumerate(plan.groups):
        if only_group is not None and gi != only_group:
            continue
        have: dict[int, tuple[list[Any], list[Any]]] = {}
        where: dict[int, str] = {}
        for k, chunk in group:
            ids = [it.item_id for it in chunk]
            cpath = work / f"chunk-{k:05d}.json"
            got = _read_json(cpath)
            if _chunk_ok(got, ids, harness.keys):
                have[k] = (got["lines"], got["raw"])
                where[k] = f"chunk {k}"
                continue
            if cpath.exists() and (b, m.name, k) not in prog.seen:
                print(
                    f"[collect] {cpath}: incomplete or malformed checkpoint; recomputing it",
                    file=sys.stderr,
                    flush=True,
                )
            lo = o_pos.get(ids[0]) if ids else None
            prev = o_lines[lo : lo + len(ids)] if lo is not None else []
            if len(prev) == len(chunk) and [x["item_id"] for x in prev] == ids:
                have[k] = (prev, o_raws[lo : lo + len(ids)])
                where[k] = f"chunk {k} from the previous file"
        first = [k for k, _ in group if (b, m.name, k) not in prog.seen]
        prog.seen.update((b, m.name, k) for k in first)
        for k, chunk in group:
            if k in first and k in have:
                prog.skip(len(chunk), f"({b}/{m.name}, {where[k]})")
        if len(have) < len(group):
            # Compute the whole group in one engine call, as an uninterrupted run would.
            engine = lazy.get()
            flat = [it for _, chunk in group for it in chunk]
            cl, cr = run_chunk(
                engine,
                harness,
                flat,
                benchmark=b,
                model=m.name,
                chat_template=m.chat_template,
                parse=spec.parse,
                chat_kwargs=m.chat_template_kwargs,
                exemplars=harness.exemplars.get(b, []),
            )
            fresh = sum(len(chunk) for k, chunk in group if k in first and k not in have)
            pos = 0
            for k, chunk in group:
                n = len(chunk)
                atomic_write_bytes(
                    work / f"chunk-{k:05d}.json",
                    json.dumps(
                        {"ids": [it.item_id for it in chunk], "lines": cl[pos : pos + n], "raw": cr[pos : pos + n]},
                        sort_keys=True,
                    ).encode(),
                )
                have[k] = (cl[pos : pos + n], cr[pos : pos + n])
                pos += n
            prog.advance(fresh, f"{b}/{m.name}")
        for k, _ in group:
            lines += have[k][0]
            raws += have[k][1]
    if only_group is not None:
        return
    if spec.raw_sidecar:
        atomic_write_bytes(rawdir / fname, "".join(dumps_line(r) + "\n" for r in raws).encode())
    write_model_lines(final, lines)
    man = {
        "fingerprint": plan.fp,
        "base_fingerprint": plan.base_fp,
        "records": {"path": f"{b}/{fname}", **(file_facts(final) or {})},
        "raw": {"path": f"_raw/{b}/{fname}", **(file_facts(rawdir / fname) or {})} if spec.raw_sidecar else None,
        "provenance": lazy.provenance(),
    }
    atomic_write_bytes(plan.manifest_path, (json.dumps(man, indent=1, sort_keys=True) + "\n").encode())
    plan.legacy_fp.unlink(missing_ok=True)
    plan.done = True
    shutil.rmtree(work, ignore_errors=True)
    for d in (work.parent, work.parent.parent):
        try:
            d.rmdir()
        except OSError:
            pass
