"""Simulated arena pair counts for the arena tests (planted Bradley-Terry strengths)."""

from __future__ import annotations

import numpy as np

from leaderboard_audit.arena.data import PairCounts


def simulate_counts(strength: np.ndarray, n_per_pair: int, seed: int, tie: float = 0.0) -> PairCounts:
    rng = np.random.default_rng(seed)
    M = len(strength)
    i, j = np.triu_indices(M, 1)
    p = 1 / (1 + np.exp(strength[j] - strength[i]))
    ties = rng.binomial(n_per_pair, tie, len(i))
    wins = rng.binomial(n_per_pair - ties, p)
    counts = np.column_stack([wins, n_per_pair - ties - wins, ties - ties // 2, ties // 2])
    return PairCounts(tuple(f"m{k}" for k in range(M)), i, j, counts)
