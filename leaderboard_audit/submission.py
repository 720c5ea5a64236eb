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
``report.audit_scope``, so they equal the checks the plugin runs in submission
mode (``loading.submission_filter``): band and pairs of the newcomer, champions.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .metrics.champions import champions as champions_m
from .metrics.pairs import PairStats, adjacent_pairs
from .metrics.per_model import band as band_m, leaderboard_order
from .records import Records
from .report import DEFAULT_BOOT, DEFAULT_SEED, POOLED, _num, scope_records, scopes_of
from .reports.text import clean, num, signed
from .verdicts import FAIL, PASS, WARN, Thresholds, band_verdict, champions_verdict, pair_verdict

SEVERITY = {PASS: 0, WARN: 1, FAIL: 2}


def _pair_dict(p: PairStats, names: Sequence[str]) -> dict[str, Any]:
    """The report's pair entry (same keys as ``report.audit_scope``)."""
    return {"higher": names[p.higher], "lower": names[p.lower], "gap": p.gap,
            "gap_items": p.gap_items, "fragile_share": _num(p.fragile_share),
            "robust_items": p.robust_items, "higher_only": p.higher_only,
            "lower_only": p.lower_only, "robust_diff": _num(p.robust_diff),
            "ci": None if p.ci is None else [p.ci[0], p.ci[1]],
            "robust_tie": p.robust_tie, "manufactured": p.manufactured,
            "reversing": p.reversing}


def _slim(v: dict[str, Any]) -> dict[str, Any]:
    return {k: v[k] for k in ("check", "id", "status", "value", "threshold", "margin", "message")}


def _champions_dict(acc: np.ndarray, ref: int, names: Sequence[str], keys: Sequence[str],
                    members: list[int], N: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Champions over the models ``members`` (indices into ``names``): the report's
    champions entry (enough for ``champions_verdict``) and the raw result."""
    sub = acc[members]
    ch = champions_m(sub, ref)
    per_config = []
    for k in range(len(keys)):
        ru = ch["runner_up"][k]
        margin = _num(ch["margin"][k])
        per_config.append({"config": keys[k], "winners": [names[members[m]] for m in ch["winners"][k]],
                           "accuracy": float(ch["best"][k]),
                           "runner_up": None if ru is None else names[members[ru]], "margin": margin,
                           "margin_items": 0 if margin is None else int(round(margin * N))})
    out = {"set": [names[members[m]] for m in ch["champion_set"]], "count": len(ch["champion_set"]),
           "outright": [names[members[m]] for m in ch["outright"]], "per_config": per_config}
    return out, ch


def submission_scope(records: Records, scope: str, models: Sequence[str], *, seed: int = DEFAULT_SEED,
                     n_boot: int = DEFAULT_BOOT, thresholds: Thresholds | None = None) -> dict[str, Any]:
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
    order_old = np.array([old[j] for j in leaderboard_order(ref_sub, [names[m] for m in old])],
                         dtype=np.intp)
    pairs_full = [_pair_dict(p, names) for p in
                  adjacent_pairs(C, ref, order_full, seed=seed, scope=scope, models=names, n_boot=n_boot)]
    pairs_old = [_pair_dict(p, names) for p in
                 adjacent_pairs(C, ref, order_old, seed=seed, scope=scope, models=names, n_boot=n_boot)] \
        if len(order_old) > 1 else []
    for p in pairs_full + pairs_old:
        p["verdict"] = _slim(pair_verdict(scope, p, K, t))

    ch_full, raw_full = _champions_dict(acc, ref, names, keys, list(range(M)), N)
    ch_old, _ = _champions_dict(acc, ref, names, keys, old, N) if old else ({"set": [], "count": 0}, None)
    champ_v = _slim(champions_verdict(scope, ch_full, keys[ref], t))
    champ_v_old = _slim(champions_verdict(scope, ch_old, keys[ref], t)) if len(old) > 1 else None
    ranks = raw_full["ranks"]

    newcomers = []
    for m in new:
        name = names[m]
        row = {k: _num(b[k][m]) for k in ("reference", "min", "max", "spread", "robust", "optimistic",
                                           "config_lucky")}
        pos = int(np.flatnonzero(order_full == m)[0])
        above = next((p for p in pairs_full if p["lower"] == name), None)
        below = next((p for p in pairs_full if p["higher"] == name), None)
        wins = []
        for k in range(K):
            if not raw_full["win"][m, k]:
                continue
            best_old = int(counts[old, k].max()) if old else 0
            prev = [names[o] for o in old if counts[o, k] == best_old]
            wins.append({"config": keys[k], "accuracy": float(acc[m, k]),
                         "margin_items": int(counts[m, k]) - best_old,
                         "tie": int(counts[m, k]) == best_old, "displaced": prev})
        newcomers.append({
            "model": name,
            "rank": 1 + int((counts[:, ref] > counts[m, ref]).sum()),
            "position": pos + 1,
            "of": M,
            "rank_range": [int(ranks[m].min()), int(ranks[m].max())],
            "band": row,
            "band_verdict": _slim(band_verdict(scope, name, row, t)),
            "above": above,
            "below": below,
            "champion": {"enters": bool(raw_full["win"][m].any()), "configs": wins,
                         "ahead_of_existing": sum(1 for w in wins if w["margin_items"] > 0)},
        })

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
            broken.append({"higher": p["higher"], "lower": p["lower"], "how": "split",
                           "between": between, "status_before": p["verdict"]["status"],
                           "manufactured_before": p["manufactured"]})
        elif after["verdict"]["status"] != p["verdict"]["status"]:
            broken.append({"higher": p["higher"], "lower": p["lower"], "how": "verdict",
                           "between": [], "status_before": p["verdict"]["status"],
                           "status_after": after["verdict"]["status"],
                           "manufactured_before": p["manufactured"]})

    checks = [n["band_verdict"] for n in newcomers]
    seen: set[str] = set()
    for n in newcomers:
        for p in (n["above"], n["below"]):
            if p is not None and p["verdict"]["id"] not in seen:
                seen.add(p["verdict"]["id"])
                checks.append(p["verdict"])
    checks.append(champ_v)
    return {
        "n_items": N, "n_models": M, "n_configs": K, "reference": keys[ref],
        "leaderboard": [names[m] for m in order_full.tolist()],
        "leaderboard_without": [names[m] for m in order_old.tolist()],
        "newcomers": newcomers,
        "champions_with": ch_full["set"], "champions_without": ch_old["set"],
        "champions_verdict": champ_v,
        "champions_verdict_without": champ_v_old,
        "existing_pairs": len(pairs_old),
        "broken": broken,
        "checks": checks,
    }


def overall(checks: list[dict[str, Any]], strict: bool = False) -> dict[str, Any]:
    """Worst status over the checks, counts, and the exit code pytest will give."""
    counts = {st: sum(v["status"] == st for v in checks) for st in (PASS, WARN, FAIL)}
    worst = max((v["status"] for v in checks), key=SEVERITY.__getitem__, default=PASS)
    exit_code = 1 if counts[FAIL] or (strict and counts[WARN]) else 0
    # margins of different checks have different units: name the first worst check in
    # check order (pooled scope first; band, pairs, champions)
    worst_check = next((v["id"] for v in checks if v["status"] == worst), None) if worst != PASS else None
    return {"status": worst, "counts": counts, "checks": len(checks), "exit_code": exit_code,
            "strict": strict, "worst": worst_check}


def submission_audit(records: Records, models: Sequence[str], *, seed: int = DEFAULT_SEED,
                     n_boot: int = DEFAULT_BOOT, thresholds: Thresholds | None = None,
                     strict: bool = False, scopes: Sequence[str] | None = None) -> dict[str, Any]:
    """Every scope's newcomer audit, and the overall state (JSON-ready)."""
    models = list(dict.fromkeys(models))
    unknown = [m for m in models if m not in records.models]
    if unknown:
        raise KeyError(f"--audit-submission {unknown}: not in the records "
                       f"(models: {', '.join(records.models)})")
    names = list(scopes) if scopes is not None else scopes_of(records)
    out = {s: submission_scope(records, s, models, seed=seed, n_boot=n_boot, thresholds=thresholds)
           for s in names}
    checks = [v for s in out.values() for v in s["checks"]]
    return {"models": models, "scopes": out, "overall": overall(checks, strict)}


# -- terminal -----------------------------------------------------------------------

def _pair_line(p: dict[str, Any] | None, where: str, K: int) -> str:
    if p is None:
        return f"  {where}: none ({'top' if where == 'above' else 'bottom'} of the leaderboard)"
    v = p["verdict"]
    kind = "MANUFACTURED" if p["manufactured"] else ("tie" if p["robust_tie"] else "identified")
    ci = "n/a" if p["ci"] is None else f"[{p['ci'][0]:.3f}, {p['ci'][1]:.3f}]"
    return (f"  {where}: {clean(p['higher'], 28)} > {clean(p['lower'], 28)}: {kind}, gap {num(p['gap'])} "
            f"({p['gap_items']} items), fragile share {num(p['fragile_share'], 2)}; J {p['robust_items']}: "
            f"h_only {p['higher_only']}, l_only {p['lower_only']}, CI {ci}; reversing {p['reversing']}/{K}"
            f" -> {v['status'].upper()} margin {signed(v['margin'])}")


def _champion_line(n: dict[str, Any]) -> str:
    ch = n["champion"]
    if not ch["enters"]:
        return "  champion: does not win any configuration (not in the champion set)"
    parts = []
    for w in ch["configs"]:
        how = "ties" if w["tie"] else f"by {w['margin_items']} items"
        disp = "/".join(clean(d, 24) for d in w["displaced"]) or "-"
        parts.append(f"{clean(w['config'], 30)} {how} (over {disp})")
    return (f"  champion: wins {len(ch['configs'])} config(s), {ch['ahead_of_existing']} ahead of every existing model: "
            + "; ".join(parts))


def _broken_text(s: dict[str, Any]) -> str:
    if not s["broken"]:
        return f"breaks 0 of {s['existing_pairs']} existing adjacent orderings"
    items = []
    for b in s["broken"]:
        pair = f"{clean(b['higher'], 24)} > {clean(b['lower'], 24)}"
        if b["how"] == "split":
            items.append(f"{pair} (was {b['status_before'].upper()}, split by "
                         f"{', '.join(clean(x, 24) for x in b['between'])})")
        else:
            items.append(f"{pair} ({b['status_before'].upper()} -> {b['status_after'].upper()})")
    return f"breaks {len(s['broken'])} of {s['existing_pairs']} existing adjacent orderings: " + "; ".join(items)


def _was(s: dict[str, Any]) -> str:
    before = s.get("champions_verdict_without")
    return "" if before is None else f" (without it: {before['status'].upper()} margin {signed(before['margin'])})"


def scope_lines(name: str, s: dict[str, Any]) -> list[str]:
    K = s["n_configs"]
    out = [f"--- {name}: {s['n_models']} models x {s['n_items']} items x {K} configs "
           f"(reference {clean(s['reference'])}) ---"]
    for n in s["newcomers"]:
        bd, bv = n["band"], n["band_verdict"]
        out.append(f"{clean(n['model'], 40)}: rank {n['rank']} of {n['of']} (ranks {n['rank_range'][0]}-"
                   f"{n['rank_range'][1]} across {K} configs); band reference {num(bd['reference'])}, "
                   f"min {num(bd['min'])}, max {num(bd['max'])}, spread {num(bd['spread'])}, robust "
                   f"{num(bd['robust'])}, optimistic {num(bd['optimistic'])} -> {bv['status'].upper()} "
                   f"margin {signed(bv['margin'])}")
        out.append(_pair_line(n["above"], "above", K))
        out.append(_pair_line(n["below"], "below", K))
        out.append(_champion_line(n))
    cv = s["champions_verdict"]
    out.append(f"champion set without: {', '.join(clean(m, 24) for m in s['champions_without']) or '-'}; "
               f"with: {', '.join(clean(m, 24) for m in s['champions_with'])} -> champions "
               f"{cv['status'].upper()} margin {signed(cv['margin'])}{_was(s)}")
    out.append(_broken_text(s))
    return out


def benchmark_line(name: str, s: dict[str, Any]) -> str:
    parts = []
    for n in s["newcomers"]:
        pv = [p["verdict"]["status"].upper() for p in (n["above"], n["below"]) if p is not None]
        parts.append(f"{clean(n['model'], 24)} rank {n['rank']}/{n['of']} ({n['rank_range'][0]}-"
                     f"{n['rank_range'][1]}), band {n['band_verdict']['status'].upper()} "
                     f"{num(n['band']['spread'])}, pairs {'/'.join(pv) or '-'}, "
                     f"champion {'yes' if n['champion']['enters'] else 'no'}")
    return (f"{name}: " + "; ".join(parts) + f"; champions {s['champions_verdict']['status'].upper()} "
            f"({len(s['champions_without'])} -> {len(s['champions_with'])}); broken "
            f"{len(s['broken'])}/{s['existing_pairs']}")


def state_line(sub: dict[str, Any], verdicts: list[dict[str, Any]] | None = None,
               strict: bool | None = None) -> str:
    """The one line on the overall state (what the exit code will say)."""
    strict = sub["overall"]["strict"] if strict is None else strict
    if verdicts:  # the checks that ran, in the audit's check order (not xdist's run order)
        rank = {v["id"]: j for j, v in enumerate(c for s in sub["scopes"].values() for c in s["checks"])}
        ov = overall(sorted(verdicts, key=lambda v: (rank.get(v["id"], len(rank)), v["id"])), strict)
    else:
        ov = sub["overall"]
    c = ov["counts"]
    worst = f"; worst {clean(ov['worst'], 80)}" if ov["worst"] else ""
    gate = "FAIL" if ov["exit_code"] else ov["status"].upper()
    return (f"submission {', '.join(clean(m, 40) for m in sub['models'])}: {gate} - {c[PASS]} pass, "
            f"{c[WARN]} warn, {c[FAIL]} fail in {ov['checks']} checks{worst}; exit {ov['exit_code']}"
            f"{' (--audit-strict: warn fails)' if strict else ''}")


def render_submission_text(report: dict[str, Any], verdicts: list[dict[str, Any]] | None = None,
                           *, strict: bool | None = None, width: int = 100) -> str:
    sub = report["submission_audit"]
    scopes = sub["scopes"]
    rec = report.get("records", {})
    lines = [f"submission audit of {', '.join(clean(m, 40) for m in sub['models'])}: what its arrival "
             f"changes on {clean(rec.get('path', ''))} (seed {report.get('seed')}, "
             f"{report.get('bootstrap')} resamples)",
             "pairs: J = jointly robust items; with no disagreement in one direction a CI bound sits at 0 "
             "by construction, so read h_only/l_only beside it.", ""]
    first = POOLED if POOLED in scopes else next(iter(scopes), None)
    if first is not None:
        lines += scope_lines(first, scopes[first])
    rest = [s for s in scopes if s != first]
    if rest:
        lines += ["", "per benchmark:"] + [benchmark_line(s, scopes[s]) for s in rest]
    run = verdicts if verdicts else [v for s in scopes.values() for v in s["checks"]]
    bad = sorted((v for v in run if v["status"] in (WARN, FAIL)), key=lambda v: (v["status"] != FAIL, v["id"]))
    if bad:
        lines += ["", "verdicts needing attention (margin = signed distance to the pass region):"]
        lines += [f"{v['status'].upper():4} {clean(v['id'], 60)}  margin {signed(v['margin'])}  "
                  f"{clean(v['message'], max(40, width - 20))}" for v in bad]
    counts = {st: sum(v["status"] == st for v in run) for st in (PASS, WARN, FAIL)}
    lines += ["", f"audit: {counts[PASS]} pass, {counts[WARN]} warn, {counts[FAIL]} fail",
              state_line(sub, verdicts, strict)]
    return "\n".join(lines)


__all__ = ["overall", "render_submission_text", "state_line", "submission_audit", "submission_scope"]
