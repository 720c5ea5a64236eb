"""A random drop of ``mix`` (docs/spec/AUDITS.md v3, "mix is compared with random drops") as
a scope whose tensor is copied only if a check reads it.

A drop keeps a random three quarters of the pooled items (at 4 benchmarks), and up to
``mix_draws`` drops are made per benchmark. Copying the kept items' tensor for each one
was 20 of the ~100 s of a 1,000 x 30,000 x 26 audit, yet the check most often rerun
under drops (``manufactured``: the adjacent pairs) reads only the correct counts and
the pairs' robust-item counts. Both come from the parent's bits, ANDed with the kept
items' bits and popcounted (exact integers): the counts from the parent's per-config bits
(``per_model.config_words``), the pair counts from its robust masks as bits. Any
other read (``C``, ``records``, ``full``, ``parts``) makes the reduced set as
``select_items`` always did, once, with its link to the parent's tensor
(``per_model.items_of``).
"""

from __future__ import annotations

from dataclasses import replace
from functools import cached_property
from typing import Any

import numpy as np

from ..metrics.pairs import robust_pair_counts
from ..metrics.harness_effects import config_discordance, reference_discordance
from ..metrics.per_model import as_words, config_words, counts_within, items_of, right_counts
from ..records.model import Records
from .base import POOLED, Scope


class DropScope(Scope):
    """The pooled scope of ``parent``'s items ``keep`` (in that order), relabelled with
    ``labels``; ``dropped``: the other items. Verdicts only (``Scope.verdicts_only``)."""

    def __init__(
        self,
        parent: Records,
        keep: np.ndarray,
        dropped: np.ndarray,
        labels: np.ndarray,
        *,
        seed: int,
        n_boot: int,
        thresholds: Any,
        alpha: float = 0.05,
    ):
        # Scope.__init__ is not called: it would store ``records`` and ``full``, made lazily here
        self.parent = parent
        self.keep = keep
        self.dropped = dropped
        self.labels = labels
        self.name = POOLED
        self.seed = seed
        self.n_boot = n_boot
        self.thresholds = thresholds
        self.alpha = alpha
        self.sections: dict[str, Any] = {}
        self.verdicts_only = True

    @cached_property
    def records(self) -> Records:  # type: ignore[override]
        red = self.parent.select_items(self.keep)
        items_of(red.correct, self.parent.correct, self.keep)
        return replace(red, items=replace(red.items, benchmark=self.labels))

    @cached_property
    def graded(self) -> bool:  # type: ignore[override]
        """A boolean parent's drops are boolean: asking ``records`` would copy the kept items
        for every drop (50 of the 190 s of a 1,000 x 8,000 x 26 audit)."""
        return self.parent.score is not None and self.records.score is not None

    @property
    def full(self) -> Records:  # type: ignore[override]
        return self.records

    @property
    def shape(self) -> tuple[int, int, int]:
        M, _, K = self.parent.shape
        return (M, int(self.keep.size), K)

    @property
    def names(self) -> tuple[str, ...]:
        return self.parent.models

    @property
    def keys(self) -> tuple[str, ...]:
        return self.parent.grid.keys

    @property
    def ref(self) -> int:
        return self.parent.grid.reference_index

    @cached_property
    def counts(self) -> np.ndarray:
        """The kept items' counts from the parent's per-config bits (integers: exact)."""
        if self.parent.score is not None:  # graded outcomes: the reduced set's sums (Scope)
            return Scope.counts.func(self)  # type: ignore[attr-defined]
        out = counts_within(self.parent.correct, self._kept)
        out.flags.writeable = False
        return out

    @cached_property
    def _kept(self) -> np.ndarray:
        kept = np.zeros(self.parent.shape[1], dtype=bool)
        kept[self.keep] = True
        return kept

    def pair_counts(self, hs: np.ndarray, ls: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Over the parent's items, within the kept ones (sums over items: their order is irrelevant)."""
        return robust_pair_counts(self.parent.correct, hs, ls, within=self._kept)

    def config_discordance(self, xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Over the parent's per-config bits, within the kept ones."""
        if self.parent.score is not None:
            return Scope.config_discordance(self, xs, ys)
        kept = as_words(self._kept[None, :])[0]
        return config_discordance(config_words(self.parent.correct), xs, ys, within=kept)

    @cached_property
    def right_square_sums(self) -> np.ndarray:
        R = right_counts(self.parent.correct)[:, self._kept].astype(np.int64)
        return (R * R).sum(axis=1)

    def averaged_pair_counts(self, hs: np.ndarray, ls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.parent.score is not None:
            return Scope.averaged_pair_counts(self, hs, ls)
        R = right_counts(self.parent.correct)
        a = R[np.asarray(hs, dtype=np.intp)][:, self._kept]
        b = R[np.asarray(ls, dtype=np.intp)][:, self._kept]
        return (a > b).sum(axis=1, dtype=np.int64), (a < b).sum(axis=1, dtype=np.int64)

    @cached_property
    def reference_discordance(self) -> tuple[np.ndarray, np.ndarray]:
        if self.parent.score is not None:
            return Scope.reference_discordance.func(self)  # type: ignore[attr-defined]
        kept = as_words(self._kept[None, :])[0]
        return reference_discordance(config_words(self.parent.correct), self.ref, within=kept)
