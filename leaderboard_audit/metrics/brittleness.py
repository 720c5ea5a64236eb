"""Variance decomposition: Brittlebench section 3 (item difficulty vs prompt sensitivity)."""

from __future__ import annotations

import numpy as np


def variance_parts(C: np.ndarray) -> dict[str, np.ndarray]:
    """Per model: ``V_item = Var_i(mean_k Y)``, ``V_prompt = mean_i Var_k(Y)``
    (population variances), ``brittleness = V_prompt / (V_item + V_prompt)`` (0 when V = 0)."""
    # Y is 0/1: per (model, item) the configs' mean is p = right / K and their population
    # variance p (1 - p), so one integer sum over configs gives both (no float copy of C).
    p = C.sum(axis=2, dtype=np.int32) / C.shape[2]
    v_item = p.var(axis=1)
    v_prompt = (p * (1.0 - p)).mean(axis=1)
    v = v_item + v_prompt
    with np.errstate(invalid="ignore", divide="ignore"):
        b = np.where(v > 0, v_prompt / np.where(v > 0, v, 1.0), 0.0)
    return {"v_item": v_item, "v_prompt": v_prompt, "brittleness": b}


def pooled_shares(v_prompt: np.ndarray, v_total: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Brittlebench's aggregates from per (model, benchmark) parts (models x benchmarks):
    ``pi_model[m] = sum_b Vp / sum_b V``, ``pi_benchmark[b] = sum_m Vp / sum_m V``."""

    def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)

    return ratio(v_prompt.sum(axis=1), v_total.sum(axis=1)), ratio(v_prompt.sum(axis=0), v_total.sum(axis=0))
