"""Shared assembly: per-run units of (benchmark, model, config) -> Records.

Each importer reduces its input to :class:`Unit` objects -- one benchmark, one
model, one configuration, a correctness bit (plus optional prediction and margin)
per item -- and :func:`build_records` aligns them into a records-v1 ``Records``
through the same ``assemble`` the records reader uses, so imported records obey
every matching rule of docs/spec/RECORDS.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..records.errors import ProblemLog, RecordsError
from ..records.graded import normalised_score
from ..records.grid import DEFAULT_REFERENCE, Config, Grid
from ..records.model import Records
from ..records.reader import ModelFile, assemble, filename_for_model
from ._values import json_safe
from .fixes import FIX_COVERAGE, FIX_ONE_LEGEND


@dataclass
class ItemMeta:
    item_id: str | None = None
    gold: Any = None
    question: str | None = None
    options: list[str] | None = None


@dataclass
class Unit:
    """One (benchmark, model, config) slice read from one run."""

    source: str  # where it came from, for messages
    benchmark: str
    model: str
    config: Config
    bits: dict[str, float] = field(default_factory=dict)  # match key -> 0/1, or a graded outcome in [0, 1]
    pred: dict[str, int | None] = field(default_factory=dict)  # match key -> option index / None
    margin: dict[str, float] = field(default_factory=dict)
    meta: dict[str, ItemMeta] = field(default_factory=dict)


def _short(xs: list[str], n: int = 3) -> str:
    shown = ", ".join(repr(x) for x in xs[:n])
    return shown + (f" (+{len(xs) - n} more)" if len(xs) > n else "")


def merge_configs(units: list[Unit], log: ProblemLog) -> list[Config]:
    """The legend's configs in first-seen order; one key must mean one config."""
    seen: dict[str, Config] = {}
    origin: dict[str, str] = {}
    for u in units:
        c = u.config
        if c.key not in seen:
            seen[c.key] = c
            origin[c.key] = u.source
            continue
        old = seen[c.key]
        if (old.scoring, old.template, old.ordering, old.permutation) != (
            c.scoring,
            c.template,
            c.ordering,
            c.permutation,
        ):
            log.add(
                u.source,
                None,
                f"config {c.key!r} is described differently than in {origin[c.key]}",
                fix="give each distinct configuration its own key",
            )
    return list(seen.values())


def choose_reference(keys: list[str], reference: str | None, source: str, notes: list[str]) -> str:
    if reference is None:
        reference = DEFAULT_REFERENCE if DEFAULT_REFERENCE in keys else keys[0]
        notes.append(
            f"reference configuration: {reference!r} "
            + (
                "(the default)"
                if reference == DEFAULT_REFERENCE
                else "(the first imported; choose one with reference=/--reference)"
            )
        )
    elif reference not in keys:
        raise RecordsError.one(source, None, f"reference {reference!r} is not one of the imported configs {keys}")
    return reference


def check_writable(configs: list[Config], units: list[Unit], log: ProblemLog) -> None:
    """A legend that cannot be written as JSON (values nested too deeply) is an input problem."""
    for c in configs:
        if not json_safe(c.to_json()):
            src = next(u.source for u in units if u.config.key == c.key)
            log.add(
                src,
                None,
                f"config {c.key!r}: its description is nested too deeply to record",
                fix="check the run's configuration files",
            )


def index_cells(units: list[Unit], log: ProblemLog) -> dict[tuple[str, str, str], Unit]:
    """One unit per (benchmark, model, config); a second one is a problem."""
    cells: dict[tuple[str, str, str], Unit] = {}
    for u in units:
        k = (u.benchmark, u.model, u.config.key)
        if k in cells:
            log.add(
                u.source,
                None,
                f"benchmark {u.benchmark!r}, model {u.model!r}, config "
                f"{u.config.key!r} was already read from {cells[k].source}",
                fix="keep one run per model x configuration, or name them apart in the mapping",
            )
            continue
        cells[k] = u
    return cells


def check_coverage(
    cells: dict[tuple[str, str, str], Unit],
    benchmarks: list[str],
    models: list[str],
    keys: list[str],
    source: str,
    log: ProblemLog,
) -> None:
    """One legend for all benchmarks, and a run for every (benchmark, model, config)."""
    per_bench = {b: sorted({k for (bb, _, k) in cells if bb == b}) for b in benchmarks}
    if len({tuple(v) for v in per_bench.values()}) > 1:
        for b, ks in per_bench.items():
            log.add(source, None, f"benchmark {b!r} has config(s) {_short(ks, 4)}")
        log.fix = FIX_ONE_LEGEND
        log.raise_if_any()
    for b in benchmarks:
        for m in models:
            for key in keys:
                if (b, m, key) not in cells:
                    have = sorted(
                        {s.source for (bb, mm, _), s in cells.items() if bb == b and mm == m}
                        | {s.source for (bb, _, kk), s in cells.items() if bb == b and kk == key}
                    )
                    log.add(
                        source,
                        None,
                        f"no run for benchmark {b!r}, model {m!r}, config "
                        f"{key!r} (runs of that benchmark: {_short(have)})",
                        fix="every model needs a run in every configuration of every benchmark",
                    )


def report_missing(bunits: list[Unit], b: str, union: set[str], match_what: str, log: ProblemLog) -> None:
    """Name each run that lacks items another run of the benchmark has."""
    for u in bunits:
        lacks = sorted(union - set(u.bits))
        if lacks:
            other = next(o for o in bunits if set(lacks[:1]) <= set(o.bits))
            log.add(
                u.source,
                None,
                f"benchmark {b!r}: this run (model {u.model!r}, "
                f"config {u.config.key!r}) lacks {len(lacks)} {match_what}(s) that "
                f"{other.source} has, e.g. {_short(lacks, 2)}",
                fix=FIX_COVERAGE,
            )


def merged_meta(key: str, units: list[Unit]) -> ItemMeta:
    """An item's facts: the first unit that knows each one (reference config first)."""
    mt = ItemMeta()
    for u in units:
        got = u.meta.get(key)
        if got is None:
            continue
        mt.item_id = mt.item_id or got.item_id
        mt.gold = got.gold if mt.gold is None else mt.gold
        mt.question = mt.question or got.question
        mt.options = mt.options or got.options
    return mt


def model_file(
    b: str,
    m: str,
    order: list[str],
    keys: list[str],
    cells: dict[tuple[str, str, str], Unit],
    metas: list[ItemMeta],
    source: str,
) -> ModelFile:
    """One model's items of one benchmark, keyed by match key, as the records reader holds a file."""
    mf = ModelFile(path=f"{source}/{b}/{filename_for_model(m)}", model=m)
    mine = [cells[(b, m, key)] for key in keys]
    mf.ids = list(order)
    mf.lines = list(range(1, len(order) + 1))
    v = np.array([[u.bits[k] for u in mine] for k in order], dtype=np.float64).reshape(len(order), len(keys))
    mf.correct = v == 1
    mf.score = normalised_score(v)  # a graded outcome (records/graded.py): the bit is a win outright
    mf.gold = [mt.gold for mt in metas]
    mf.question = [mt.question for mt in metas]
    mf.options = [mt.options for mt in metas]
    for r, k in enumerate(order):
        p = {key: u.pred[k] for key, u in zip(keys, mine) if k in u.pred}
        if p:
            mf.pred[r] = p
        g = {key: u.margin[k] for key, u in zip(keys, mine) if k in u.margin}
        if g:
            mf.margin[r] = g
    return mf


def display_ids(b: str, order: list[str], metas: list[ItemMeta], notes: list[str]) -> list[str]:
    """Item ids from the documents when they are unique, else the match keys."""
    ids = [mt.item_id or k for k, mt in zip(order, metas)]
    if len(set(ids)) != len(ids):
        notes.append(f"benchmark {b!r}: item ids from the documents are not unique; using the match keys as item ids")
        return list(order)
    return ids


def build_records(
    units: list[Unit],
    *,
    source: str,
    reference: str | None = None,
    intersect: bool = False,
    notes: list[str] | None = None,
    grid_extra: dict[str, Any] | None = None,
    match_what: str = "item",
) -> Records:
    """Check coverage (every model x config has the same items) and assemble.

    The items every run of a benchmark covers are found here (a unit is one config of one
    model); the per-model files are then aligned by the records reader's ``assemble``.
    """
    notes = list(notes or [])
    if not units:
        raise RecordsError.one(
            source, None, "nothing to import: no runs found", fix="point at the directory that holds the runs"
        )
    log = ProblemLog()
    configs = merge_configs(units, log)
    check_writable(configs, units, log)
    log.raise_if_any()
    keys = [c.key for c in configs]
    reference = choose_reference(keys, reference, source, notes)
    grid = Grid(tuple(configs), reference, extra=dict(grid_extra or {}))
    cells = index_cells(units, log)
    log.raise_if_any()
    benchmarks = sorted({u.benchmark for u in units})
    models = sorted({u.model for u in units})
    check_coverage(cells, benchmarks, models, keys, source, log)
    log.raise_if_any()

    files: dict[str, dict[str, ModelFile]] = {}
    dropped: dict[str, int] = {}
    display: dict[str, dict[str, str]] = {}
    for b in benchmarks:
        bunits = [cells[(b, m, k)] for m in models for k in keys]
        union = set().union(*(set(u.bits) for u in bunits))
        common = set.intersection(*(set(u.bits) for u in bunits))
        if common != union and not intersect:
            report_missing(bunits, b, union, match_what, log)
            continue
        dropped[b] = len(union) - len(common)
        if not common:
            log.add(source, None, f"benchmark {b!r}: no {match_what} is common to all runs")
            continue
        # order: the reference config's first model's order
        order = [k for k in cells[(b, models[0], reference)].bits if k in common]
        meta_units = [cells[(b, m, reference)] for m in models] + bunits
        metas = [merged_meta(k, meta_units) for k in order]
        display[b] = dict(zip(order, display_ids(b, order, metas, notes)))
        files[b] = {m: model_file(b, m, order, keys, cells, metas, source) for m in models}
    log.raise_if_any()
    if any(dropped.values()):
        notes.append(
            f"intersection of {match_what}s imported; dropped per benchmark: "
            + ", ".join(f"{b}={n}" for b, n in sorted(dropped.items()) if n)
        )
    rec = assemble(files, grid, source, notes=notes)
    ids = np.array(
        [display[b][k] for b, k in zip(rec.items.benchmark.tolist(), rec.items.item_id.tolist())], dtype=object
    )
    rec = replace(rec, items=replace(rec.items, item_id=ids))
    return replace(rec, dropped=dropped) if intersect else rec


def none_mapped(root: Any, skipped: list[str], what: str = "runs") -> RecordsError:
    """The error of a mapping that names none of the runs an importer found."""
    return RecordsError.one(
        str(root),
        None,
        f"the mapping names none of the {what} found ({', '.join(skipped[:5])})",
        fix=f"match the mapping's {'run/task' if what == 'runs' else 'log'} names",
    )
