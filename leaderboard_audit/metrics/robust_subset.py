"""Benchmark compression you can trust: a top-k subset of robust items (beyond section 4.4).

The paper (section 4.4, Table 7) shows that keeping the k most discriminative items
keeps the config-fragile ones. This subset keeps the most discriminative items among
those *robust for most models*, and reports what the paper reports for top-k: the
champion count, plus Kendall tau against the full item set and the mean fragility.
Definitions: docs/audits.md, "Beyond the paper: robust subset".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .champions import champion_count, champion_counts_many
from .compression import discrimination, fragility, top_k_split
from .kendall import kendall_tau_b
from .per_model import robust_masks
from .rng import rng_for


def top_k_draws(
    values: np.ndarray, candidates: np.ndarray, k: int, n_draws: int, rng: np.random.Generator
) -> tuple[np.ndarray, float, int, int]:
    """``n_draws`` subsets of the k candidates with the largest ``values`` (draws x k): the
    rule of docs/spec/AUDITS.md's compression (``compression.top_k_split``, so the same
    generator key gives the same subsets as ``compression``). Returns (subsets, v, above, tied)."""
    above, tied_kept, v, n_ties = top_k_split(values, candidates, k, n_draws, rng)
    subsets = np.concatenate([np.broadcast_to(above, (n_draws, above.size)), tied_kept], axis=1)
    return subsets, v, int(above.size), n_ties


def fragile_model_counts(C: np.ndarray) -> np.ndarray:
    """Per item, the number of models for which it is config-fragile (integers)."""
    return robust_masks(C)[2].sum(axis=0)


def robust_cap(n_fragile: np.ndarray, defined: np.ndarray, n_models: int, k: int) -> tuple[int, bool]:
    """The largest number of fragile models an eligible item may have.

    Default: robust for most models, ``2 * n_fragile < n_models``, i.e. a cap of
    ``ceil(M / 2) - 1``. When fewer than k items with a defined discrimination meet it,
    the cap rises to the smallest value that admits k of them (``raised = True``).
    """
    cap = (n_models + 1) // 2 - 1
    per_level = np.bincount(n_fragile[defined], minlength=n_models + 1)
    admitted = np.cumsum(per_level)
    if admitted[cap] >= k:
        return cap, False
    return int(np.flatnonzero(admitted >= k)[0]), True


def subset_stats(C: np.ndarray, ref: int, subsets: np.ndarray, frag: np.ndarray) -> dict[str, Any]:
    """Champion count, Kendall tau-b of reference accuracies vs the full set, mean fragility,
    each over the draws (mean, min, max / mean, min / mean)."""
    champs = champion_counts_many(C, subsets)
    full = C[:, :, ref].sum(axis=1, dtype=np.int64) / C.shape[1]
    sub = C[:, subsets, ref].sum(axis=2, dtype=np.int64) / subsets.shape[1]  # models x draws
    tau = kendall_tau_b(full, sub)
    finite = tau[np.isfinite(tau)]
    return {
        "champions_mean": float(champs.mean()),
        "champions_min": int(champs.min()),
        "champions_max": int(champs.max()),
        "kendall_tau_mean": float(finite.mean()) if finite.size else None,
        "kendall_tau_min": float(finite.min()) if finite.size else None,
        "kendall_tau_undefined": int(tau.size - finite.size),
        "mean_fragility": float(frag[subsets].mean(axis=1).mean()),
    }


def robust_subset(
    C: np.ndarray, ref: int, *, seed: int, scope: str, k: int = 100, n_draws: int = 200
) -> dict[str, Any]:
    """The k most discriminative items among those robust for most models.

    Eligible: items with a defined discrimination that are config-fragile for fewer
    than half of the models (cap raised if fewer than k qualify, :func:`robust_cap`).
    Subset: top-k of eligible items by discrimination, ties at the cutoff broken by
    ``n_draws`` seeded draws. Reported beside the paper's top-k (all items with a
    defined discrimination, the same draws as ``compression``): champion count,
    Kendall tau-b vs the full set (reference config), mean fragility. With fewer than
    2k items k becomes N // 2, as for compression.
    """
    M, N, _ = C.shape
    k_requested = k
    if N < 2 * k:
        k = N // 2
    disc = discrimination(C, ref)
    frag = fragility(C)
    n_frag = fragile_model_counts(C)
    defined = np.flatnonzero(~np.isnan(disc))
    out: dict[str, Any] = {
        "k": int(k),
        "k_requested": int(k_requested),
        "k_reduced": bool(k != k_requested),
        "champions_full": champion_count(C),
        "mean_fragility_all": float(frag.mean()) if N else None,
    }
    kk = min(k, int(defined.size))
    out["k_used"] = int(kk)  # only items with a defined discrimination rank
    if kk <= 0:
        out.update(skipped="no item has a defined discrimination" if k > 0 else "too few items")
        return out
    cap, raised = robust_cap(n_frag, defined, M, kk)
    eligible = defined[n_frag[defined] <= cap]
    subsets, v, above, ties = top_k_draws(disc, eligible, kk, n_draws, rng_for(seed, "robust_subset", scope))
    out.update(
        fragile_models_cap=int(cap),
        fragility_cap=cap / M,
        cap_raised=raised,
        eligible=int(eligible.size),
        cutoff=v,
        cutoff_above=above,
        cutoff_ties=ties,
        **subset_stats(C, ref, subsets, frag),
    )
    top, tv, tabove, tties = top_k_draws(disc, defined, kk, n_draws, rng_for(seed, "compression", "topk", scope))
    out["topk"] = {"cutoff": tv, "cutoff_above": tabove, "cutoff_ties": tties, **subset_stats(C, ref, top, frag)}
    return out
