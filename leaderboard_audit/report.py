"""The audit as a library: records -> report-v1 dict (AUDITS.md, "Report").

``audit(records)`` runs every scope; ``audit_scope`` one scope (the plugin computes
scopes lazily, once per process, and merges them on the controller).
"""
from __future__ import annotations

import json
import math
from typing import Any, Iterable

import numpy as np

from .metrics import axes as axes_m
from .metrics.brittleness import pooled_shares, variance_parts
from .metrics.champions import champions as champions_m
from .metrics.compression import compression as compression_m
from .metrics.pairs import adjacent_pairs
from .metrics.per_model import band as band_m, leaderboard_order
from .records import Records
from .verdicts import (Thresholds, axes_verdict, band_verdict, brittleness_verdict,
                       champions_verdict, compression_verdict, pair_verdict)

REPORT_FORMAT = "leaderboard-audit/report-v1"
POOLED = "pooled"
DEFAULT_SEED = 1234
DEFAULT_BOOT = 10_000


def _num(x: Any) -> Any:
    """numpy scalars -> Python numbers; NaN -> None."""
    if x is None:
        return None
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return None if math.isnan(x) else x
    return x


def scopes_of(records: Records) -> list[str]:
    """``pooled`` first, then each benchmark in sorted order."""
    return [POOLED, *records.benchmarks]


def scope_records(records: Records, scope: str) -> Records:
    return records if scope == POOLED else records.scope(scope)


def audit_scope(records: Records, scope: str, *, seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_BOOT,
                thresholds: Thresholds | None = None) -> dict[str, Any]:
    """Every table and verdict of one scope, JSON-ready."""
    t = thresholds or Thresholds()
    r = scope_records(records, scope)
    C = r.correct
    M, N, K = C.shape
    names = r.models
    keys = r.grid.keys
    ref = r.grid.reference_index
    b = band_m(C, ref)
    order = leaderboard_order(b["reference"], names)
    ref_counts = C[:, :, ref].sum(axis=1)
    rank_pos = {int(m): 1 + int((ref_counts > ref_counts[m]).sum()) for m in order}
    leaderboard = []
    for m in order.tolist():
        tie = bool((ref_counts == ref_counts[m]).sum() > 1)
        row = {"rank": rank_pos[m], "model": names[m], "tie": tie}
        row.update({k: _num(b[k][m]) for k in ("reference", "min", "max", "spread", "robust",
                                                "optimistic", "config_lucky")})
        row["reference_items"] = int(ref_counts[m])
        leaderboard.append(row)

    pairs = []
    for p in adjacent_pairs(C, ref, order, seed=seed, scope=scope, models=names, n_boot=n_boot):
        pairs.append({"higher": names[p.higher], "lower": names[p.lower], "gap": p.gap,
                      "gap_items": p.gap_items, "fragile_share": _num(p.fragile_share),
                      "robust_items": p.robust_items, "higher_only": p.higher_only,
                      "lower_only": p.lower_only, "robust_diff": _num(p.robust_diff),
                      "ci": None if p.ci is None else [p.ci[0], p.ci[1]],
                      "robust_tie": p.robust_tie, "manufactured": p.manufactured,
                      "reversing": p.reversing})

    acc = C.sum(axis=1, dtype=np.int64) / N
    ch = champions_m(acc, ref)
    per_config = []
    for k in range(K):
        ru = ch["runner_up"][k]
        margin = _num(ch["margin"][k])
        per_config.append({"config": keys[k], "winners": [names[m] for m in ch["winners"][k]],
                           "accuracy": float(ch["best"][k]),
                           "runner_up": None if ru is None else names[ru], "margin": margin,
                           "margin_items": 0 if margin is None else int(round(margin * N))})
    champions = {
        "set": [names[m] for m in ch["champion_set"]], "count": len(ch["champion_set"]),
        "outright": [names[m] for m in ch["outright"]], "top3": [names[m] for m in ch["top3"]],
        "ties": "competition ranking: every model tied at the top of a config wins it",
        "per_config": per_config,
        "rank_range": {names[m]: [int(ch["rank_range"][m, 0]), int(ch["rank_range"][m, 1])]
                       for m in order.tolist()},
        "reference_rank": {names[m]: int(ch["ranks"][m, ref]) for m in order.tolist()},
        "kendall_tau": {"mean": ch["tau_mean"], "min": ch["tau_min"]},
    }

    comp = compression_m(C, ref, seed=seed, scope=scope, k=t.compression_k)
    comp = {k: _num(v) if not isinstance(v, list) else v for k, v in comp.items()}

    groups = axes_m.axis_groups(r.grid)
    rob = axes_m.axis_robust(C, groups)
    md = axes_m.most_destructive(rob)
    axes = {
        "groups": {a: [keys[k] for k in g] for a, g in groups.items()},
        "robust_accuracy": {names[m]: {a: float(rob[a][m]) for a in axes_m.AXES} for m in order.tolist()},
        "mean": {a: float(rob[a].mean()) for a in axes_m.AXES},
        "most_destructive": {names[m]: axes_m.SINGLE_AXES[int(md[m])] for m in order.tolist()},
        "axis_kendall_min": axes_m.axis_kendall_min(acc, ref, groups),
    }

    vp = variance_parts(C)
    brittleness: dict[str, Any] = {names[m]: {k: float(vp[k][m]) for k in ("v_item", "v_prompt", "brittleness")}
                                   for m in order.tolist()}
    if scope == POOLED:
        benches = r.benchmarks
        parts = [variance_parts(r.scope(bb).correct) for bb in benches]
        v_prompt = np.stack([p["v_prompt"] for p in parts], axis=1)
        v_total = np.stack([p["v_item"] + p["v_prompt"] for p in parts], axis=1)
        pi_m, pi_b = pooled_shares(v_prompt, v_total)
        brittleness["pi_model"] = {names[m]: float(pi_m[m]) for m in order.tolist()}
        brittleness["pi_benchmark"] = {bb: float(pi_b[j]) for j, bb in enumerate(benches)}

    verdicts = [band_verdict(scope, row["model"], row, t) for row in leaderboard]
    verdicts += [pair_verdict(scope, p, K, t) for p in pairs]
    verdicts.append(champions_verdict(scope, champions, keys[ref], t))
    verdicts.append(compression_verdict(scope, comp, t))
    verdicts.append(axes_verdict(scope, axes, t))
    verdicts.append(brittleness_verdict(scope, {k: v for k, v in brittleness.items()
                                                if k not in ("pi_model", "pi_benchmark")}, t))
    return {"n_items": N, "n_models": M, "n_configs": K, "reference": keys[ref],
            "leaderboard": leaderboard, "pairs": pairs, "champions": champions, "compression": comp,
            "axes": axes, "brittleness": brittleness, "verdicts": verdicts}


def records_summary(records: Records, path: str | None = None, sha256: str | None = None) -> dict[str, Any]:
    return {"path": path if path is not None else records.source, "sha256": sha256,
            "models": list(records.models), "items": int(records.shape[1]),
            "configs": list(records.grid.keys), "benchmarks": list(records.benchmarks),
            "reference": records.grid.reference, "legend_inferred": records.grid.inferred,
            "dropped": dict(records.dropped), "notes": list(records.notes)}


def build_report(summary: dict[str, Any], scopes: dict[str, dict[str, Any]], *, seed: int, n_boot: int,
                 thresholds: Thresholds, order: Iterable[str] | None = None) -> dict[str, Any]:
    names = list(order) if order is not None else sorted(scopes, key=lambda s: (s != POOLED, s))
    return {"format": REPORT_FORMAT, "seed": seed, "bootstrap": n_boot,
            "thresholds": thresholds.as_dict(), "records": summary,
            "scopes": {s: scopes[s] for s in names if s in scopes}}


def audit(records: Records, *, seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_BOOT,
          thresholds: Thresholds | None = None, path: str | None = None) -> dict[str, Any]:
    """Audit every scope of ``records``; returns the report-v1 dict."""
    t = thresholds or Thresholds()
    sha = None
    if path is not None:
        from .records.fingerprint import sha256_of
        sha = sha256_of(path)
    scopes = {s: audit_scope(records, s, seed=seed, n_boot=n_boot, thresholds=t) for s in scopes_of(records)}
    report = build_report(records_summary(records, path, sha), scopes, seed=seed, n_boot=n_boot, thresholds=t)
    from .reports.evidence import enrich_report   # legend and the items behind each pair's gap
    return enrich_report(report, records, seed=seed, n_boot=n_boot, thresholds=t)


def dumps_report(report: dict[str, Any]) -> str:
    """Deterministic JSON text (sorted keys at every level, fixed separators)."""
    return json.dumps(report, sort_keys=True, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
