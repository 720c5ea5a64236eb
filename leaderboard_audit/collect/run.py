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
from .benchmarks import Item
from .harness import Harness
from .progress import Progress
from .spec import ModelSpec, Spec, load_spec, spec_from_obj
from .cells import _Lazy, grid_for, harness_for, load_items_into, run_chunk


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
    if only_models and spec.budgeted:
        raise CollectError(
            "--only-model", "a budgeted collection plans over every model of the spec", fix="drop --only-model"
        )
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
    if spec.budgeted:  # a share of the cells, chosen round by round (collect/budgeted.py)
        from .budgeted import collect_budgeted

        return collect_budgeted(spec, harness, root, progress=progress, engine_factory=engine_factory)
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
