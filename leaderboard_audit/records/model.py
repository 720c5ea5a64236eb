"""The Records type: the correctness tensor C[model, item, config] and its legend."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .errors import RecordsError
from .graded import normalised_score
from .grid import Grid
from .missing import FIX_MISSING_CORRECT, check_correct

PRED_UNPARSEABLE = -1  # `pred: null` in the file: the answer could not be parsed
PRED_ABSENT = -2  # no prediction recorded for this (model, item, config)
UNPARSED_ABSENT = -1  # no unparsed count recorded for this (model, item)
# What a generation answer looked like (the line's optional `answer_class`); the array holds
# the index into this tuple, ANSWER_CLASS_ABSENT where no class was recorded.
ANSWER_CLASSES: tuple[str, ...] = ("letter", "enumeration", "refusal", "empty", "other")
ANSWER_CLASS_ABSENT = -1


@dataclass(frozen=True)
class Items:
    """Per-item facts shared by every model. Arrays are aligned with the item axis."""

    benchmark: np.ndarray  # str, object array
    item_id: np.ndarray  # str, object array
    gold: list[Any]  # int, letter or None
    question: list[str | None]
    options: list[list[str] | None]

    def __len__(self) -> int:
        return len(self.item_id)

    def take(self, idx: np.ndarray | slice) -> Items:
        if isinstance(idx, slice):
            return Items(self.benchmark[idx], self.item_id[idx], self.gold[idx], self.question[idx], self.options[idx])
        idx = np.asarray(idx)
        at = idx.tolist()  # Python ints index lists several times faster than numpy scalars
        gold, question, options = self.gold, self.question, self.options
        return Items(
            self.benchmark[idx],
            self.item_id[idx],
            [gold[i] for i in at],
            [question[i] for i in at],
            [options[i] for i in at],
        )


def take_items(a: np.ndarray, idx: np.ndarray | slice) -> np.ndarray:
    """``a[:, idx]``. For an index array over a C-contiguous tensor, each (model, item) cell's
    configs are one run of bytes, taken as one opaque element (~3x faster than numpy's
    fancy indexing of the middle axis: the leave-one-out check's reduced sets copy the
    tensor ~14 times)."""
    if isinstance(idx, slice) or a.ndim < 3 or not a.flags.c_contiguous or a.dtype.hasobject or a.size == 0:
        return a[:, idx]
    cell = a.dtype.itemsize * int(np.prod(a.shape[2:]))
    rows = a.view(np.dtype((np.void, cell))).reshape(a.shape[:2])
    return np.take(rows, np.asarray(idx), axis=1).view(a.dtype).reshape((a.shape[0], -1, *a.shape[2:]))


def _frozen(a: np.ndarray | None) -> np.ndarray | None:
    """A read-only view of ``a`` (``a`` itself keeps its flags)."""
    if a is None:
        return None
    v = a.view()
    v.flags.writeable = False
    return v


def freeze(records: Records) -> Records:
    """Make a freshly loaded set's own arrays read-only (in place; returned for chaining).

    The readers do this: nothing writes into loaded records, and read-only memory lets
    the metrics share what they derive from it across views (``metrics.per_model.derived``)."""
    freeze_arrays(
        records.correct,
        records.pred,
        records.margin,
        records.unparsed,
        records.answer_class,
        records.missing,
        records.score,
    )
    return records


def freeze_arrays(*arrays: np.ndarray | None) -> None:
    """``freeze`` for loose arrays: each read-only, and the arrays whose memory it shows."""
    for a in arrays:
        while isinstance(a, np.ndarray):
            a.flags.writeable = False
            a = a.base


@dataclass(frozen=True)
class Records:
    """A records set (docs/spec/RECORDS.md).

    ``correct`` is a boolean array (models x items x configs); items are grouped
    by benchmark (benchmarks in sorted order), models sorted by name. ``pred``
    (int16, ``PRED_UNPARSEABLE`` / ``PRED_ABSENT``), ``margin`` (float64, NaN
    when absent) and ``answer_class`` (int8 index into ``ANSWER_CLASSES``,
    ``ANSWER_CLASS_ABSENT`` when absent) are optional arrays of the same shape;
    ``unparsed`` (int16, models x items, ``UNPARSED_ABSENT`` when absent) is the
    count of generation configs with no parseable answer. ``layout_notes`` says
    how the files were read when the layout was not the canonical one
    (docs/records.md, "The paper's release"); it describes the files, not the data.
    ``missing`` (int8, same shape as ``correct``) is None for a complete grid, else
    ``OBSERVED`` (0) where a cell was observed and the code of why it is missing
    elsewhere (records/missing.py; ``correct`` is False there). ``score`` (float64, same
    shape) is None for a boolean set, else every cell's graded outcome in [0, 1]
    (records/graded.py): ``correct`` is then ``score == 1``, and 0 at a missing cell.
    """

    correct: np.ndarray
    models: tuple[str, ...]
    items: Items
    grid: Grid
    pred: np.ndarray | None = None
    margin: np.ndarray | None = None
    source: str = ""
    notes: tuple[str, ...] = ()
    dropped: dict[str, int] = field(default_factory=dict)
    unparsed: np.ndarray | None = None
    answer_class: np.ndarray | None = None
    layout_notes: tuple[str, ...] = ()
    missing: np.ndarray | None = None
    score: np.ndarray | None = None

    def __post_init__(self) -> None:
        # a set (or a subset) whose outcomes are all 0 or 1 is boolean and has no score
        # (records/graded.py), however it was built
        if self.score is not None:
            object.__setattr__(self, "score", normalised_score(self.score))
        if self.missing is not None:  # a complete set pays nothing
            self._check_missing_bits()

    def _check_missing_bits(self) -> None:
        """A missing cell is 0 in ``correct`` (records/missing.py), whoever built the set: a 1
        there would be read as an answer by every quantity that reads the bits (a packed file
        or a cache entry with a valid checksum can hold one; the readers construct ``Records``,
        so this is their check too). One vectorised pass (``missing.correct_at_missing``)."""
        why = check_correct(self.correct, self.missing)
        if why is not None:
            raise RecordsError.one(self.source or "<records>", None, why, fix=FIX_MISSING_CORRECT)

    @property
    def graded(self) -> bool:
        """Whether some outcome is graded (strictly between 0 and 1): ``score`` is present."""
        return self.score is not None

    @property
    def complete(self) -> bool:
        """Whether every cell was observed (no ``missing`` mask)."""
        return self.missing is None

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.correct.shape  # type: ignore[return-value]

    @property
    def benchmarks(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.items.benchmark.tolist())))

    @property
    def configs(self) -> tuple[str, ...]:
        return self.grid.keys

    def read_only(self) -> Records:
        """The same records with read-only views of its arrays (nothing copied).

        What the audit hands to the checks (``scopes.scope_records``): an array that
        cannot change lets the metrics compute what several checks share (robust masks,
        counts) once per array (``metrics.per_model``)."""
        return replace(
            self,
            correct=_frozen(self.correct),
            pred=_frozen(self.pred),
            margin=_frozen(self.margin),
            unparsed=_frozen(self.unparsed),
            answer_class=_frozen(self.answer_class),
            missing=_frozen(self.missing),
            score=_frozen(self.score),
        )

    def _take_items(self, idx: np.ndarray | slice) -> Records:
        def cut(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else _frozen(take_items(a, idx))

        return replace(
            self,
            correct=cut(self.correct),
            items=self.items.take(idx),
            pred=cut(self.pred),
            margin=cut(self.margin),
            unparsed=cut(self.unparsed),
            answer_class=cut(self.answer_class),
            missing=cut(self.missing),
            score=cut(self.score),
        )

    def scope(self, benchmark: str) -> Records:
        """One benchmark's items; a view (no copy) since items are grouped by benchmark.

        Like ``select_items`` and ``select_models``, the arrays it returns are read-only."""
        where = np.flatnonzero(self.items.benchmark == benchmark)
        if where.size == 0:
            raise KeyError(f"no benchmark {benchmark!r}; have {list(self.benchmarks)}")
        return self.select_items(where)

    def select_items(self, idx: Sequence[int] | np.ndarray) -> Records:
        """A subset of items: a view when ``idx`` is a run of consecutive items (leaving out
        the first or last benchmark), else a copy of the selected cells only."""
        idx = np.asarray(idx, dtype=np.intp)
        lo = int(idx[0]) if idx.size else -1
        if 0 <= lo and lo + idx.size <= self.correct.shape[1] and bool(np.all(np.diff(idx) == 1)):
            return self._take_items(slice(lo, lo + idx.size))
        return self._take_items(idx)

    def select_models(self, names: Sequence[str]) -> Records:
        """A subset of models, in the given order."""
        pos = {m: i for i, m in enumerate(self.models)}
        missing = [n for n in names if n not in pos]
        if missing:
            raise KeyError(f"unknown model(s) {missing}; have {list(self.models)}")
        idx = np.array([pos[n] for n in names], dtype=np.intp)

        def cut(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else _frozen(a[idx])

        return replace(
            self,
            correct=cut(self.correct),
            models=tuple(names),
            pred=cut(self.pred),
            margin=cut(self.margin),
            unparsed=cut(self.unparsed),
            answer_class=cut(self.answer_class),
            missing=cut(self.missing),
            score=cut(self.score),
        )

    def equals(self, other: Records) -> bool:
        """Exact equality of content (used by round-trip tests)."""

        def same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
            if a is None or b is None:
                return a is None and b is None
            return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))

        return (
            self.models == other.models
            and self.grid.to_json() == other.grid.to_json()
            and same(self.correct, other.correct)
            and same(self.pred, other.pred)
            and same(self.margin, other.margin)
            and same(self.unparsed, other.unparsed)
            and same(self.answer_class, other.answer_class)
            and same(self.missing, other.missing)
            and same(self.score, other.score)
            and self.items.benchmark.tolist() == other.items.benchmark.tolist()
            and self.items.item_id.tolist() == other.items.item_id.tolist()
            and self.items.gold == other.items.gold
            and self.items.question == other.items.question
            and self.items.options == other.items.options
        )
