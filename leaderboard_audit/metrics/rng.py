"""Deterministic generators: one per randomized quantity (docs/spec/AUDITS.md, "Determinism")."""

from __future__ import annotations

import hashlib

import numpy as np


def rng_for(seed: int, *key: str) -> np.random.Generator:
    """A generator seeded from the global seed and a stable key (step, scope, pair).

    The key is hashed (SHA-256), so results do not depend on test order or on how
    pytest-xdist spreads tests over workers.
    """
    digest = hashlib.sha256("\x1f".join(key).encode("utf-8")).digest()
    words = np.frombuffer(digest[:16], dtype=np.uint32).tolist()
    return np.random.default_rng([*seed_words(seed), *words])


def seed_words(seed: int) -> list[int]:
    """The whole seed as 32-bit words, low first (a seed below 2**32 is one word, as it
    always was): 4294968530 and 1234 are different seeds."""
    seed = int(seed)
    if seed < 0:
        raise ValueError(f"seed {seed} must be >= 0")
    out = [seed & 0xFFFFFFFF]
    seed >>= 32
    while seed:
        out.append(seed & 0xFFFFFFFF)
        seed >>= 32
    return out


def first_k_of_random_order(rng: np.random.Generator, n_draws: int, size: int, k: int) -> np.ndarray:
    """``n_draws`` random k-subsets of ``range(size)`` (draws x k, without replacement).

    Row ``d`` holds the same *set* as ``np.argsort(u[d])[:k]`` for ``u = rng.random((n_draws,
    size))`` (the k positions with the smallest uniforms: a uniformly random k-subset), found
    by a partial sort (``argpartition``, linear per row) instead of a full sort. Only the
    order within a row differs, and every caller uses a row as a set.
    """
    u = rng.random((n_draws, size))
    if k <= 0:
        return np.empty((n_draws, 0), dtype=np.intp)
    if k >= size:
        return np.broadcast_to(np.arange(size), (n_draws, size)).copy()
    return np.argpartition(u, k - 1, axis=1)[:, :k]
