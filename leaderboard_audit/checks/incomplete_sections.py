"""The sections of an incomplete scope: what a report may print about a partial grid
(docs/audits.md, "Incomplete grids", "What the report prints").

The checks compute their sections on the bits, where a missing cell is 0: on a partial grid
that reads every missing cell as a wrong answer (a budgeted plan observes different cells
for different models, so the bias is not even the same for every model). Here each section
of an incomplete scope is replaced by what is true of the grid whatever the missing cells
hold, or estimated under the collection design, or left out with the reason:

* ``leaderboard``: the printed (reference) order and the reference accuracy (the reference
  configuration is observed on every cell, or the records are refused), exact; every other
  column as its exact ``bounds`` over all completions (min, max, spread, robust, the
  harness-averaged accuracy);
* ``averaged`` (the published board): estimated from the design's uniform random item
  sample, every cell of which was observed, when that sample is at least half of the scope's
  items (``BOARD_MIN_SHARE``); else left out, with the cells that would make it printable;
* every other section is left out (``incomplete.withheld`` names each with its reason): their
  statistics have neither an exact bound nor a design-based estimator here.

The verdicts are decided or undecided by ``checks/incomplete.py``; this module only touches
the descriptive sections.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..metrics import incomplete as inc
from .base import Scope
from .incomplete import bounds_of, sample_items

#: the keys of a scope's report that hold no statistic of the missing cells
EXACT_KEYS = frozenset({"n_items", "n_models", "n_configs", "reference", "verdicts", "incomplete"})
#: the board's scores are printed only when the random sample holds at least this share of the
#: items: the estimate of a model's averaged score then strays from the full grid's score by less
#: than the full grid's own 95% CI over items for at least 95% of models (the estimate's error
#: has variance s^2 (1 - f) / n, the full grid's CI half-width is 1.96 s / sqrt(N); with n = f N
#: the two agree at f = 1/2: docs/audits.md)
BOARD_MIN_SHARE = 0.5
WITHHELD = (
    "left out on an incomplete grid: it would read every missing cell as a wrong answer, and it has "
    "no exact bound or design-based estimate here (docs/audits.md, 'Incomplete grids')"
)
DESIGN = "uniform random item sample (collection_design.random_sample), every cell observed"


def partial_scope_report(sc: Scope, out: dict[str, Any]) -> dict[str, Any]:
    """``out`` (a scope's report) with only what an incomplete grid supports (module docstring).
    Idempotent: a section already left out stays out."""
    incomplete = dict(out.get("incomplete") or {})
    withheld = dict(incomplete.get("withheld") or {})
    kept: dict[str, Any] = {}
    for key, value in out.items():
        if key in EXACT_KEYS:
            kept[key] = value
        elif key == "leaderboard" and isinstance(value, list):
            kept[key] = bounded_leaderboard(sc, value)
        elif key == "averaged" and isinstance(value, dict) and "estimated_from" in value:
            kept[key] = value
        elif key == "averaged" and isinstance(value, dict):
            board, why = estimated_board(sc)
            if board is None:
                withheld[key] = why
            else:
                kept[key] = board
        elif isinstance(value, dict) and set(value) == {"skipped"}:
            kept[key] = value  # says only why it was not computed
        else:
            withheld[key] = WITHHELD
    incomplete["withheld"] = dict(sorted(withheld.items()))
    kept["incomplete"] = incomplete
    return kept


def bounded_leaderboard(sc: Scope, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The band section's rows on a partial grid: the printed order and reference accuracy as
    they are (exact), every other column as ``bounds[column] = [low, high]`` over all
    completions of the missing cells."""
    b = bounds_of(sc)
    N = sc.shape[1]
    lo, hi = b.cnt_lo / N, b.cnt_hi / N  # (M, K) accuracy bounds
    big = np.where(b.possible, 0.0, np.inf)
    small = np.where(b.possible, 0.0, -np.inf)
    min_lo, min_hi = (lo + big).min(axis=1), (hi + big).min(axis=1)
    max_lo, max_hi = (lo + small).max(axis=1), (hi + small).max(axis=1)
    spread_lo, spread_hi = inc.band_bounds(lo, hi, b.possible)
    robust_lo, robust_hi = inc.robust_accuracy_bounds(b.status)
    avg_lo, avg_hi = averaged_bounds(sc)
    index = {m: j for j, m in enumerate(sc.names)}
    out = []
    for r in rows:
        m = index[r["model"]]
        out.append(
            {
                "rank": r["rank"],
                "model": r["model"],
                "tie": r["tie"],
                "reference": r["reference"],
                "reference_items": r["reference_items"],
                "bounds": {
                    "averaged": [float(avg_lo[m]), float(avg_hi[m])],
                    "min": [float(min_lo[m]), float(min_hi[m])],
                    "max": [float(max_lo[m]), float(max_hi[m])],
                    "spread": [float(spread_lo[m]), float(spread_hi[m])],
                    "robust": [float(robust_lo[m]), float(robust_hi[m])],
                },
            }
        )
    return out


def _outcomes(sc: Scope) -> tuple[np.ndarray, np.ndarray]:
    """(values, observed): every cell's outcome as a float (a graded score, else the bit) and
    whether it was observed."""
    b = bounds_of(sc)
    values = np.asarray(sc.S, dtype=np.float64)
    return np.where(b.obs, values, 0.0), b.obs


def averaged_bounds(sc: Scope) -> tuple[np.ndarray, np.ndarray]:
    """(M,) the harness-averaged accuracy's low and high over all completions: the mean over
    items of the mean over the model's possible configurations, unknown cells 0, then 1."""
    b = bounds_of(sc)
    values, obs = _outcomes(sc)
    per = b.possible[:, None, :]
    k = np.maximum(b.possible.sum(axis=1), 1)
    right = (values * per).sum(axis=(1, 2))
    unknown = ((~obs) & per).sum(axis=(1, 2))
    N = sc.shape[1]
    return right / (N * k), (right + unknown) / (N * k)


def full_sample(sc: Scope) -> np.ndarray | None:
    """The design sample's items every cell of which (every model, its possible configurations)
    was observed; None when the records carry no design. A sampled cell that failed is not a
    random omission, so an item with one is left out (as the robust-accuracy estimate does)."""
    sample = sample_items(sc)
    if sample is None:
        return None
    b = bounds_of(sc)
    seen = (b.obs | ~b.possible[:, None, :])[:, sample, :].all(axis=(0, 2))
    return sample[seen]


def cells_for_board(sc: Scope, sample: np.ndarray | None) -> int:
    """Collectable missing cells on the fewest further items that would bring the random sample
    to ``BOARD_MIN_SHARE`` of the items (the items with the fewest missing cells first: a lower
    bound of what a design that samples more items uniformly would collect)."""
    b = bounds_of(sc)
    N = sc.shape[1]
    have = 0 if sample is None else int(sample.size)
    need = max(0, int(np.ceil(BOARD_MIN_SHARE * N)) - have)
    if need == 0:
        return 0
    per_item = b.collectable.sum(axis=(0, 2))
    if sample is not None and sample.size:
        per_item = per_item.copy()
        per_item[sample] = np.iinfo(per_item.dtype).max
    return int(np.sort(per_item)[:need].sum())


def estimated_board(sc: Scope) -> tuple[dict[str, Any] | None, str]:
    """The published board of a partial grid, estimated from the design's random sample, or
    (None, why it is left out)."""
    from .averaged import CHECK as AVERAGED

    N = sc.shape[1]
    sample = full_sample(sc)
    n = 0 if sample is None else int(sample.size)
    if sample is None or n < BOARD_MIN_SHARE * N or n < 2:
        cells = cells_for_board(sc, sample)
        source = (
            "the records carry no collection design (no uniform random item sample to estimate from)"
            if sample is None
            else f"the design's uniform random sample has {n:,} of {N:,} items with every cell observed"
        )
        return None, (
            f"no harness-averaged board on an incomplete grid: {source}; its scores would stray outside the full "
            f"grid's own 95% CI for more than 5% of models (it needs at least half the items observed under every "
            f"configuration: about {cells:,} more cells). The exact bounds of each model's averaged score are in "
            "the leaderboard section"
        )
    section = AVERAGED.compute(sc.on(sc.records.select_items(sample)))
    if not section or "board" not in section:
        return None, "no harness-averaged board: fewer than two models"
    values, _ = _outcomes(sc)
    b = bounds_of(sc)
    k = np.maximum(b.possible.sum(axis=1), 1)
    item_scores = (values * b.possible[:, None, :]).sum(axis=2)[:, sample] / k[:, None]
    est, lo, hi = inc.srs_interval(item_scores, N)
    a_lo, a_hi = averaged_bounds(sc)
    index = {m: j for j, m in enumerate(sc.names)}
    rows = []
    for r in section["board"]["rows"]:
        m = index[r["model"]]
        rows.append(
            {
                **r,
                # the full grid's value lies in its exact range: so do the estimate and its interval
                "averaged": float(np.clip(est[m], a_lo[m], a_hi[m])),
                "ci": [float(np.clip(lo[m], a_lo[m], a_hi[m])), float(np.clip(hi[m], a_lo[m], a_hi[m]))],
                "bounds": [float(a_lo[m]), float(a_hi[m])],
            }
        )
    # the sample's printed order need not be the grid's: its adjacent-pair flags would name other pairs
    board = {k: v for k, v in section["board"].items() if k != "printed_pairs_separated"}
    board["rows"] = rows
    return {
        "estimated_from": {"design": DESIGN, "items": n, "of": N},
        "board": board,
    }, ""


__all__ = [
    "BOARD_MIN_SHARE",
    "EXACT_KEYS",
    "averaged_bounds",
    "bounded_leaderboard",
    "estimated_board",
    "full_sample",
    "partial_scope_report",
]
