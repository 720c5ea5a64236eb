"""Champions: the paper's Figure 3 and Table 8 (section 4.3)."""

from __future__ import annotations

import numpy as np

from ..records.model import take_items
from .kendall import kendall_tau_b
from .per_model import competition_rank, correct_counts


def winners_per_config(acc: np.ndarray) -> np.ndarray:
    """Boolean models x configs: the models with the maximum accuracy (ties all win)."""
    return acc == acc.max(axis=0, keepdims=True)


def challenger_leads(acc: np.ndarray, ref: int, n_items: int) -> list[int | float | None]:
    """docs/spec/AUDITS.md v2 "Champions value": per config ``k`` whose winners include no reference
    winner (``R = winners(r)``), ``lead_items(k) = (acc[w,k] - max_{m in R} acc[m,k]) * N``
    for its winners ``w`` (they share one accuracy); None for the other configs.
    Ties among the challengers do not matter: they all lead by the same items."""
    win = winners_per_config(acc)
    R = np.flatnonzero(win[:, ref])
    best = acc.max(axis=0)
    ref_best = acc[R].max(axis=0)
    lead = (best - ref_best) * n_items
    challenged = ~win[R].any(axis=0)
    return [item_count(lead[k]) if challenged[k] else None for k in range(acc.shape[1])]


def item_count(x: float) -> int | float:
    """An accuracy difference times N as a number of items: an integer on 0/1 outcomes; on
    graded ones (docs/audits.md, "Graded outcomes") a sum of outcomes, kept to 9 decimals."""
    r = round(float(x))
    return int(r) if abs(float(x) - r) < 1e-6 else round(float(x), 9)


def champions(acc: np.ndarray, ref: int) -> dict:
    """Per-config winners, runner-up margins, champion set, top-3, rank ranges, Kendall tau.

    Exact ties: every tied model wins (competition ranking); the paper broke
    exact ties by sort order. ``runner_up`` = best model outside the winners;
    ``margin = acc[winner] - acc[runner_up]`` (None when every model ties).
    ``kendall_tau``: tau-b between the reference and each other config.
    """
    K = acc.shape[1]
    win = winners_per_config(acc)
    best = acc.max(axis=0)
    outside = np.where(win, -np.inf, acc)
    second = outside.max(axis=0)
    has_runner = np.isfinite(second)
    runner_idx = np.argmax(outside, axis=0)
    margin = np.where(has_runner, best - np.where(has_runner, second, 0.0), np.nan)
    ranks = competition_rank(acc)
    n_win = win.sum(axis=0)
    others = [k for k in range(K) if k != ref]
    tau = kendall_tau_b(acc[:, ref], acc[:, others]) if others else np.array([])
    finite = tau[np.isfinite(tau)]
    return {
        "win": win,
        "winners": [np.flatnonzero(win[:, k]).tolist() for k in range(K)],
        "best": best,
        "runner_up": [int(runner_idx[k]) if has_runner[k] else None for k in range(K)],
        "margin": margin,
        "champion_set": np.flatnonzero(win.any(axis=1)).tolist(),
        "outright": np.flatnonzero((win & (n_win == 1)[None, :]).any(axis=1)).tolist(),
        "top3": np.flatnonzero((ranks <= 3).any(axis=1)).tolist(),
        "ranks": ranks,
        "rank_range": np.stack([ranks.min(axis=1), ranks.max(axis=1)], axis=1),
        "tau": tau,
        "tau_mean": float(finite.mean()) if finite.size else None,
        "tau_min": float(finite.min()) if finite.size else None,
    }


def champion_count(C_sub: np.ndarray) -> int:
    """Number of distinct models that win some config on the given items."""
    acc = correct_counts(C_sub)
    return int(winners_per_config(acc).any(axis=1).sum())


def champion_counts_many(C: np.ndarray, subsets: np.ndarray, always: np.ndarray | None = None) -> np.ndarray:
    """Champion count on each item subset; ``subsets`` is draws x k item indices, plus the
    items ``always`` that every subset also holds (e.g. the top-k items above the cutoff).

    Vectorized: per-draw correct counts come from one gather and a sum over items laid out
    (items x models x configs), so each gathered item is one contiguous row, its indices
    sorted (memory order), summed in the narrowest integer type that holds k; in blocks of
    models, so the gathered bytes stay under ~32 MiB (1,000 models: 0.18 s a call instead
    of 0.35 s). When the draws use at most half the items, only those are laid out (the
    top-k draws of compression and the robust subset: ~0.5 s a pooled call at 1,000 x
    30,000 x 26 before).
    """
    D, k = subsets.shape
    n_always = 0 if always is None else len(always)
    used = np.unique(subsets if always is None else np.concatenate([subsets.ravel(), np.asarray(always).ravel()]))
    if 2 * used.size <= C.shape[1]:
        # the items the draws use, alone (top-k draws: the k items above the cutoff and its
        # ties): the layout below then copies those instead of the whole tensor each call
        C = take_items(C, used)
        subsets = np.searchsorted(used, subsets)
        always = None if always is None else np.searchsorted(used, np.asarray(always))
    M, N, K = C.shape
    total = k + n_always
    dtype = np.uint8 if total <= 0xFF else np.uint16 if total <= 0xFFFF else np.int64
    rows = np.sort(subsets, axis=1)
    step = max(1, (32 << 20) // max(1, (N + D * k) * K))
    counts = np.empty((D, M, K), dtype=dtype)  # draws x models x configs
    for lo in range(0, M, step):
        # items x models x configs
        block = np.ascontiguousarray(C[lo : lo + step].transpose(1, 0, 2), dtype=bool).view(np.uint8)
        counts[:, lo : lo + step] = np.add.reduce(block[rows], axis=1, dtype=dtype)
        if n_always:
            counts[:, lo : lo + step] += np.add.reduce(block[always], axis=0, dtype=dtype)
    win = counts == counts.max(axis=1, keepdims=True)
    return win.any(axis=2).sum(axis=1)
