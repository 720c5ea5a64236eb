"""Variance decomposition: Brittlebench section 3 (item difficulty vs prompt sensitivity)."""

from __future__ import annotations

import numpy as np


def variance_parts(C: np.ndarray) -> dict[str, np.ndarray]:
    """Per model: ``V_item = Var_i(mean_k Y)``, ``V_prompt = mean_i Var_k(Y)``
    (population variances), ``brittleness = V_prompt / (V_item + V_prompt)`` (0 when V = 0).
    Graded outcomes (float, docs/audits.md "Graded outcomes"): the same variances of the
    scores, ``Var_k(Y) = mean_k Y^2 - (mean_k Y)^2`` (no ``p (1 - p)`` shortcut)."""
    if C.dtype.kind == "f":
        p = C.mean(axis=2)
        v_item = p.var(axis=1)
        v_prompt = np.maximum((C * C).mean(axis=2) - p * p, 0.0).mean(axis=1)
        v = v_item + v_prompt
        with np.errstate(invalid="ignore", divide="ignore"):
            b = np.where(v > 0, v_prompt / np.where(v > 0, v, 1.0), 0.0)
        return {"v_item": v_item, "v_prompt": v_prompt, "brittleness": b}
    return variance_parts_from_right(C.sum(axis=2, dtype=np.int32), C.shape[2])


def variance_parts_from_right(right: np.ndarray, n_configs: int) -> dict[str, np.ndarray]:
    """``variance_parts`` from ``right[m, i]``, the number of configs under which model m gets
    item i right. Y is 0/1, so a (model, item)'s mean over configs is ``p = right / K`` and
    its population variance ``p (1 - p)``: no float copy of the tensor. Every reduction runs
    along one model's items, so blocks of models (or a subset of the items, as its own
    array) give the same numbers bit for bit."""
    p = right / n_configs
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


def axis_variance(C: np.ndarray, groups: dict[str, list[int]], block_cells: int = 1 << 20) -> dict[str, np.ndarray]:
    """Per model and axis: ``v_axis[a][m] = g/(g-1) mean_i Var_{k in group(a)} Y[m,i,k]``, the
    unbiased variance over the axis group's ``g`` configs (AUDITS v4; v3 took the population
    variance, whose expectation p(1-p)(g-1)/g favours the group with more configs: under a
    null the largest share was the 6-config ordering axis on 39 of 40 grids, review T5). It
    equals half the mean rate at which two configs of the group disagree on an item. A group
    of one config has no variance (0). The group's ``right`` count per (model, item) gives
    ``p (1 - p)`` as in ``variance_parts``; models are taken in blocks so no copy of the
    tensor is made."""
    M, N, _ = C.shape
    out = {a: np.empty(M) for a in groups}
    step = max(1, block_cells // max(N * max((len(g) for g in groups.values()), default=1), 1))
    for lo in range(0, M, step):
        block = C[lo : lo + step]
        for a, g in groups.items():
            unbiased = len(g) / (len(g) - 1) if len(g) > 1 else 0.0
            if block.dtype.kind == "f":  # graded outcomes: the scores' variance over the group
                y = block[:, :, g]
                p = y.mean(axis=2)
                out[a][lo : lo + step] = unbiased * np.maximum((y * y).mean(axis=2) - p * p, 0.0).mean(axis=1)
                continue
            p = block[:, :, g].sum(axis=2, dtype=np.int32) / len(g)
            out[a][lo : lo + step] = unbiased * (p * (1.0 - p)).mean(axis=1)
    return out


def axis_shares(v_axis: dict[str, np.ndarray], v_total: np.ndarray) -> dict[str, np.ndarray]:
    """``v_axis[a] / V`` per model, V = V_item + V_prompt (0 when V = 0, as brittleness)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return {a: np.where(v_total > 0, v / np.where(v_total > 0, v_total, 1.0), 0.0) for a, v in v_axis.items()}
