"""A budgeted collection's plan: which (model, item, config) cells to evaluate (docs/collect.md, "Budgeted collection").

The planner sees a cell's answer only after it has chosen the cell (``answer``), as an
engine would give it, so the same plan runs on a live engine and on a replay of a complete
grid (collect/replay.py). Its rounds:

1. the reference configuration on every (model, item): what a leaderboard already has;
2. a uniformly random sample of items, every configuration for every model, kept for
   estimation: each item is in it with the same probability ``n_sample / N`` (recorded),
   and nothing adaptive is ever added to it, so estimates from it are design-based;
3. optionally (``targets``), verdict rounds: the cells that decide the undecided verdicts
   cheapest, chosen after auditing the observed grid (collect/verdict_plan.py);
4. robust status first: a (model, item) is robust only if it is right under all K
   configurations, so one failure settles it. For each model the other configurations
   are ordered by their estimated chance to flip an item the reference gets right (the
   sample's per-model disagreement, shrunk to the pooled rate); round r evaluates the
   r-th configuration of every (model, item) still undecided (breadth first: the budget
   settles as many as it can), the last round's pairs drawn at random when the budget
   runs out inside it.

It stops when the budget is spent or every (model, item)'s robust status is known.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..metrics.incomplete import NOT_ROBUST, ROBUST, UNDECIDED  # a robust status: the audit's codes

#: ``answer(models, items, configs)`` -> bool array: the cells' correctness, evaluated now
Answer = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
#: ``targets(observed, correct, sample, left)`` -> (models, items, configs): the next verdict
#: round's cells, unobserved, at most ``left`` (collect/verdict_plan.py); empty ends the rounds
Targets = Callable[[np.ndarray, np.ndarray, np.ndarray, int], tuple[np.ndarray, np.ndarray, np.ndarray]]

DEFAULT_SAMPLE_SHARE = 0.25  # of the budget left after the reference round
SHRINK = 5.0  # pseudo-observations of the pooled rate in each model's rate


class BudgetError(ValueError):
    """A budget the plan cannot honour (below the reference round's cost, or not in (0, 1])."""


@dataclass
class Plan:
    """What a budgeted collection observed, and how it chose it."""

    observed: np.ndarray  # (M, N, K) bool
    correct: np.ndarray  # (M, N, K) bool, False where not observed
    sample: np.ndarray  # sorted item indices of the random sample
    order: np.ndarray  # (M, K-1) config indices, the robust-status-first order per model
    status: np.ndarray  # (M, N) int8: ROBUST, NOT_ROBUST or UNDECIDED
    budget_cells: int
    rounds: list[dict[str, int]] = field(default_factory=list)

    @property
    def cells(self) -> int:
        return int(self.observed.sum())

    @property
    def inclusion_probability(self) -> float:
        return len(self.sample) / self.observed.shape[1]


def budget_cells(fraction: float, shape: tuple[int, int, int]) -> int:
    """The cells a budget ``fraction`` of the full grid buys (at least the reference round)."""
    M, N, K = shape
    if not 0 < fraction <= 1:
        raise BudgetError(f"--budget must be a fraction of the grid's cells in (0, 1], got {fraction!r}")
    cells = int(np.floor(fraction * M * N * K + 1e-9))
    if cells < M * N:
        raise BudgetError(
            f"--budget {fraction:g} buys {cells:,} of {M * N * K:,} cells, less than the reference configuration on "
            f"every (model, item) ({M * N:,} cells, a budget of {1 / K:.4g}); give at least {1 / K:.4g}"
        )
    return cells


def sample_size(left: int, M: int, N: int, K: int, share: float) -> int:
    """Items in the random sample: ``share`` of the budget left after the reference round,
    at least 2 items when the budget allows (a rate needs more than one item)."""
    per_item = M * (K - 1)
    if per_item == 0:
        return 0
    n = int(share * left) // per_item
    if n < 2 and left >= 2 * per_item:
        n = 2
    return min(N, n)


def flip_order(correct: np.ndarray, sample: np.ndarray, ref: int) -> np.ndarray:
    """Per model, the non-reference configs by their estimated chance to flip an item the
    reference gets right (from the sample only), highest first; ties in legend order."""
    M, _, K = correct.shape
    others = np.array([k for k in range(K) if k != ref], dtype=np.intp)
    if len(sample) == 0:
        return np.tile(others, (M, 1))
    sub = correct[:, sample]  # (M, n, K)
    base = sub[:, :, ref]  # (M, n)
    flips = (~sub[:, :, others] & base[:, :, None]).sum(axis=1).astype(float)  # (M, K-1)
    n_m = base.sum(axis=1).astype(float)[:, None]  # (M, 1)
    pooled = (flips.sum(axis=0) + 1.0) / (n_m.sum() + 2.0)  # (K-1,)
    rate = (flips + SHRINK * pooled[None, :]) / (n_m + SHRINK)
    return others[np.argsort(-rate, axis=1, kind="stable")]


def plan(
    answer: Answer,
    shape: tuple[int, int, int],
    ref: int,
    fraction: float,
    seed: int,
    *,
    sample_share: float = DEFAULT_SAMPLE_SHARE,
    sample_items: int | None = None,
    band_round: bool = False,
    targets: Targets | None = None,
    on_round: Callable[[str], None] | None = None,
) -> Plan:
    """Run the rounds against ``answer`` within ``fraction`` of the grid's cells (module doc).

    ``sample_items``: the random sample's size, instead of ``sample_share`` of the budget
    (benchmarks/bench_budget.py: the cost of every robust status at a given design).
    ``band_round``: after the sample, each model's ``band_config`` on every item, so its band's
    side can be decided exactly (docs/collect.md, "What the verdicts decide at a budget").
    ``targets``: after the sample (and band) rounds, verdict rounds while it names cells
    (collect/verdict_plan.py): each round audits the observed grid and returns the cells
    that decide the undecided verdicts cheapest; the robust-status rounds get what is left."""
    M, N, K = shape
    budget = budget_cells(fraction, shape)
    rng = np.random.default_rng(seed)
    observed = np.zeros(shape, dtype=bool)
    correct = np.zeros(shape, dtype=bool)
    rounds: list[dict[str, int]] = []

    def ask(m: np.ndarray, i: np.ndarray, k: np.ndarray, kind: str) -> np.ndarray:
        if on_round is not None:
            on_round(kind)
        if observed[m, i, k].any():
            raise AssertionError("the plan asked for a cell twice")
        got = np.asarray(answer(m, i, k), dtype=bool)
        observed[m, i, k] = True
        correct[m, i, k] = got
        return got

    mm, ii = np.meshgrid(np.arange(M), np.arange(N), indexing="ij")
    ask(mm.ravel(), ii.ravel(), np.full(M * N, ref), "reference")
    rounds.append({"round": 1, "kind": "reference", "cells": M * N})
    left = budget - M * N

    n_s = sample_size(left, M, N, K, sample_share) if sample_items is None else min(N, sample_items)
    if n_s * M * (K - 1) > left:
        raise BudgetError(f"a random sample of {n_s} item(s) needs {n_s * M * (K - 1):,} cells; {left:,} are left")
    sample = np.sort(rng.choice(N, size=n_s, replace=False)) if n_s else np.zeros(0, dtype=np.intp)
    if n_s:
        others = np.array([k for k in range(K) if k != ref], dtype=np.intp)
        m, i, k = (a.ravel() for a in np.meshgrid(np.arange(M), sample, others, indexing="ij"))
        ask(m, i, k, "random sample")
        rounds.append({"round": 2, "kind": "random_sample", "cells": len(m), "items": n_s})
        left -= len(m)

    if band_round and n_s and K > 1:
        left -= _band_round(ask, observed, band_config(correct, sample, ref), left, rounds)
    while targets is not None and left > 0:
        m, i, k = (np.asarray(a, dtype=np.intp) for a in targets(observed, correct, sample, left))
        if not len(m):
            break
        if len(m) > left:
            raise AssertionError("the verdict round asked for more cells than the budget has left")
        ask(m, i, k, "verdicts")
        rounds.append({"round": len(rounds) + 1, "kind": "verdicts", "cells": len(m)})
        left -= len(m)
    order = flip_order(correct, sample, ref)
    status = np.full((M, N), UNDECIDED, dtype=np.int8)
    status[(observed & ~correct).any(axis=2)] = NOT_ROBUST  # the reference, band and verdict rounds' failures
    if n_s:
        full = correct[:, sample].all(axis=2)
        status[:, sample] = np.where(full, ROBUST, NOT_ROBUST)
    if K == 1:
        status[status == UNDECIDED] = ROBUST
    for r in range(K - 1):
        pm, pi = np.nonzero(status == UNDECIDED)
        if not len(pm) or left <= 0:
            break
        seen = observed[pm, pi, order[pm, r]]  # the band or verdict rounds' cells: right, or settled above
        if seen.any():
            sm, si = pm[seen], pi[seen]
            if r == K - 2:
                status[sm, si] = ROBUST
            pm, pi = pm[~seen], pi[~seen]
            if not len(pm):
                continue
        if len(pm) > left:  # the budget ends inside this round: a random subset of the pairs
            keep = np.sort(rng.choice(len(pm), size=left, replace=False))
            pm, pi = pm[keep], pi[keep]
        got = ask(pm, pi, order[pm, r], "robust status")
        status[pm[~got], pi[~got]] = NOT_ROBUST
        if r == K - 2:
            status[pm[got], pi[got]] = ROBUST
        rounds.append(
            {"round": len(rounds) + 1, "kind": "robust_status", "cells": len(pm), "settled": int((~got).sum())}
        )
        left -= len(pm)
    return Plan(observed, correct, sample, order, status, budget, rounds)


def band_config(correct: np.ndarray, sample: np.ndarray, ref: int) -> np.ndarray:
    """Per model, the configuration whose accuracy on the sample is farthest from the
    reference's (ties: legend order): observed on every item, its accuracy is exact beside the
    exact reference one, so their gap bounds the band from below."""
    sub = correct[:, sample].mean(axis=1)  # (M, K)
    gap = np.abs(sub - sub[:, ref : ref + 1])
    gap[:, ref] = -1.0
    return np.argmax(gap, axis=1)


def _band_round(ask: Any, observed: np.ndarray, ks: np.ndarray, left: int, rounds: list[dict[str, int]]) -> int:
    """Observe ``ks[m]`` on every item for each model, in model order, while the budget lasts
    (a model's config is taken whole or not at all: a part decides no band). Returns the cells."""
    spent = 0
    for m, k in enumerate(ks.tolist()):
        items = np.flatnonzero(~observed[m, :, k])
        if spent + len(items) > left:
            break
        if len(items):
            ask(np.full(len(items), m), items, np.full(len(items), k), "band")
            spent += len(items)
    if spent:
        rounds.append({"round": len(rounds) + 1, "kind": "band", "cells": spent})
    return spent


def design(
    p: Plan, *, fraction: float, seed: int, keys: tuple[str, ...], items: Any, models: tuple[str, ...]
) -> dict[str, Any]:
    """The plan as grid.json's ``collection_design`` (docs/records.md, "Incomplete records"):
    the random sample an estimator may use, the order the adaptive cells were chosen in."""
    M, N, K = p.observed.shape
    by_bench: dict[str, list[str]] = {}
    for i in p.sample.tolist():
        by_bench.setdefault(str(items.benchmark[i]), []).append(str(items.item_id[i]))
    return {
        "kind": "budgeted",
        "budget": fraction,
        "seed": seed,
        "budget_cells": p.budget_cells,
        "cells": p.cells,
        "grid_cells": M * N * K,
        "random_sample": {
            "items": len(p.sample),
            "inclusion_probability": p.inclusion_probability,
            "note": "uniform without replacement over all items; every model, every config",
            "item_ids": by_bench,
        },
        "order": {m: [keys[k] for k in row] for m, row in zip(models, p.order.tolist())},
        "rounds": p.rounds,
        "robust_status": {
            "pairs": M * N,
            "decided": int((p.status != UNDECIDED).sum()),
            "robust": int((p.status == ROBUST).sum()),
        },
    }


__all__ = ["BudgetError", "Plan", "band_config", "budget_cells", "design", "flip_order", "plan", "sample_size"]
