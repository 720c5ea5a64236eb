"""`--audit-submission MODEL`: what a newcomer's arrival changes (a CI gate).

``submission_audit(records, models)`` compares the leaderboard *with* the
newcomer(s) against the leaderboard *without* them, per scope:

* the newcomer's band (Table 1 row) and its band verdict;
* its adjacent pairs above and below on the reference leaderboard (identified or
  manufactured, with ``robust_items`` / ``higher_only`` / ``lower_only`` /
  ``reversing`` counts) and their verdicts;
* whether it enters the champion set, under which configurations and by how many
  items over the best existing model; the champion set with and without it;
* its rank range across configurations and its reference rank;
* which adjacent orderings of the leaderboard without it its arrival breaks: a
  pair that was adjacent and is now split by a newcomer, or whose verdict changes.

The verdicts are computed with the same functions, seeds and keys as
``auditor.audit_scope``, so they equal the checks the plugin runs in submission
mode (``auditor.submission_cases``): band and pairs of the newcomer, champions.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Sequence

import numpy as np

from .metrics.pairs import adjacent_pairs
from .metrics.per_model import band as band_m, leaderboard_order
from .records import Records
from .scopes import scope_records, scopes_of
from .settings import DEFAULT_BOOT, DEFAULT_SEED
from .checks.band import BAND_KEYS, band_verdict
from .checks.base import num as _num
from .checks.champions import champions_entry, champions_verdict
from .checks.manufactured import pair_entry, pair_verdict
from .verdicts import FAIL, PASS, SEVERITY, WARN, Thresholds


def _slim(v: dict[str, Any]) -> dict[str, Any]:
    return {k: v[k] for k in ("check", "id", "status", "value", "threshold", "margin", "message")}


def submission_scope(
    records: Records,
    scope: str,
    models: Sequence[str],
    *,
    seed: int = DEFAULT_SEED,
    n_boot: int = DEFAULT_BOOT,
    thresholds: Thresholds | None = None,
) -> dict[str, Any]:
    """The newcomers' audit in one scope (see the module docstring)."""
    t = thresholds or Thresholds()
    r = scope_records(records, scope)
    C = r.correct
    M, N, K = C.shape
    names = r.models
    keys = r.grid.keys
    ref = r.grid.reference_index
    new = [names.index(m) for m in models]
    old = [m for m in range(M) if m not in new]
    b = band_m(C, ref)
    counts = C.sum(axis=1, dtype=np.int64)
    acc = counts / N

    order_full = leaderboard_order(b["reference"], names)
    ref_sub = b["reference"][old]
    order_old = np.array([old[j] for j in leaderboard_order(ref_sub, [names[m] for m in old])], dtype=np.intp)
    pairs_full = [
        pair_entry(p, names)
        for p in adjacent_pairs(
            C, ref, order_full, seed=seed, scope=scope, models=names, n_boot=n_boot, fragile_threshold=t.fragile_share
        )
    ]
    pairs_old = (
        [
            pair_entry(p, names)
            for p in adjacent_pairs(
                C,
                ref,
                order_old,
                seed=seed,
                scope=scope,
                models=names,
                n_boot=n_boot,
                fragile_threshold=t.fragile_share,
            )
        ]
        if len(order_old) > 1
        else []
    )
    for p in pairs_full + pairs_old:
        p["verdict"] = _slim(pair_verdict(scope, p, K, t))

    ch_full, raw_full = champions_entry(acc, ref, names, keys, N)
    ch_old, _ = champions_entry(acc, ref, names, keys, N, old) if old else ({"set": [], "count": 0}, None)
    champ_v = _slim(champions_verdict(scope, ch_full, keys[ref], t))
    champ_v_old = _slim(champions_verdict(scope, ch_old, keys[ref], t)) if len(old) > 1 else None
    ranks = raw_full["ranks"]

    newcomers = []
    for m in new:
        name = names[m]
        row = {k: _num(b[k][m]) for k in BAND_KEYS}
        pos = int(np.flatnonzero(order_full == m)[0])
        above = next((p for p in pairs_full if p["lower"] == name), None)
        below = next((p for p in pairs_full if p["higher"] == name), None)
        wins = []
        for k in range(K):
            if not raw_full["win"][m, k]:
                continue
            best_old = int(counts[old, k].max()) if old else 0
            prev = [names[o] for o in old if counts[o, k] == best_old]
            wins.append(
                {
                    "config": keys[k],
                    "accuracy": float(acc[m, k]),
                    "margin_items": int(counts[m, k]) - best_old,
                    "tie": int(counts[m, k]) == best_old,
                    "displaced": prev,
                }
            )
        newcomers.append(
            {
                "model": name,
                "rank": 1 + int((counts[:, ref] > counts[m, ref]).sum()),
                "position": pos + 1,
                "of": M,
                "rank_range": [int(ranks[m].min()), int(ranks[m].max())],
                "band": row,
                "band_verdict": _slim(band_verdict(scope, name, row, t)),
                "above": above,
                "below": below,
                "champion": {
                    "enters": bool(raw_full["win"][m].any()),
                    "configs": wins,
                    "ahead_of_existing": sum(1 for w in wins if w["margin_items"] > 0),
                },
            }
        )

    # existing adjacent orderings: still adjacent (same verdict?) or split by a newcomer
    adjacent_full = {(p["higher"], p["lower"]): p for p in pairs_full}
    broken = []
    for p in pairs_old:
        key = (p["higher"], p["lower"])
        after = adjacent_full.get(key)
        if after is None:
            hi = int(np.flatnonzero(order_full == names.index(p["higher"]))[0])
            lo = int(np.flatnonzero(order_full == names.index(p["lower"]))[0])
            between = [names[order_full[j]] for j in range(hi + 1, lo)]
            broken.append(
                {
                    "higher": p["higher"],
                    "lower": p["lower"],
                    "how": "split",
                    "between": between,
                    "status_before": p["verdict"]["status"],
                    "manufactured_before": p["manufactured"],
                }
            )
        elif after["verdict"]["status"] != p["verdict"]["status"]:
            broken.append(
                {
                    "higher": p["higher"],
                    "lower": p["lower"],
                    "how": "verdict",
                    "between": [],
                    "status_before": p["verdict"]["status"],
                    "status_after": after["verdict"]["status"],
                    "manufactured_before": p["manufactured"],
                }
            )

    checks = [n["band_verdict"] for n in newcomers]
    seen: set[str] = set()
    for n in newcomers:
        for p in (n["above"], n["below"]):
            if p is not None and p["verdict"]["id"] not in seen:
                seen.add(p["verdict"]["id"])
                checks.append(p["verdict"])
    checks.append(champ_v)
    return {
        "n_items": N,
        "n_models": M,
        "n_configs": K,
        "reference": keys[ref],
        "leaderboard": [names[m] for m in order_full.tolist()],
        "leaderboard_without": [names[m] for m in order_old.tolist()],
        "newcomers": newcomers,
        "champions_with": ch_full["set"],
        "champions_without": ch_old["set"],
        "champions_verdict": champ_v,
        "champions_verdict_without": champ_v_old,
        "existing_pairs": len(pairs_old),
        "broken": broken,
        "checks": checks,
    }


#: checks whose cases the gate keeps for a newcomer (its band, its pairs) or keeps whole
SUBMISSION_SUBJECT_CHECKS = ("band", "manufactured")
SUBMISSION_SCOPE_CHECKS = ("champions",)


def submission_cases(cases: list[Any], models: Sequence[str]) -> list[Any]:
    """Only the cases a new model's arrival changes: its band, its adjacent pairs (above
    and below it on each scope's reference leaderboard), champions. Matches subjects
    exactly, so a model name that contains another one selects nothing extra."""
    new = set(models)
    out = []
    for c in cases:
        if c.check in SUBMISSION_SCOPE_CHECKS or (c.check in SUBMISSION_SUBJECT_CHECKS and new & set(c.subject)):
            out.append(c)
    return out


def overall(checks: list[dict[str, Any]], strict: bool = False) -> dict[str, Any]:
    """Worst status over the checks, counts, and the exit code pytest will give."""
    counts = {st: sum(v["status"] == st for v in checks) for st in (PASS, WARN, FAIL)}
    worst = max((v["status"] for v in checks), key=SEVERITY.__getitem__, default=PASS)
    exit_code = 1 if counts[FAIL] or (strict and counts[WARN]) else 0
    # margins of different checks have different units: name the first worst check in
    # check order (pooled scope first; band, pairs, champions)
    worst_check = next((v["id"] for v in checks if v["status"] == worst), None) if worst != PASS else None
    return {
        "status": worst,
        "counts": counts,
        "checks": len(checks),
        "exit_code": exit_code,
        "strict": strict,
        "worst": worst_check,
    }


def submission_audit(
    records: Records,
    models: Sequence[str],
    *,
    seed: int = DEFAULT_SEED,
    n_boot: int = DEFAULT_BOOT,
    thresholds: Thresholds | None = None,
    strict: bool = False,
    scopes: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Every scope's newcomer audit, and the overall state (JSON-ready)."""
    models = list(dict.fromkeys(models))
    unknown = [m for m in models if m not in records.models]
    if unknown:
        raise KeyError(f"--audit-submission {unknown}: not in the records (models: {', '.join(records.models)})")
    names = list(scopes) if scopes is not None else scopes_of(records)
    out = {s: submission_scope(records, s, models, seed=seed, n_boot=n_boot, thresholds=thresholds) for s in names}
    checks = [v for s in out.values() for v in s["checks"]]
    return {"models": models, "scopes": out, "overall": overall(checks, strict)}


__all__ = ["overall", "submission_audit", "submission_cases", "submission_scope"]
