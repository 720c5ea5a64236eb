"""Table 9's headline numbers computed straight from the metrics (the paper's appendix A.9):
the reference ``mix``'s ``headline_from_sections`` is checked against (nothing in the package
needs a second route to them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from leaderboard_audit.metrics import axes as axes_m
from leaderboard_audit.metrics.champions import champions
from leaderboard_audit.metrics.compression import compression
from leaderboard_audit.metrics.harness_effects import reference_discordance
from leaderboard_audit.metrics.leave_one_out import MIN_BENCHMARKS, without_benchmark
from leaderboard_audit.metrics.pairs import adjacent_pairs
from leaderboard_audit.metrics.per_model import band, config_words, leaderboard_order
from leaderboard_audit.records import Records
from leaderboard_audit.records.names import POOLED


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


def leave_one_out(records: Records, compute: Callable[[Records], Any]) -> dict[str, Any]:
    """``compute`` on the records without each benchmark in turn ({} below MIN_BENCHMARKS)."""
    if len(records.benchmarks) < MIN_BENCHMARKS:
        return {}
    return {b: compute(without_benchmark(records, b)) for b in records.benchmarks}
