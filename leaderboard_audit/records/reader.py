"""Read and validate a records directory (docs/records.md).

The steps: find the legend (``legend.py``), list the records files and their layout
(``layout.py``), parse each file (``lines.py``), name each file's benchmark and model,
then align everything into one tensor (:func:`assemble`, shared with the table reader
and the importers).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from .errors import ProblemLog, RecordsError
from .grid import Grid, infer_grid
from .layout import confined, discover, resolve
from .legend import GRID_NAME, MAX_GRID_BYTES, find_legend, read_legend_file
from .lines import MAX_LINE_BYTES, ModelFile, read_model_file
from .graded import normalised_score
from .missing import normalised
from .model import ANSWER_CLASS_ABSENT, PRED_ABSENT, PRED_UNPARSEABLE, UNPARSED_ABSENT, Items, Records
from .names import RESERVED_FIX, filename_for_model, model_from_filename, reserved_benchmark
from .safe_io import JSON_ERRORS

FIX_MATCHED = (
    "every model needs the same item ids in every benchmark; re-collect the "
    "missing items, or pass intersect=True (pytest: --audit-intersect) to audit "
    "only the common items"
)


class InferredLegendWarning(UserWarning):
    """grid.json was missing and the legend was inferred from the key convention."""


class InferredLayoutWarning(UserWarning):
    """The records were not in the canonical layout; how they were read is in the message."""


def read_grid_file(path: Path) -> Grid:
    """A legend file: records-v1 grid.json, or a release-style legend (``legend.py``)."""
    return read_legend_file(path, MAX_GRID_BYTES)


def _legend(root: Path, root_real: Path) -> tuple[Grid | None, Path | None]:
    path = find_legend(root)
    if path is None:
        return None, None
    confined(path, root_real, path.name)
    return read_grid_file(path), path


def read_records_dir(
    path: str | os.PathLike[str], *, intersect: bool = False, max_line_bytes: int = MAX_LINE_BYTES
) -> Records:
    """Load a records directory in any layout of docs/records.md, validating every matching rule.

    With ``intersect=True`` items missing for some model are dropped instead of
    being an error; ``Records.dropped`` says how many per benchmark.
    """
    root = Path(path)
    if not root.is_dir():
        raise RecordsError.one(
            str(root),
            None,
            "not a records directory",
            fix="pass a directory holding grid.json and <benchmark>/<model>.jsonl",
        )
    root_real = root.resolve()
    grid, legend_path = _legend(root, root_real)
    log = ProblemLog()
    layout, found = discover(root, root_real, log)
    keys = list(grid.keys) if grid else None
    read: list[tuple[Any, ModelFile]] = []
    for f in found:
        mf, got = read_model_file(f.path, keys, log, max_line_bytes)
        if keys is None and got:
            keys = got
        read.append((f, mf))
    files, layout_notes = resolve(read, layout, root, log)
    log.raise_if_any()
    notes: list[str] = []
    if grid is None:
        grid = infer_grid(keys or [], str(root / GRID_NAME))
        note = f"{root}: no grid.json; legend inferred from the config keys (reference {grid.reference!r})"
        notes.append(note)
        warnings.warn(note, InferredLegendWarning, stacklevel=2)
    elif legend_path is not None and legend_path.name != GRID_NAME:
        layout_notes = [f"{root}: legend read from {legend_path.name}"] + layout_notes
    rec = assemble(files, grid, str(root), intersect=intersect, notes=notes)
    if layout_notes:
        text = "; ".join(n.removeprefix(f"{root}: ") for n in layout_notes)
        warnings.warn(f"{root}: {text}", InferredLayoutWarning, stacklevel=2)
        rec = replace(rec, layout_notes=(f"{root}: {text}",))
    return rec


def _check_every_model_has_files(files: dict[str, dict[str, ModelFile]], models: list[str], source: str) -> None:
    log = ProblemLog()
    for b, per in sorted(files.items()):  # every reader and importer ends here: `pooled` is reserved
        if reserved_benchmark(b):
            first = next(iter(per.values()), None)
            log.add(
                first.path if first else f"{source}/{b}", None, f"benchmark name {b!r} is reserved", fix=RESERVED_FIX
            )
    for b, per in sorted(files.items()):
        for m in models:
            if m not in per:
                log.add(
                    f"{source}/{b}",
                    None,
                    f"model {m!r} has no file for benchmark {b!r}",
                    fix=f"add {b}/{filename_for_model(m)}",
                )
    log.raise_if_any()


def _item_order(
    b: str,
    per: dict[str, ModelFile],
    models: list[str],
    intersect: bool,
    log: ProblemLog,
    dropped: dict[str, int],
    source: str,
) -> list[str] | None:
    """Benchmark ``b``'s item ids in the first model's file order; None if they do not match."""
    order = per[models[0]].ids
    if intersect:
        common = set(order).intersection(*(set(per[m].ids) for m in models[1:]))
        union = set().union(*(set(per[m].ids) for m in models))
        order = [i for i in order if i in common]
        dropped[b] = len(union) - len(order)
        if not order:
            log.add(f"{source}/{b}", None, f"no item of benchmark {b!r} is common to all models")
            return None
        return order
    ref = set(order)
    before = log.total
    for m in models[1:]:
        mf = per[m]
        if mf.ids == order:  # the common case: the same items in the same order
            continue
        other = set(mf.ids)
        for iid in [i for i in order if i not in other]:
            log.add(
                mf.path,
                None,
                f"model {m!r} lacks item {iid!r} of benchmark {b!r} (present for model {models[0]!r})",
                fix=FIX_MATCHED,
            )
        for r, iid in enumerate(mf.ids):
            if iid not in ref:
                log.add(
                    mf.path,
                    mf.lines[r],
                    f"item {iid!r} of benchmark {b!r} is present for model {m!r} but absent for model {models[0]!r}",
                    fix=FIX_MATCHED,
                    unit=mf.unit,
                )
    return None if log.total > before or log else order


class _Blocks:
    """The per-benchmark blocks of every array, concatenated along items at the end."""

    def __init__(self, files: dict[str, dict[str, ModelFile]], grid: Grid):
        every = [mf for per in files.values() for mf in per.values()]
        self.has_pred = any(mf.pred for mf in every)
        self.has_margin = any(mf.margin for mf in every)
        self.has_class = any(mf.answer_class for mf in every)
        self.has_unparsed = any(u != UNPARSED_ABSENT for mf in every for u in mf.unparsed)
        self.has_missing = any(mf.missing is not None for mf in every)
        self.has_score = any(mf.score is not None for mf in every)
        self.kpos = {k: j for j, k in enumerate(grid.keys)}
        self.K = len(grid)
        self.arrays: dict[str, list[np.ndarray]] = {
            n: [] for n in ("correct", "pred", "margin", "answer_class", "unparsed", "missing", "score")
        }
        self.bench: list[str] = []
        self.ids: list[str] = []
        self.gold: list[Any] = []
        self.question: list[str | None] = []
        self.options: list[list[str] | None] = []

    def add(self, b: str, per: dict[str, ModelFile], models: list[str], order: list[str]) -> None:
        M, n, K = len(models), len(order), self.K
        block = np.empty((M, n, K), dtype=bool)
        pblock = np.full((M, n, K), PRED_ABSENT, dtype=np.int16) if self.has_pred else None
        mblock = np.full((M, n, K), np.nan) if self.has_margin else None
        cblock = np.full((M, n, K), ANSWER_CLASS_ABSENT, dtype=np.int8) if self.has_class else None
        ublock = np.full((M, n), UNPARSED_ABSENT, dtype=np.int16) if self.has_unparsed else None
        xblock = np.zeros((M, n, K), dtype=np.int8) if self.has_missing else None
        sblock = np.zeros((M, n, K), dtype=np.float64) if self.has_score else None
        text_q: list[str | None] = [None] * n
        text_o: list[list[str] | None] = [None] * n
        gold_b: list[Any] = [None] * n
        text_missing = True  # some item still lacks its question, options or gold
        for mi, m in enumerate(models):
            mf = per[m]
            if mf.ids == order:  # the common case: rows already in the benchmark's order
                rows = np.arange(n, dtype=np.intp)
            else:
                pos = {iid: r for r, iid in enumerate(mf.ids)}
                rows = np.fromiter((pos[i] for i in order), dtype=np.intp, count=n)
            block[mi] = mf.correct[rows]
            if xblock is not None and mf.missing is not None:
                xblock[mi] = mf.missing[rows]
            if sblock is not None:  # a file of 0/1 outcomes only: its bits are its scores
                sblock[mi] = mf.correct[rows] if mf.score is None else mf.score[rows]
            scattered = pblock is not None or mblock is not None or cblock is not None
            inv = {r: j for j, r in enumerate(rows.tolist())} if scattered else {}
            if pblock is not None:
                self._scatter(pblock[mi], mf.pred, inv, lambda v: PRED_UNPARSEABLE if v is None else v)
            if mblock is not None:
                self._scatter(mblock[mi], mf.margin, inv, lambda v: np.nan if v is None else v)
            if cblock is not None:
                self._scatter(cblock[mi], mf.answer_class, inv, lambda v: v)
            if ublock is not None and mf.unparsed:
                ublock[mi] = np.asarray(mf.unparsed, dtype=np.int16)[rows]
            rows_n = len(mf.ids)
            if text_missing and (
                mf.question.count(None) < rows_n or mf.options.count(None) < rows_n or mf.gold.count(None) < rows_n
            ):  # this file has some text to fill in
                for j, r in enumerate(rows.tolist()):
                    if text_q[j] is None and mf.question[r] is not None:
                        text_q[j] = mf.question[r]
                    if text_o[j] is None and mf.options[r] is not None:
                        text_o[j] = mf.options[r]
                    if gold_b[j] is None and mf.gold[r] is not None:
                        gold_b[j] = mf.gold[r]
                text_missing = None in text_q or None in text_o or None in gold_b
        for name, arr in (
            ("correct", block),
            ("pred", pblock),
            ("margin", mblock),
            ("answer_class", cblock),
            ("unparsed", ublock),
            ("missing", xblock),
            ("score", sblock),
        ):
            if arr is not None:
                self.arrays[name].append(arr)
        self.bench += [b] * n
        self.ids += order
        self.gold += gold_b
        self.question += text_q
        self.options += text_o

    def _scatter(self, out: np.ndarray, cells: dict[int, dict[str, Any]], inv: dict[int, int], conv) -> None:
        for r, d in cells.items():
            j = inv.get(r)
            if j is not None:
                for k, v in d.items():
                    out[j, self.kpos[k]] = conv(v)

    def joined(self, name: str) -> np.ndarray | None:
        parts = self.arrays[name]
        return np.concatenate(parts, axis=1) if parts else None


def assemble(
    files: dict[str, dict[str, ModelFile]],
    grid: Grid,
    source: str,
    *,
    intersect: bool = False,
    notes: list[str] | None = None,
) -> Records:
    """Align per-file rows into one tensor; enforce the matching rules."""
    notes = list(notes or [])
    models = sorted({m for per in files.values() for m in per})
    _check_every_model_has_files(files, models, source)
    log = ProblemLog()
    dropped: dict[str, int] = {}
    blocks = _Blocks(files, grid)
    for b in sorted(files):
        order = _item_order(b, files[b], models, intersect, log, dropped, source)
        if order is not None and not log:
            blocks.add(b, files[b], models, order)
    log.raise_if_any()
    if intersect and any(dropped.values()):
        notes.append(
            "intersection of items audited; dropped per benchmark: "
            + ", ".join(f"{b}={n}" for b, n in sorted(dropped.items()))
        )
    items = Items(
        np.array(blocks.bench, dtype=object),
        np.array(blocks.ids, dtype=object),
        blocks.gold,
        blocks.question,
        blocks.options,
    )
    return Records(
        correct=blocks.joined("correct"),
        models=tuple(models),
        items=items,
        grid=grid,
        pred=blocks.joined("pred"),
        margin=blocks.joined("margin"),
        unparsed=blocks.joined("unparsed"),
        answer_class=blocks.joined("answer_class"),
        missing=normalised(blocks.joined("missing")),
        score=normalised_score(blocks.joined("score")),
        source=source,
        notes=tuple(notes),
        dropped=dropped if intersect else {},
    )


__all__ = [
    "FIX_MATCHED",
    "JSON_ERRORS",
    "MAX_GRID_BYTES",
    "MAX_LINE_BYTES",
    "InferredLayoutWarning",
    "InferredLegendWarning",
    "ModelFile",
    "assemble",
    "confined",
    "filename_for_model",
    "model_from_filename",
    "read_grid_file",
    "read_model_file",
    "read_records_dir",
]
