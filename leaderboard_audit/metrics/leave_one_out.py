"""Leave one benchmark out: every headline number without one benchmark (paper, Table 9, A.9).

The paper recomputes its headline numbers with TruthfulQA removed (appendix A.9,
Table 9) and finds two that move (the champion count, 4 -> 3, and the minimum
Kendall tau). These helpers do that for any benchmark: the reduced records, and the
headline numbers of a records set computed with the existing metrics. Definitions:
docs/audits.md, "Beyond the paper: leave one benchmark out".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..records import Records
from ..records.names import POOLED
from . import axes as axes_m
from .champions import champions
from .compression import compression
from .harness_effects import reference_discordance
from .pairs import adjacent_pairs
from .per_model import band, config_words, leaderboard_order

MIN_BENCHMARKS = 3


def without_benchmark(records: Records, benchmark: str) -> Records:
    """The records without one benchmark's items (models, grid, pred and margin kept)."""
    if benchmark not in records.benchmarks:
        raise KeyError(f"no benchmark {benchmark!r}; have {list(records.benchmarks)}")
    return records.select_items(np.flatnonzero(records.items.benchmark != benchmark))


def headline_numbers(
    records: Records, *, seed: int, n_boot: int = 10_000, k: int = 100, scope: str = POOLED
) -> dict[str, Any]:
    """Table 9's quantities for one records set, from the metrics that compute them.

    ``scope`` names the random generators (docs/spec/AUDITS.md, "Determinism"); the reduced sets
    use the pooled scope's keys, so a reduced set's draws are a function of its records and the
    seed (its items differ from the full set's, so the draws themselves are not shared).
    """
    C = records.correct
    names = records.models
    ref = records.grid.reference_index
    M, N, K = C.shape
    b = band(C, ref)
    order = leaderboard_order(b["reference"], names)
    pairs = adjacent_pairs(C, ref, order, seed=seed, scope=scope, models=names, n_boot=n_boot)
    shares = [p.fragile_share for p in pairs if p.fragile_share is not None]
    acc = C.sum(axis=1, dtype=np.int64) / N
    ch = champions(acc, ref)
    wins: dict[str, dict[str, Any]] = {}
    for kk in range(K):
        margin = ch["margin"][kk]
        items = 0 if np.isnan(margin) else round(margin * N)
        for m in ch["winners"][kk]:
            w = wins.setdefault(names[m], {"configs": 0, "outright": 0, "margin_items": []})
            w["configs"] += 1
            if len(ch["winners"][kk]) == 1:
                w["outright"] += 1
                w["margin_items"].append(items)
    for w in wins.values():
        mi = w.pop("margin_items")
        w["min_margin_items"] = min(mi) if mi else 0
        w["max_margin_items"] = max(mi) if mi else 0
    comp = compression(C, ref, seed=seed, scope=scope, k=k)
    groups = axes_m.axis_groups(records.grid)
    rob = axes_m.axis_robust(C, groups)
    # AUDITS v4: the axis whose configs change the most answers from the reference, as the
    # axes section names it (``checks.axes``), not v3's argmin of axis-robust accuracy
    x_only, y_only = reference_discordance(config_words(C), ref)
    md = axes_m.most_destructive_v4(axes_m.disagreement_by_axis(x_only, y_only, N, groups, ref), rob)
    lucky = b["config_lucky"][np.isfinite(b["config_lucky"])]
    return {
        "items": int(N),
        "benchmarks": list(records.benchmarks),
        "reference_order": [names[m] for m in order.tolist()],
        "mean_config_lucky": float(lucky.mean()) if lucky.size else None,
        "pairs": len(pairs),
        "nonzero_gaps": sum(p.gap_items != 0 for p in pairs),
        "manufactured": sum(p.manufactured for p in pairs),
        "mean_fragile_share": float(np.mean(shares)) if shares else None,
        "champion_count": len(ch["champion_set"]),
        "champion_set": [names[m] for m in ch["champion_set"]],
        "reference_winners": [names[m] for m in ch["winners"][ref]],
        "champion_wins": dict(sorted(wins.items())),
        "top3_count": len(ch["top3"]),
        "kendall_tau": {"mean": ch["tau_mean"], "min": ch["tau_min"]},
        "corr": comp["corr"],
        "corr_ci": comp["ci"],
        "mean_fragility_topk": comp["mean_fragility_topk"],
        "mean_fragility_all": comp["mean_fragility_all"],
        "axis_robust_mean": {a: float(rob[a].mean()) for a in groups},
        "axis_kendall_min": axes_m.axis_kendall_min(acc, ref, groups),
        "most_destructive": {names[m]: md[m] for m in range(M)},
    }


# Discrete headline facts whose change is a change of conclusion, not of a decimal.
DISCRETE = (
    "reference_order",
    "manufactured",
    "nonzero_gaps",
    "champion_count",
    "champion_set",
    "reference_winners",
    "top3_count",
    "most_destructive",
    "robust_winner",
    "tiers",
)


def moved(full: dict[str, Any], reduced: dict[str, Any]) -> list[str]:
    """Headline facts that differ between the full and a reduced set: the discrete ones
    (:data:`DISCRETE`, those present), the sign of corr(disc, fragility)'s CI low, and the
    sign of the minimum Kendall tau."""
    out = [key for key in DISCRETE if (key in full or key in reduced) and full.get(key) != reduced.get(key)]

    def sign(x: float | None) -> int | None:
        return None if x is None else int(np.sign(round(x, 12)))

    def flips(a: float | None, b: float | None) -> bool:
        # v3: a defined <-> undefined change is not a sign change
        return a is not None and b is not None and sign(a) != sign(b)

    lo_f, lo_r = full.get("corr_ci"), reduced.get("corr_ci")
    if flips(lo_f and lo_f[0], lo_r and lo_r[0]):
        out.append("corr_ci_low_sign")
    tau_f, tau_r = full.get("kendall_tau") or {}, reduced.get("kendall_tau") or {}
    if flips(tau_f.get("min"), tau_r.get("min")):
        out.append("kendall_tau_min_sign")
    return out


def leave_one_out(records: Records, compute: Callable[[Records], Any]) -> dict[str, Any]:
    """``compute`` on the records without each benchmark in turn ({} below MIN_BENCHMARKS)."""
    if len(records.benchmarks) < MIN_BENCHMARKS:
        return {}
    return {b: compute(without_benchmark(records, b)) for b in records.benchmarks}
