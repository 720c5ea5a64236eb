"""Benchmark compression keeps the fragile items: the paper's section 4.4 and Table 7."""

from __future__ import annotations

import numpy as np

from .bootstrap import percentile_ci
from .champions import champion_count, champion_counts_many
from .per_model import robust_masks
from .rng import first_k_of_random_order, rng_for


def discrimination(C: np.ndarray, ref: int) -> np.ndarray:
    """``disc[i]``: point-biserial (Pearson) over models of ``C[m,i,r]`` vs ``reference[m]``.

    NaN where either side is constant; rounded to 12 decimals so ties compare equal.

    In integers: with ``k[m]`` the items model m gets right under the reference, ``s[i]``
    the models that get item i right, ``T[i] = sum_m k[m] C[m,i,r]``, ``K = sum k``,
    ``r[i] = (M T[i] - K s[i]) / sqrt((M sum k^2 - K^2) (M s[i] - s[i]^2))`` (the reference
    accuracy is ``k / N``; N cancels). The numerator and both variances are exact, so items
    with the same counts get the same value and the rounding meets the correlation itself,
    not the float error of centred sums (which moved ~0.15% of items across a 12th-decimal
    boundary); ~15x faster than centring M x N floats.
    """
    y = np.ascontiguousarray(C[:, :, ref]).view(np.uint8)  # models x items, 0/1
    M = y.shape[0]
    k = np.einsum("mi->m", y, dtype=np.int64)
    s = np.einsum("mi->i", y, dtype=np.int64)
    T = np.einsum("m,mi->i", k, y, dtype=np.int64)
    K = int(k.sum())
    var_x = M * int((k * k).sum()) - K * K  # Python int: exact at any size
    var_y = M * s - s * s
    num = M * T - K * s
    with np.errstate(invalid="ignore", divide="ignore"):
        den = np.sqrt(float(var_x) * var_y.astype(np.float64))
        r = np.where((var_y > 0) & (var_x > 0), num / np.where(den > 0, den, 1.0), np.nan)
    return np.round(r, 12)


def fragility(C: np.ndarray) -> np.ndarray:
    """``fragility[i]``: fraction of models for which item i is config-fragile."""
    return robust_masks(C)[2].mean(axis=0)


def pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson correlation per row of equally shaped 2-D arrays (NaN if constant)."""
    xc = x - x.mean(axis=-1, keepdims=True)
    yc = y - y.mean(axis=-1, keepdims=True)
    den = np.sqrt((xc**2).sum(axis=-1) * (yc**2).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (xc * yc).sum(axis=-1) / np.where(den > 0, den, 1.0), np.nan)


def weighted_pearson_bootstrap(
    x: np.ndarray, y: np.ndarray, n_boot: int, rng: np.random.Generator, chunk_cells: int = 1 << 16
) -> np.ndarray:
    """Pearson(x, y) on ``n_boot`` item resamples (with replacement), via counts; NaN for a
    resample in which x or y is constant (its correlation is undefined).

    A resample is described by how many times it draws each item, so each correlation
    follows from five weighted sums (one bincount and one small matrix product) instead
    of n_boot x n gathered values per statistic. The draws are ``rng.integers(0, n,
    (n_boot, n))``, taken in blocks of about ``chunk_cells`` (the same stream as one call:
    the same resamples whatever the block size). Small blocks stay in the CPU cache:
    2.3x faster than one block on the paper-sized pooled scope, and memory stays bounded.
    A resample whose variances come out tiny next to the sample's (where the one-pass sums
    cancel) is recomputed from its drawn items, so a constant side is exactly NaN rather
    than rounding noise.
    """
    n = x.size
    xm, ym = x - x.mean(), y - y.mean()  # centred: well-conditioned sums
    values = np.stack([xm, ym, xm * xm, ym * ym, xm * ym])  # 5 x n
    tol_x, tol_y = 1e-6 * float((xm * xm).mean()), 1e-6 * float((ym * ym).mean())
    out = np.empty(n_boot)
    rows = max(1, chunk_cells // max(n, 1))
    for lo in range(0, n_boot, rows):
        b = min(rows, n_boot - lo)
        draws = rng.integers(0, n, size=(b, n))
        draws += (np.arange(b) * n)[:, None]
        w = np.bincount(draws.ravel(), minlength=b * n).reshape(b, n).astype(np.float64)
        sx, sy, sxx, syy, sxy = (values @ w.T) / n
        vx, vy = sxx - sx * sx, syy - sy * sy
        ok = (vx > tol_x) & (vy > tol_y)
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.where(ok, (sxy - sx * sy) / np.sqrt(np.where(ok, vx * vy, 1.0)), np.nan)
        for j in np.flatnonzero(~ok).tolist():
            r[j] = _pearson_of_draws(xm, ym, w[j])
        out[lo : lo + b] = r
    return out


def _pearson_of_draws(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    """Pearson(x, y) over the items drawn ``w`` times each (two passes); NaN when x or y is
    constant over the drawn items."""
    idx = np.flatnonzero(w)
    ww, xs, ys = w[idx], x[idx], y[idx]
    if xs.min() == xs.max() or ys.min() == ys.max():
        return float("nan")
    dx = xs - (ww * xs).sum() / ww.sum()
    dy = ys - (ww * ys).sum() / ww.sum()
    den = np.sqrt((ww * dx * dx).sum() * (ww * dy * dy).sum())
    return float((ww * dx * dy).sum() / den) if den > 0 else float("nan")


def top_k_split(
    values: np.ndarray, candidates: np.ndarray, k: int, n_draws: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, float, int]:
    """The top-k rule (docs/spec/AUDITS.md, compression): the cutoff ``v`` is the k-th largest of
    ``values[candidates]``; the candidates above it are always kept (``above``) and those tied
    at ``v`` fill the remaining slots by ``n_draws`` seeded random tie-breaks (``tied_kept``,
    draws x slots). Returns (above, tied_kept, v, number tied at v)."""
    d = values[candidates]
    v = np.sort(d)[::-1][k - 1]
    above = candidates[d > v]
    ties = candidates[d == v]
    tied_kept = ties[first_k_of_random_order(rng, n_draws, ties.size, k - above.size)]
    return above, tied_kept, float(v), int(ties.size)


def compression(
    C: np.ndarray,
    ref: int,
    *,
    seed: int,
    scope: str,
    k: int = 100,
    n_boot: int = 2_000,
    n_draws: int = 200,
    baselines: bool = True,
) -> dict:
    """Does a top-k-by-discrimination subset keep the config-fragile items?

    * ``corr`` = Pearson(disc, fragility) over items with defined disc, 95% percentile
      bootstrap CI over those items (``n_boot`` resamples).
    * Top-k: cutoff ``v`` = k-th largest disc; items with disc > v kept, the ties at v
      fill the remaining slots by a seeded random tie-break (``n_draws`` draws).
    * Random baseline: ``n_draws`` subsets of k items without replacement.
    * Fewer than 2k items in the scope: k becomes N // 2 (``k_reduced``).
    * ``baselines=False``: the champion counts (top-k draws and random baseline) are left
      out (None); nothing a verdict reads depends on them.
    """
    N = C.shape[1]
    k_requested = k
    if N < 2 * k:
        k = N // 2
    disc = discrimination(C, ref)
    frag = fragility(C)
    defined = np.flatnonzero(~np.isnan(disc))
    out: dict = {
        "k": int(k),
        "k_requested": int(k_requested),
        "k_reduced": bool(k != k_requested),
        "items": int(N),
        "disc_defined": int(defined.size),
        "disc_undefined": int(N - defined.size),
        "mean_fragility_all": float(frag.mean()) if N else None,
        "champions_full": champion_count(C),
    }
    d, f = disc[defined], frag[defined]
    corr = float(pearson_rows(d, f)) if defined.size >= 2 else float("nan")
    out["corr"] = None if np.isnan(corr) else corr
    if defined.size >= 2 and out["corr"] is not None:
        rng = rng_for(seed, "compression", "corr", scope)
        boots = weighted_pearson_bootstrap(d, f, n_boot, rng)
        boots = boots[~np.isnan(boots)]
        out["ci"] = list(percentile_ci(boots)) if boots.size else None
    else:
        out["ci"] = None
    out["distinct_disc_values"] = int(np.unique(d).size)
    kk = min(k, int(defined.size))
    out["k_used"] = int(kk)  # the top-k subset's real size: only items with a defined disc rank
    if kk > 0:
        above, tied_kept, v, n_ties = top_k_split(
            disc, defined, kk, n_draws, rng_for(seed, "compression", "topk", scope)
        )
        champs = champion_counts_many(C, tied_kept, always=above) if baselines else None
        out.update(
            cutoff=float(v),
            cutoff_above=int(above.size),
            cutoff_ties=n_ties,
            champions_topk_mean=None if champs is None else float(champs.mean()),
            champions_topk_min=None if champs is None else int(champs.min()),
            champions_topk_max=None if champs is None else int(champs.max()),
            mean_fragility_topk=float(((frag[above].sum() + frag[tied_kept].sum(axis=1)) / kk).mean()),
        )
    else:
        out.update(
            cutoff=None,
            cutoff_above=0,
            cutoff_ties=0,
            champions_topk_mean=None,
            champions_topk_min=None,
            champions_topk_max=None,
            mean_fragility_topk=None,
        )
    if k > 0 and baselines:
        rng = rng_for(seed, "compression", "random", scope)
        rand = first_k_of_random_order(rng, n_draws, N, k)
        out["champions_random_mean"] = float(champion_counts_many(C, rand).mean())
    else:
        out["champions_random_mean"] = None
    return out
