"""A per-item flip predictor from the option margin: the paper's section 6 (future work).

The paper (section 6, appendix A.1) proposes using the margin between a model's top
two options under the plain cloze scorer to flag config-fragile items *before*
running a sweep. Here the margin at one likelihood configuration scores every
(model, item); the label is whether the item is config-fragile for that model over
the whole grid (section 3.4). Lower margin = predicted fragile. Definitions:
docs/audits.md, "Beyond the paper: flip predictor".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..records.grid import Grid
from .bootstrap import percentile_ci
from .per_model import robust_masks
from .rng import rng_for

PREFERRED_CONFIG = "ll|cloze_plain"
PRECISION_TARGET = 0.8
ROC_POINTS = 101
DECILES = 10
DEFAULT_FLIP_BOOT = 1_000
#: v3: an AUC (and its CI) is reported only when both classes hold at least this many items
MIN_CLASS_ITEMS = 10
_CHUNK = 250  # resamples per chunk: bounds the (resamples x observations) work arrays
_CHUNK_CELLS = 1 << 24  # ... and fewer when the observations are many (the pooled figure of a big grid)


def margin_config(grid: Grid, margin: np.ndarray | None) -> tuple[int | None, str | None]:
    """The likelihood configuration whose margins score the items.

    ``ll|cloze_plain`` when it carries a margin for some (model, item), else the first
    likelihood configuration (key ``ll|...`` or scoring ``ll``) that does. Returns
    ``(index, None)`` or ``(None, reason)``.
    """
    if margin is None:
        return None, "the records carry no option margins"
    has = np.isfinite(margin).any(axis=(0, 1))
    keys = grid.keys
    if PREFERRED_CONFIG in keys and has[keys.index(PREFERRED_CONFIG)]:
        return keys.index(PREFERRED_CONFIG), None
    for k, c in enumerate(grid.configs):
        if (c.key.startswith("ll|") or c.scoring == "ll") and has[k]:
            return k, None
    return None, "no likelihood configuration carries option margins"


def _levels(margin: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct margins ascending and each observation's level index."""
    return np.unique(margin, return_inverse=True)


def auc(margin: np.ndarray, fragile: np.ndarray) -> float | None:
    """ROC AUC of "low margin => fragile": ``P(m_fragile < m_robust) + P(=)/2``.

    Rank-based (Mann-Whitney U with average ranks for ties); None when one class is empty.
    """
    n1 = int(fragile.sum())
    n0 = fragile.size - n1
    if n1 == 0 or n0 == 0:
        return None
    _, inv, counts = np.unique(margin, return_inverse=True, return_counts=True)
    # rank by *descending* margin so that a low margin gets a high rank (scored fragile)
    counts_desc = counts[::-1]
    start = np.concatenate([[0], np.cumsum(counts_desc)[:-1]])
    avg_desc = start + (counts_desc + 1) / 2.0
    ranks = avg_desc[::-1][inv]
    return float((ranks[fragile].sum() - n1 * (n1 + 1) / 2.0) / (n1 * n0))


def auc_bootstrap(margin: np.ndarray, fragile: np.ndarray, cluster: np.ndarray, item_weights: np.ndarray) -> np.ndarray:
    """AUC on each resample; ``item_weights`` (resamples x items) = how often each item is drawn.

    An observation (model, item) carries its item's weight, so resampling items keeps
    every model's answers to a drawn item together (the pooled CI needs that; for one
    model it is the plain item bootstrap). Per resample, with ``P_l`` / ``Q_l`` the
    weight of fragile / robust observations at margin level ``l``,
    ``AUC = [sum_l P_l Q_{>l} + sum_l P_l Q_l / 2] / (sum P * sum Q)``.

    Observations are sorted by margin with the robust ones first inside a level, so
    for a fragile observation the running robust weight already holds its whole
    level: ``sum_l P_l Q_{>l} = sum_fragile w (Q_total - cumQ)``, one cumulative sum
    along the robust columns of a (resamples x observations) block, read at each
    fragile column. Only levels holding both classes enter the tie term. NaN where a
    resample draws no fragile or no robust observation.
    """
    levels, level = _levels(margin)
    order = np.lexsort((fragile, level))  # by level, robust (False) first inside it
    lv, fr, cl = level[order], fragile[order], cluster[order]
    both = np.zeros(levels.size, dtype=bool)
    both[lv[fr]] = True
    mixed = np.zeros(levels.size, dtype=bool)
    mixed[lv[~fr]] = True
    both &= mixed
    tied = np.flatnonzero(both[lv])  # observations in levels with both classes
    tie_starts = np.flatnonzero(np.r_[True, lv[tied][1:] != lv[tied][:-1]]) if tied.size else tied
    f_pos = np.flatnonzero(fr)
    cl_f = cl[f_pos]
    cl_r0 = np.r_[item_weights.shape[1], cl[~fr]]  # robust observations, after a weightless one
    robust_before = np.cumsum(~fr)[f_pos]  # robust observations at or before each fragile one
    B = item_weights.shape[0]
    # integer arithmetic, exact: running sums fit int32 unless a resample could weigh 2**31 / 128
    acc_t = np.int32 if margin.size * 128 < 2**31 else np.int64
    out = np.empty(B)
    chunk = max(1, min(_CHUNK, _CHUNK_CELLS // max(margin.size, 1)))  # each resample is computed alone
    for lo in range(0, B, chunk):
        wc = item_weights[lo : lo + chunk]  # resamples x items
        if wc.dtype.kind not in "iu":
            wc = wc.astype(np.int32)  # integer counts expected
        c = wc.shape[0]
        wc = np.concatenate([wc, np.zeros((c, 1), dtype=wc.dtype)], axis=1)  # a last, weightless item
        cum_q = np.cumsum(np.take(wc, cl_r0, axis=1), axis=1, dtype=acc_t)  # column t: first t robust
        q_total = cum_q[:, -1].astype(np.float64)
        w_f = np.take(wc, cl_f, axis=1)
        p_total = w_f.sum(axis=1, dtype=np.int64).astype(np.float64)
        below = np.multiply(w_f, np.take(cum_q, robust_before, axis=1), dtype=acc_t)
        num = p_total * q_total - below.sum(axis=1, dtype=np.int64).astype(np.float64)
        if tied.size:
            wt, ft = np.take(wc, cl[tied], axis=1), fr[tied][None, :]
            P_l = np.add.reduceat(np.where(ft, wt, 0), tie_starts, axis=1, dtype=np.int64)
            Q_l = np.add.reduceat(np.where(ft, 0, wt), tie_starts, axis=1, dtype=np.int64)
            num += 0.5 * (P_l * Q_l).sum(axis=1)
        den = p_total * q_total
        with np.errstate(invalid="ignore", divide="ignore"):
            out[lo : lo + c] = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return out


def item_resample_weights(n_items: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """How many times each item is drawn in each of ``n_boot`` resamples of ``n_items`` items
    (resamples x items; int8, the counts are small)."""
    draws = rng.integers(0, n_items, size=(n_boot, n_items))
    draws += (np.arange(n_boot) * n_items)[:, None]
    counts = np.bincount(draws.ravel(), minlength=n_boot * n_items).reshape(n_boot, n_items)
    return counts.astype(np.int8 if counts.size == 0 or counts.max() < 128 else np.int32)


def stratified_weights(
    cluster: np.ndarray, fragile: np.ndarray, n_clusters: int, n_boot: int, rng: np.random.Generator
) -> np.ndarray:
    """Resample weights within each class (docs/spec/AUDITS.md v3, "flip"): the fragile
    observations' items are drawn with replacement among the items holding a fragile
    observation, the robust ones' among those holding a robust one, as many as each class
    has, so no resample lacks a class. Returns ``n_boot x 2 n_clusters`` weights for the
    clusters ``cluster + n_clusters * fragile`` (an item's fragile and robust observations
    are two clusters; one model: the plain stratified item bootstrap)."""
    out = np.zeros((n_boot, 2 * n_clusters), dtype=np.int32)
    rows = np.arange(n_boot)[:, None] * (2 * n_clusters)
    for cls in (0, 1):
        present = np.unique(cluster[fragile == bool(cls)])
        if present.size == 0:
            continue
        draws = present[rng.integers(0, present.size, size=(n_boot, present.size))] + cls * n_clusters
        out += np.bincount((draws + rows).ravel(), minlength=out.size).reshape(out.shape).astype(np.int32)
    return out.astype(np.int8) if out.size and out.max() < 128 else out


def class_items(cluster: np.ndarray, fragile: np.ndarray) -> tuple[int, int]:
    """Distinct items holding a fragile / a robust observation."""
    return int(np.unique(cluster[fragile]).size), int(np.unique(cluster[~fragile]).size)


def roc_curve(margin: np.ndarray, fragile: np.ndarray, max_points: int = ROC_POINTS) -> dict[str, list]:
    """ROC points of "flag every item with margin <= t", t over the distinct margins.

    Starts at (0, 0) (nothing flagged) and ends at (1, 1); thinned to at most
    ``max_points`` points evenly spaced along the thresholds (both ends kept).
    ``margin[j]`` is the cutoff of point j (None for the first).
    """
    levels, level = _levels(margin)
    tp = np.cumsum(np.bincount(level, weights=fragile, minlength=levels.size))
    fp = np.cumsum(np.bincount(level, weights=~fragile, minlength=levels.size))
    n1, n0 = tp[-1], fp[-1]
    tpr = np.r_[0.0, tp / n1] if n1 else np.r_[0.0, np.zeros_like(tp)]
    fpr = np.r_[0.0, fp / n0] if n0 else np.r_[0.0, np.zeros_like(fp)]
    cut = [None, *levels.tolist()]
    keep = np.unique(np.round(np.linspace(0, levels.size, min(max_points, levels.size + 1))).astype(int))
    return {"fpr": fpr[keep].tolist(), "tpr": tpr[keep].tolist(), "margin": [cut[j] for j in keep]}


def calibration(margin: np.ndarray, fragile: np.ndarray, bins: int = DECILES) -> list[dict[str, Any]]:
    """Fragile rate per margin decile.

    Edges are the 10%..90% quantiles of the margins (numpy's linear interpolation);
    decile d holds margins in ``(q_{d-1}, q_d]`` (the first from the minimum, the last
    to the maximum). Tied margins share a decile, so a decile may be empty (rate None).
    """
    edges = np.quantile(margin, np.arange(1, bins) / bins)
    which = np.searchsorted(edges, margin, side="left")
    n = np.bincount(which, minlength=bins)
    f = np.bincount(which, weights=fragile, minlength=bins).astype(np.int64)
    lo = np.r_[margin.min(), edges]
    hi = np.r_[edges, margin.max()]
    return [
        {
            "decile": d + 1,
            "margin_lo": float(lo[d]),
            "margin_hi": float(hi[d]),
            "items": int(n[d]),
            "fragile": int(f[d]),
            "rate": float(f[d] / n[d]) if n[d] else None,
        }
        for d in range(bins)
    ]


def screen(margin: np.ndarray, fragile: np.ndarray, precision: float = PRECISION_TARGET) -> dict[str, Any]:
    """The screening figure: flag items with margin <= t (ties flagged together).

    Over the distinct cutoffs t, the largest recall (share of fragile items flagged)
    whose precision (share of flagged items that are fragile) is >= ``precision``
    (compared at 12 decimals). ``recall`` is None when no cutoff reaches it.
    """
    levels, level = _levels(margin)
    tp = np.cumsum(np.bincount(level, weights=fragile, minlength=levels.size))
    flagged = np.cumsum(np.bincount(level, minlength=levels.size))
    n1 = int(fragile.sum())
    prec = tp / flagged
    ok = np.flatnonzero(np.round(prec, 12) >= round(precision, 12))
    out: dict[str, Any] = {"precision_target": precision, "fragile": n1, "items": int(margin.size)}
    if n1 == 0 or ok.size == 0:
        out.update(recall=None, precision=None, flagged=None, margin_cutoff=None)
        return out
    j = int(ok[-1])  # recall grows with the cutoff: the last one wins
    out.update(
        recall=float(tp[j] / n1), precision=float(prec[j]), flagged=int(flagged[j]), margin_cutoff=float(levels[j])
    )
    return out


def predictor_stats(
    margin: np.ndarray,
    fragile: np.ndarray,
    boots: np.ndarray | None,
    precision: float = PRECISION_TARGET,
    curves: bool = True,
    classes: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """AUC (+ CI from ``boots``), ROC points and calibration by decile (``curves``), and the
    screening figure. ``classes``: the (fragile, robust) item counts; below
    ``MIN_CLASS_ITEMS`` in either the AUC and CI are None with the reason (v3)."""
    n1 = int(fragile.sum())
    out: dict[str, Any] = {
        "items": int(margin.size),
        "fragile": n1,
        "base_rate": float(n1 / margin.size) if margin.size else None,
    }
    if margin.size == 0:
        out.update(auc=None, ci=None, roc=None, calibration=None, screen=None, reason="no item carries a margin")
        return out
    a = auc(margin, fragile)
    n_frag, n_rob = classes if classes is not None else (n1, int(margin.size) - n1)
    if a is not None and min(n_frag, n_rob) < MIN_CLASS_ITEMS:
        a = None
        out["reason"] = (
            f"too few items in a class for an AUC: {n_frag} fragile, {n_rob} robust (both need >= {MIN_CLASS_ITEMS})"
        )
    out["auc"] = a
    ci = None
    if a is not None and boots is not None:
        finite = boots[np.isfinite(boots)]
        ci = list(percentile_ci(finite)) if finite.size else None
    out["ci"] = ci
    if a is None and "reason" not in out:
        out["reason"] = "every item is fragile" if n1 else "no item is fragile"
    if curves:
        out["roc"] = roc_curve(margin, fragile)
        out["calibration"] = calibration(margin, fragile)
    out["screen"] = screen(margin, fragile, precision)
    return out


def flip_predictor(
    C: np.ndarray,
    margin: np.ndarray | None,
    grid: Grid,
    *,
    models: tuple[str, ...],
    seed: int,
    scope: str,
    n_boot: int = DEFAULT_FLIP_BOOT,
    precision: float = PRECISION_TARGET,
    curves: bool = True,
) -> dict[str, Any]:
    """Predict config-fragile items from the margin at one likelihood configuration.

    Per model: items with a margin for that model; label = config-fragile for the
    model (section 3.4). Pooled: every (model, item) with a margin in one list.
    CIs: 95% percentile bootstrap over items, resampled within each class
    (``stratified_weights``; ``n_boot`` resamples from one generator per scope, drawn
    for each model in turn, then for the pooled figure). AUC and CI only when both
    classes hold ``MIN_CLASS_ITEMS`` items (v3).
    ``n_boot = 0``: no CI. ``precision``: the screening figure's target. ``curves=False``
    leaves out the ROC points and the calibration table (a lighter section).
    Returns ``{"skipped": reason}`` when no likelihood configuration has margins.
    """
    k, reason = margin_config(grid, margin)
    if k is None:
        return {"skipped": reason}
    assert margin is not None
    M, N, _ = C.shape
    fragile = robust_masks(C)[2]
    mk = margin[:, :, k]
    has = np.isfinite(mk)
    rng = rng_for(seed, "flip", scope) if n_boot > 0 else None

    def boots_for(marg: np.ndarray, frag: np.ndarray, items: np.ndarray) -> tuple[np.ndarray | None, tuple[int, int]]:
        classes = class_items(items, frag)
        if rng is None or min(classes) < MIN_CLASS_ITEMS:
            return None, classes
        w = stratified_weights(items, frag, N, n_boot, rng)
        return auc_bootstrap(marg, frag, items + N * frag.astype(np.intp), w), classes

    per_model: dict[str, Any] = {}
    for m in range(M):
        idx = np.flatnonzero(has[m])
        boots, classes = boots_for(mk[m, idx], fragile[m, idx], idx)
        stats = predictor_stats(mk[m, idx], fragile[m, idx], boots, precision, curves, classes)
        stats["no_margin"] = int(N - idx.size)
        per_model[models[m]] = stats
    mi, ii = np.nonzero(has)
    boots, classes = boots_for(mk[mi, ii], fragile[mi, ii], ii)
    pooled = predictor_stats(mk[mi, ii], fragile[mi, ii], boots, precision, curves, classes)
    pooled["no_margin"] = int(M * N - ii.size)
    return {
        "config": grid.keys[k],
        "n_boot": int(n_boot),
        "precision_target": precision,
        "per_model": per_model,
        "pooled": pooled,
    }
