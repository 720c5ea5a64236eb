"""The verdict-driven rounds of a budgeted plan (docs/collect.md, "What the verdicts decide at a budget").

After the reference and random-sample rounds, each round audits the grid observed so far
with the band check's exact rule (checks/incomplete.py ``_band``: the spread's bounds and
Cochran's Q bounds over every completion, Holm over the scope's models, from
metrics/incomplete.py) and spends cells on the undecided band verdicts that the observed
estimates say can be decided cheapest.

A band verdict is decided ``fail`` once the spread's lower bound exceeds ``band_warn`` and
Q's lower bound is significant in every completion. Both bounds grow only with
configurations observed on *every* item of the scope (a column observed on part of the
items leaves its accuracy's interval as wide as its unknown cells), so the deciding cells
of a band verdict are whole configurations on the scope's items, the ones farthest from the
model's mean accuracy first: the two extremes give the spread, each further one adds to Q's
numerator. For each (scope, model) still undecided the round predicts, from each
configuration's accuracy (exact where its column is observed on every item of the scope,
else the random sample's, the whole sample's when the scope holds fewer than
``MIN_SCOPE_SAMPLE`` of its items), how many such columns make Q's predicted lower bound significant
after a Bonferroni split over the scope's models (Holm rejects at least that); the verdict's
cost is the unobserved cells of those columns, and the round takes verdicts cheapest first
while the budget lasts. A pass or a warn needs every configuration's accuracy bounded
within a threshold, nearly all of the model's cells, so those verdicts are left to the
robust-status rounds.

The audit never imports this module; it imports the audit's metric functions only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..metrics import incomplete as inc
from ..metrics.special import chi2_sf

BAND_PASS, BAND_WARN, ALPHA = 0.02, 0.05, 0.05  # the band check's default thresholds and the audit's alpha
MIN_SCOPE_SAMPLE = 30  # sampled items of a scope below which its configs are estimated from the whole sample


class BandTargets:
    """``targets(observed, correct, sample, left)`` for collect/budget.py ``plan``: the next
    round's cells (m, i, k), all unobserved, at most ``left`` of them (empty: nothing left to
    decide this way). ``groups``: the item indices of each scope (the pooled scope and each
    benchmark's, as the audit's scopes)."""

    def __init__(
        self,
        groups: Sequence[np.ndarray],
        band_pass: float = BAND_PASS,
        band_warn: float = BAND_WARN,
        alpha: float = ALPHA,
    ):
        self.groups = [np.asarray(g, dtype=np.intp) for g in groups if len(g)]
        self.band_pass, self.band_warn, self.alpha = band_pass, band_warn, alpha

    def decided(self, observed: np.ndarray, correct: np.ndarray, g: np.ndarray) -> np.ndarray:
        """(M,) bool: each model's band verdict on scope ``g`` is decided (pass, warn or fail)
        by the band check's exact rule (``metrics.incomplete.band_sides``)."""
        miss = np.where(observed[:, g], 0, 1).astype(np.int8)
        C = correct[:, g]
        possible = np.ones((C.shape[0], C.shape[2]), dtype=bool)
        sides = inc.band_sides(C, miss, possible, band_pass=self.band_pass, band_warn=self.band_warn, alpha=self.alpha)
        return sides.decided

    def count_decided(self, observed: np.ndarray, correct: np.ndarray) -> tuple[int, int]:
        """(decided, all): the band verdicts of every scope and model decided by the exact rule
        on the observed cells (what a replay's last line reports)."""
        got = [self.decided(observed, correct, g) for g in self.groups]
        return sum(int(d.sum()) for d in got), sum(len(d) for d in got)

    def columns_needed(
        self, observed: np.ndarray, correct: np.ndarray, sample: np.ndarray, g: np.ndarray, m: int, M: int
    ) -> np.ndarray | None:
        """The configurations whose columns, observed on every item of scope ``g``, are
        predicted to decide model m's band as a fail (None: not predicted to fail at all)."""
        K = correct.shape[2]
        full = observed[m][g].all(axis=0)  # (K,) columns already observed on the whole scope
        acc = np.where(full, correct[m][g].mean(axis=0), np.nan)
        s = np.intersect1d(sample, g, assume_unique=True)
        if len(s) < MIN_SCOPE_SAMPLE:  # a few items estimate no accuracy: the pooled sample
            s = sample
        if len(s):
            acc = np.where(full, acc, correct[m][s].mean(axis=0))
        if np.isnan(acc).any():
            return None
        N = len(g)
        need = self.alpha / max(M, 1)
        chosen = [int(np.argmax(acc)), int(np.argmin(acc))]
        if chosen[0] == chosen[1] or acc[chosen[0]] - acc[chosen[1]] <= self.band_warn:
            return None
        while True:
            a = acc[chosen]
            # Q's lower bound with only these columns known: the others sit at the known ones'
            # mean (the least spread), every item half right (the largest denominator)
            q = (K - 1) * K * N * N * ((a - a.mean()) ** 2).sum() / (N * K * K / 4.0)
            if float(chi2_sf(np.array([q]), K - 1)[0]) <= need:
                return np.sort(np.array(chosen, dtype=np.intp))
            rest = [k for k in range(K) if k not in chosen]
            if not rest:
                return None
            gain = [((np.append(a, acc[k]) - np.append(a, acc[k]).mean()) ** 2).sum() for k in rest]
            chosen.append(rest[int(np.argmax(gain))])

    def __call__(
        self, observed: np.ndarray, correct: np.ndarray, sample: np.ndarray, left: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        M = observed.shape[0]
        wants: list[tuple[int, int, int, np.ndarray, np.ndarray]] = []  # cost, scope, model, items, cols
        for gi, g in enumerate(self.groups):
            done = self.decided(observed, correct, g)
            for m in np.flatnonzero(~done).tolist():
                cols = self.columns_needed(observed, correct, sample, g, m, M)
                if cols is None:
                    continue
                cost = int((~observed[m][np.ix_(g, cols)]).sum())
                if cost:
                    wants.append((cost, gi, m, g, cols))
        wants.sort(key=lambda w: (w[0], w[1], w[2]))
        take = np.zeros(observed.shape, dtype=bool)
        spent = 0
        for _, _, m, g, cols in wants:
            new = ~observed[m][np.ix_(g, cols)] & ~take[m][np.ix_(g, cols)]
            n = int(new.sum())
            if spent + n > left:
                continue  # a part of a verdict's columns decides nothing
            sub = take[m][np.ix_(g, cols)] | new
            take[m][np.ix_(g, cols)] = sub
            spent += n
        m, i, k = np.nonzero(take)
        return m, i, k


def scope_groups(benchmark: np.ndarray) -> list[np.ndarray]:
    """The audit's scopes as item indices: the pooled scope, then each benchmark's (one
    benchmark: the pooled scope only)."""
    b = np.asarray(benchmark, dtype=object)
    names = list(dict.fromkeys(b.tolist()))
    out = [np.arange(len(b), dtype=np.intp)]
    if len(names) > 1:
        out += [np.flatnonzero(b == n) for n in names]
    return out


__all__ = ["BandTargets", "scope_groups"]
