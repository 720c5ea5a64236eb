"""A budgeted collection with a real engine (docs/collect.md, "Budgeted collection").

``leaderboard-audit collect SPEC --budget F`` (or ``--until-decided --max-budget F``) runs
the plan of collect/budget.py with the spec's engine as its ``answer``: each round's
chosen (model, item, config) cells are grouped per model, then per item, and evaluated by
:func:`run.run_cells` in fixed parts of ``batch_items`` (default ``chunk_items``) items,
one model loaded at a time. Only the chosen cells reach the engine.

Resume: every part is checkpointed atomically under
``_work/_budget/<design>/r<round>/<model>/chunk-<part>.json`` with the cells it holds. The
plan is a pure function of the spec, the seed and the answers, so a rerun after a kill
asks the same cells round by round; parts found on disk are reused (only when they hold
exactly the asked cells) and the rest are computed in the same batches as an
uninterrupted run, so the final files are byte-identical. A finished collection (every
file's manifest certifies this design) is a no-op.

The output is an incomplete records set like replay's: unobserved cells
``not_collected``, grid.json's ``collection_design`` holding the budget, the seed, the
random sample (item ids, inclusion probability) and the order.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..metrics.incomplete import ROBUST, UNDECIDED, robust_status
from ..records.missing import MISSING_REASONS, NOT_COLLECTED
from ..records.reader import filename_for_model
from ..records.writer import atomic_write_bytes, dumps_line, grid_bytes, write_grid, write_model_lines
from .benchmarks import Item
from .budget import DEFAULT_SAMPLE_SHARE, BudgetError, budget_cells, design, plan
from .errors import CollectError
from .manifest import MANIFEST_SUFFIX, file_facts, read_manifest, verify
from .harness import Harness
from .replay import DESIGN_KEY
from .cells import Cells, _Lazy, grid_for, load_items_into, raw_line, record_line, run_cells
from .spec import Spec
from .verdict_plan import BandTargets, scope_groups

WORK = Path("_work") / "_budget"


def budget_fraction(spec: Spec) -> float:
    """The share of the grid the plan may spend: ``budget``, or the ``until_decided`` cap."""
    f = spec.budget if spec.budget is not None else spec.max_budget
    assert f is not None
    return f


def design_fingerprint(
    spec: Spec, harness: Harness, items: dict[str, list[Item]]
) -> tuple[str, dict[tuple[str, str], str]]:
    """What the whole design depends on (every file's spec fingerprint, the budget, the seed),
    and each (benchmark, model) file's fingerprint under it."""
    files = {}
    for b in spec.benchmarks:
        for m in spec.models:
            own = dataclasses.replace(spec, models=[m], benchmarks=[b])
            files[(b, m.name)] = spec.fingerprint(
                b, m, grid_bytes(grid_for(own, harness)), [i.item_id for i in items[b]]
            )
    h = hashlib.sha256()
    for key in sorted(files):
        h.update(f"{key[0]}\0{key[1]}\0{files[key]}\n".encode())
    h.update(json.dumps(_mode(spec), sort_keys=True).encode())
    d = h.hexdigest()
    return d, {k: hashlib.sha256(f"{v}\0{d}".encode()).hexdigest() for k, v in files.items()}


def _mode(spec: Spec) -> dict[str, Any]:
    out: dict[str, Any] = {"seed": spec.budget_seed, "sample_share": DEFAULT_SAMPLE_SHARE}
    if spec.until_decided:
        out.update(stop="until_decided", max_budget=spec.max_budget)
    else:
        out.update(stop="budget", budget=spec.budget)
    return out


class _Round:
    """The engine side of the plan's ``answer``: rounds of cells, checkpointed per part."""

    def __init__(
        self,
        spec: Spec,
        harness: Harness,
        flat: list[tuple[str, Item]],
        work: Path,
        engine_factory: Any,
        progress: bool,
        budget: int,
    ) -> None:
        self.spec, self.harness, self.flat, self.work = spec, harness, flat, work
        self.factory, self.progress, self.budget = engine_factory, progress, budget
        M, N, K = len(spec.models), len(flat), len(harness.configs)
        self.observed = np.zeros((M, N, K), dtype=bool)
        self.correct = np.zeros((M, N, K), dtype=bool)
        self.results: dict[tuple[int, int], dict[str, Any]] = {}  # (model, item) -> merged cell results
        self.round = 0
        self.kind = "reference"
        self.lazy: _Lazy | None = None
        self.lazies: dict[str, _Lazy] = {}
        self.resumed = self.computed = 0
        self.busy = 0.0  # seconds in engine batches (not loading)

    def engine(self, mi: int) -> Any:
        """The model's engine; one model is loaded at a time (memory), so another is closed first."""
        m = self.spec.models[mi]
        if self.lazy is not None and self.lazy.m.name != m.name:
            self.lazy.close()
        self.lazy = self.lazies.setdefault(m.name, _Lazy(self.spec, m, self.factory))
        if self.lazy.engine is None:
            t = time.monotonic()
            self.lazy.get()
            if self.progress:
                print(f"[collect] budget: loaded {m.name} ({time.monotonic() - t:.1f}s)", file=sys.stderr, flush=True)
        return self.lazy.get()

    def set_kind(self, kind: str) -> None:
        """The next round's kind, from the planner (its progress lines)."""
        self.kind = kind

    def close(self) -> None:
        if self.lazy is not None:
            self.lazy.close()

    def __call__(self, mi: np.ndarray, ii: np.ndarray, ki: np.ndarray) -> np.ndarray:
        self.round += 1
        kind = self.kind
        keys = self.harness.keys
        cfgs = self.harness.configs
        per = max(1, (self.spec.batch_items or self.spec.chunk_items))
        for m in range(len(self.spec.models)):
            sel = np.flatnonzero(mi == m)
            if not len(sel):
                continue
            by_item: dict[int, list[int]] = {}
            for j in sel[np.lexsort((ki[sel], ii[sel]))].tolist():
                by_item.setdefault(int(ii[j]), []).append(int(ki[j]))
            order = sorted(by_item)
            stem = filename_for_model(self.spec.models[m].name)[: -len(".jsonl")]
            for p, lo in enumerate(range(0, len(order), per)):
                part = order[lo : lo + per]
                cells = [
                    Cells(
                        self.flat[i][1],
                        self.flat[i][0],
                        [cfgs[k] for k in by_item[i] if cfgs[k].scoring == "gen"],
                        [cfgs[k] for k in by_item[i] if cfgs[k].scoring != "gen"],
                        self.harness.exemplars.get(self.flat[i][0], []),
                    )
                    for i in part
                ]
                names = [[c.benchmark, c.item.item_id, [g.key for g in (*c.gens, *c.lls)]] for c in cells]
                path = self.work / f"r{self.round:02d}" / stem / f"chunk-{p:05d}.json"
                got = read_manifest(path)
                if isinstance(got, dict) and got.get("cells") == names and len(got.get("results") or ()) == len(part):
                    results = got["results"]
                    self.resumed += sum(len(by_item[i]) for i in part)
                else:
                    engine = self.engine(m)
                    t = time.monotonic()
                    results = run_cells(
                        engine,
                        self.harness,
                        cells,
                        model=self.spec.models[m].name,
                        chat_template=self.spec.models[m].chat_template,
                        parse=self.spec.parse,
                        chat_kwargs=self.spec.models[m].chat_template_kwargs,
                    )
                    atomic_write_bytes(path, json.dumps({"cells": names, "results": results}, sort_keys=True).encode())
                    self.computed += sum(len(by_item[i]) for i in part)
                    self.busy += time.monotonic() - t
                for i, r in zip(part, results):
                    self._merge(m, i, r)
                    for k in by_item[i]:
                        self.observed[m, i, k] = True
                        self.correct[m, i, k] = bool(r["correct"][keys[k]])
                self._line(kind, self.spec.models[m].name)
        return self.correct[mi, ii, ki]

    def _merge(self, m: int, i: int, r: dict[str, Any]) -> None:
        have = self.results.setdefault((m, i), {k: {} for k in r})
        for k, v in r.items():
            have[k].update(v)

    def decided(self) -> int:
        """(model, item) pairs whose robust status is known: a failure seen, or all K seen right."""
        return int((robust_status(self.correct, (~self.observed).view(np.int8)) != UNDECIDED).sum())

    def _line(self, kind: str, model: str) -> None:
        if not self.progress:
            return
        M, N, K = self.observed.shape
        spent = int(self.observed.sum())
        # no rate until the engine has computed a cell (a resumed round): not "nan cells/s"
        rate = f", {self.computed / self.busy:.1f} cells/s" if self.computed and self.busy > 0 else ""
        print(
            f"[collect] budget: round {self.round} ({kind}) {model} | cells {spent:,}/{self.budget:,} of the budget "
            f"({spent / (M * N * K):.1%} of {M * N * K:,}) | robust status decided {self.decided():,}/{M * N:,} | "
            f"{self.computed:,} computed, {self.resumed:,} resumed{rate}",
            file=sys.stderr,
            flush=True,
        )


def _grid_design(root: Path) -> dict[str, Any]:
    got = read_manifest(root / "grid.json")
    d = got.get(DESIGN_KEY) if isinstance(got, dict) else None  # grid.json holds the legend's extras at its top
    return d if isinstance(d, dict) else {}


def collect_budgeted(spec: Spec, harness: Harness, root: Path, *, progress: bool, engine_factory: Any) -> Path:
    """Run a budgeted collection of ``spec`` into ``root`` (module doc); returns ``root``."""
    spec.check_budget()
    harness, items = load_items_into(spec, harness)
    flat = [(b, it) for b in spec.benchmarks for it in items[b]]
    M, N, K = len(spec.models), len(flat), len(harness.configs)
    fraction = budget_fraction(spec)
    where = spec.output
    try:
        budget = budget_cells(fraction, (M, N, K))
    except BudgetError as exc:
        raise CollectError(where, str(exc), fix="raise the budget (--budget / --max-budget)") from None
    dfp, fps = design_fingerprint(spec, harness, items)
    fnames = {m.name: filename_for_model(m.name) for m in spec.models}
    stems = {n: f[: -len(".jsonl")] for n, f in fnames.items()}

    def manifest_path(b: str, m: str) -> Path:
        return root / "_raw" / b / f"{stems[m]}{MANIFEST_SUFFIX}"

    if _grid_design(root).get("fingerprint") == dfp and all(
        verify(read_manifest(manifest_path(b, m.name)), root, fingerprint=fps[(b, m.name)], need_raw=spec.raw_sidecar)
        is None
        for b in spec.benchmarks
        for m in spec.models
    ):
        if progress:
            print(f"[collect] budget: {root} is complete for this design; nothing to collect", file=sys.stderr)
        return root

    base = root / WORK
    work = base / dfp[:16]
    if base.is_dir():  # another design's checkpoints (the spec, budget or seed changed) cannot be reused
        for d in base.iterdir():
            if d != work:
                shutil.rmtree(d, ignore_errors=True) if d.is_dir() else d.unlink(missing_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(work / "fingerprint", (dfp + "\n").encode())

    grid = grid_for(spec, harness)
    ans = _Round(spec, harness, flat, work, engine_factory, progress, budget)
    t0 = time.monotonic()
    try:
        targets = BandTargets(scope_groups(np.array([b for b, _ in flat], dtype=object)))
        p = plan(
            ans, (M, N, K), grid.reference_index, fraction, spec.budget_seed, targets=targets, on_round=ans.set_kind
        )
    except BudgetError as exc:
        raise CollectError(where, str(exc), fix="raise the budget (--budget / --max-budget)") from None
    finally:
        ans.close()
    assert np.array_equal(p.observed, ans.observed)

    keys = harness.keys
    reason = MISSING_REASONS[NOT_COLLECTED - 1]
    pos = 0
    for b in spec.benchmarks:
        n_b = len(items[b])
        for mi, m in enumerate(spec.models):
            lines, raws = [], []
            for i in range(pos, pos + n_b):
                it = flat[i][1]
                r = ans.results[(mi, i)]  # the reference round observed every (model, item)
                cell = Cells(it, b, (), ())
                line = record_line(cell, r, m.name)
                line["correct"] = {k: r["correct"][k] if k in r["correct"] else reason for k in keys}
                lines.append(line)
                raws.append(raw_line(cell, r))
            final = root / b / fnames[m.name]
            raw = root / "_raw" / b / fnames[m.name]
            if spec.raw_sidecar:
                atomic_write_bytes(raw, "".join(dumps_line(x) + "\n" for x in raws).encode())
            write_model_lines(final, lines)
            lazy = ans.lazies.get(m.name) or _Lazy(spec, m, engine_factory)
            man = {
                "fingerprint": fps[(b, m.name)],
                "design_fingerprint": dfp,
                "records": {"path": f"{b}/{fnames[m.name]}", **(file_facts(final) or {})},
                "raw": {"path": f"_raw/{b}/{fnames[m.name]}", **(file_facts(raw) or {})} if spec.raw_sidecar else None,
                "provenance": lazy.provenance(),
            }
            atomic_write_bytes(manifest_path(b, m.name), (json.dumps(man, indent=1, sort_keys=True) + "\n").encode())
        pos += n_b
    ids = SimpleNamespace(benchmark=np.array([b for b, _ in flat]), item_id=np.array([it.item_id for _, it in flat]))
    models = tuple(m.name for m in spec.models)
    d = design(p, fraction=fraction, seed=spec.budget_seed, keys=tuple(keys), items=ids, models=models)
    d.update(_mode(spec), fingerprint=dfp)
    write_grid(dataclasses.replace(grid, extra={**grid.extra, DESIGN_KEY: d}), root)
    shutil.rmtree(work, ignore_errors=True)
    for x in (base, base.parent):
        try:
            x.rmdir()
        except OSError:
            pass
    if progress:
        decided = int((p.status != UNDECIDED).sum())
        print(
            f"[collect] budget: done: {p.cells:,} of {M * N * K:,} cells ({p.cells / (M * N * K):.1%}; budget "
            f"{budget:,}), {len(p.rounds)} round(s); robust status known for {decided:,} of {M * N:,} "
            f"(model, item) pairs ({int((p.status == ROBUST).sum()):,} robust); random sample {len(p.sample)} "
            f"item(s); {time.monotonic() - t0:.1f}s -> {root}",
            file=sys.stderr,
            flush=True,
        )
    return root


__all__ = ["WORK", "budget_fraction", "collect_budgeted", "design_fingerprint"]
