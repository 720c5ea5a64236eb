"""Arena and published-table audits -> an aggregate report with verdicts (docs/audits.md,
"Judge and arena leaderboards").

``audit_arena`` ranges over the aggregation rules, ``audit_table`` over a table's score
columns; both judge the same grid (``orders.ScoreGrid``):

* ``champions[<scope>]``: the distinct champions over the configurations; pass with one;
* ``exploit[<scope>]``: fail when a model is flagged (``orders.exploit_flags``); named
  first in ``next_steps``;
* ``axes[<scope>]``: the smallest Kendall tau-b between the reference and another
  configuration (pass >= ``axes_pass`` 0.9, warn >= ``axes_warn`` 0.6, as ``checks/axes``);
* ``rank_range[<scope>-<model>]``: pass when the model's rank is the same under every
  configuration, else warn (the rank is the rule's, not the model's);
* ``printed_ties[<scope>-<higher>-<lower>]``: per adjacent pair of the reference order,
  pass when the interval of its difference excludes 0, warn when none separates them;
* ``band[<scope>-<model>]`` (tables whose columns are shares or percentages): the spread
  ``max - min`` over the configurations as a share (pass <= 0.02, warn <= 0.05);
* every item-level check of the registry is reported skipped, with the reason.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..checks.verdicts import FAIL, PASS, WARN, at_least, at_most, exact, make_verdict, skipped
from .data import Battles, PairCounts
from .orders import (
    ScoreGrid,
    adjacent_pairs,
    averaged_order,
    champions,
    exploit_flags,
    identified_order,
    kendall_and_reversals,
    rank_ranges,
)
from .rules import N_SHUFFLES, PRINTED_RULE, RULES, rule_scores
from .table import ScoreTable

AGGREGATE_REPORT = "leaderboard-audit/aggregate-report-v1"
DEFAULT_ARENA_BOOT = 1000
AXES_PASS, AXES_WARN = 0.9, 0.6
BAND_PASS, BAND_WARN = 0.02, 0.05
#: checks of the item-level registry this audit computes from aggregates
COVERED = ("band", "champions", "axes")


def grid_verdicts(grid: ScoreGrid, scope: str, report: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    champs = report["champions"]
    distinct = sorted({m for ms in champs.values() for m in ms})
    n = len(distinct)
    per = "; ".join(f"{c}: {', '.join(ms)}" for c, ms in champs.items())
    out.append(
        make_verdict(
            "champions",
            f"champions[{scope}]",
            PASS if n == 1 else FAIL,
            float(n),
            1.0,
            float(1 - n),
            f"{n} distinct champion(s) over {len(champs)} configuration(s) ({per})",
            {"champions": champs, "distinct": distinct},
        )
    )
    flagged = [e for e in report["exploit"] if e["flagged"]]
    msg = (
        "; ".join(exploit_text(e, report) for e in flagged)
        if flagged
        else "no model is champion or top-3 under exactly one configuration with a decisive lead"
    )
    out.append(
        make_verdict(
            "exploit",
            f"exploit[{scope}]",
            FAIL if flagged else PASS,
            float(len(flagged)),
            0.0,
            float(-len(flagged)),
            msg,
            {"flagged": flagged, "candidates": report["exploit"]},
        )
    )
    if report["orders"]:
        low = min(report["orders"], key=lambda o: o["kendall_tau"] if o["kendall_tau"] is not None else 2.0)
        tau = low["kendall_tau"]
        if tau is None:
            out.append(skipped("axes", f"axes[{scope}]", "Kendall tau undefined (a constant column)"))
        else:
            status = PASS if at_least(tau, AXES_PASS) else WARN if at_least(tau, AXES_WARN) else FAIL
            out.append(
                make_verdict(
                    "axes",
                    f"axes[{scope}]",
                    status,
                    tau,
                    AXES_PASS,
                    exact(tau - AXES_PASS) + 0.0,
                    f"Kendall tau {tau:.3f} between {report['reference']} and {low['config']}; "
                    f"{low['reversed']} of {low['adjacent_pairs']} adjacent pairs reversed",
                    {"orders": [{k: v for k, v in o.items() if k != "reversed_pairs"} for o in report["orders"]]},
                )
            )
    else:
        out.append(skipped("axes", f"axes[{scope}]", "one configuration: no second order to compare"))
    for row in report["rank_ranges"]:
        r = row["range"]
        out.append(
            make_verdict(
                "rank_range",
                f"rank_range[{scope}-{row['model']}]",
                PASS if r == 0 else WARN,
                float(r),
                0.0,
                float(-r),
                f"{row['model']}: rank {row['best']}..{row['worst']} over the configurations ({row['ranks']})",
            )
        )
    ref = grid.configs[grid.reference]
    if not grid.has_intervals(grid.reference):
        out.append(
            skipped("printed_ties", f"printed_ties[{scope}]", f"{ref} has no standard errors or bootstrap draws")
        )
    else:
        for p in report["printed_pairs"]:
            vid = f"printed_ties[{scope}-{p['higher']}-{p['lower']}]"
            if p["separated"] is None:
                out.append(skipped("printed_ties", vid, "no standard error for one of the two models"))
                continue
            lo, hi = p["interval"]
            out.append(
                make_verdict(
                    "printed_ties",
                    vid,
                    PASS if p["separated"] else WARN,
                    float(lo),
                    0.0,
                    exact(lo) + 0.0 if p["separated"] else -1.0,
                    f"{p['higher']} above {p['lower']} by {p['gap']:.3g} under {ref}, 95% interval "
                    f"[{lo:.3g}, {hi:.3g}]" + ("" if p["separated"] else ": no interval separates them"),
                )
            )
    return out


def share_unit(S: np.ndarray) -> float | None:
    """1 for shares in [0, 1], 100 for percentages, ``None`` for any other scale."""
    if S.min() >= 0 and S.max() <= 1:
        return 1.0
    if S.min() >= 0 and S.max() <= 100:
        return 100.0
    return None


def band_verdicts(grid: ScoreGrid, scope: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    S = grid.S
    if len(grid.configs) < 2:
        return [skipped("band", f"band[{scope}]", "one configuration: no band")], None
    unit = share_unit(S)
    if unit is None:
        return [skipped("band", f"band[{scope}]", "scores are not shares in [0, 1] or percentages")], None
    rows, out = [], []
    for m in grid.ref_order.tolist():
        s = S[m] / unit
        spread = float(s.max() - s.min())
        rows.append({"model": grid.models[m], "min": float(s.min()), "max": float(s.max()), "spread": spread})
        status = PASS if at_most(spread, BAND_PASS) else WARN if at_most(spread, BAND_WARN) else FAIL
        out.append(
            make_verdict(
                "band",
                f"band[{scope}-{grid.models[m]}]",
                status,
                spread,
                BAND_PASS,
                exact(BAND_PASS - spread) + 0.0,
                f"{grid.models[m]}: {s.min():.3f}..{s.max():.3f} over {len(grid.configs)} configurations "
                f"(spread {spread:.3f})",
            )
        )
    return out, rows


def judge_axis_verdicts(table: ScoreTable, scope: str, alpha: float) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``judge_axis[<scope>-<axis>]``: does changing this axis alone move the scores?

    Per declared pair of configurations (differing in the axis only) and model, the shift
    ``d = S[m, b] - S[m, a]`` with ``SE = sqrt(se_a^2 + se_b^2)`` (both 0: ``shift_variance``; a
    shift of constant columns, ``d = 0``, counts no degree); each ``t = d / SE`` (Student
    t, ``n_a + n_b - 2`` degrees of freedom when n is known) is turned into the normal z of the
    same two-sided tail, and ``X = sum z^2`` is chi-square with one degree per shift when
    the axis moves nothing (``stats.chi2_sf``). Fail when
    ``p <= alpha`` and the RMS shift exceeds ``band_pass`` (0.02, a share: percentages are
    divided by 100); warn when
    ``p <= alpha`` with a smaller RMS shift; pass otherwise. Margin: ``p - alpha`` (pass),
    ``-1`` (warn), ``band_pass - rms`` (fail)."""
    import math

    from .stats import chi2_sf, t_two_sided_p, z_of_p

    out, section = [], {}
    col = {c: k for k, c in enumerate(table.configs)}
    M = len(table.models)
    for axis, pairs in sorted(table.axes.items()):
        d, v, df = [], [], []
        for a, b in pairs:
            d.append(table.scores[:, col[b]] - table.scores[:, col[a]])
            v.append(shift_variance(table, col[a], col[b]) if table.se is not None else np.full(M, np.nan))
            df.append(table.n[:, col[a]] + table.n[:, col[b]] - 2 if table.n is not None else np.full(M, np.inf))
        dd, vv, ff = np.concatenate(d), np.concatenate(v), np.concatenate(df)
        vid = f"judge_axis[{scope}-{axis}]"
        if not np.isfinite(vv).any():
            out.append(skipped("judge_axis", vid, f"no standard errors for the {axis} axis"))
            continue
        # vv == 0 is left only where every judgment of both columns is one value (then d == 0):
        # a shift that is exactly 0 and cannot vary carries no degree of freedom
        ok = np.isfinite(vv) & (vv > 0)
        tt = dd[ok] / np.sqrt(vv[ok])
        fdf = np.where(np.isfinite(ff[ok]) & (ff[ok] > 0), ff[ok], np.inf)
        x = float(sum(z_of_p(t_two_sided_p(float(t), float(f))) ** 2 for t, f in zip(tt, fdf)))
        p = chi2_sf(x, int(ok.sum())) if ok.any() else 1.0
        unit = share_unit(table.scores) or 1.0  # shifts as shares, as band_pass is one
        rms = float(math.sqrt(np.mean(dd**2))) / unit
        mean = float(np.mean(dd)) / unit
        section[axis] = {"pairs": [list(q) for q in pairs], "mean_shift": mean, "rms_shift": rms, "chi2": x, "p": p}
        status = PASS if p > alpha else FAIL if rms > BAND_PASS else WARN
        out.append(
            make_verdict(
                "judge_axis",
                vid,
                status,
                rms,
                BAND_PASS,
                exact(p - alpha) + 0.0 if status == PASS else -1.0 if status == WARN else exact(BAND_PASS - rms) + 0.0,
                f"the {axis} axis alone moves scores by {rms:.3f} RMS (mean {mean:+.3f}) over {len(pairs)} "
                f"configuration pair(s), p = {p:.2g}" + (": load-bearing" if status == FAIL else ""),
                section[axis],
            )
        )
    return out, section


def shift_variance(table: ScoreTable, a: int, b: int) -> np.ndarray:
    """Per model, the variance of the shift ``d = S[:, b] - S[:, a]``: ``se_a^2 + se_b^2``;
    where both SEs are 0 (each column's judgments are one value, as a 4-item table of a
    judge that always names A gives), the variance under "the axis moves nothing": both
    columns' judgments pooled, ``s0^2 (1/n_a + 1/n_b)`` with ``s0^2`` their sample variance
    (the pooled two-proportion test's SE), which is ``d^2 / (n_a + n_b - 1)`` there.
    Without n (a published table), ``se_a^2 + se_b^2``."""
    v = table.se[:, a] ** 2 + table.se[:, b] ** 2
    if table.n is None:
        return v
    n = table.n[:, a] + table.n[:, b]
    d = table.scores[:, b] - table.scores[:, a]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((v == 0) & (n > 2), d**2 / (n - 1), v)


def skipped_registry(scope: str, reason: str) -> list[dict[str, Any]]:
    """One skipped verdict per item-level check this audit cannot compute."""
    from ..checks import registry

    return [skipped(name, f"{name}[{scope}]", reason) for name in registry() if name not in COVERED]


def grid_report(grid: ScoreGrid, alpha: float) -> dict[str, Any]:
    return {
        "reference": grid.configs[grid.reference],
        "configs": list(grid.configs),
        "models": [grid.models[m] for m in grid.ref_order.tolist()],
        "scores": {
            c: {grid.models[m]: float(grid.S[m, k]) for m in grid.ref_order.tolist()}
            for k, c in enumerate(grid.configs)
        },
        "champions": champions(grid),
        "rank_ranges": rank_ranges(grid),
        "orders": kendall_and_reversals(grid),
        "averaged": averaged_order(grid),
        "printed_pairs": adjacent_pairs(grid),
        "identified": identified_order(grid, alpha),
        "exploit": exploit_flags(grid),
    }


#: win-rate rules: a model's score averages over the opponents it happened to meet
OPPONENT_MIX_RULES = ("mean_pairwise", "win_share")


def ranks_text(e: dict[str, Any], report: dict[str, Any]) -> str:
    """``mean_pairwise 3, win_share 4, bt_ties_dropped 6``: the rank under the flagged rule, then every other."""
    col = (report.get("scores") or {}).get(e["config"]) or {}
    here = col.get(e["model"])
    there = None if here is None else 1 + sum(1 for v in col.values() if v > here)
    ranks = {e["config"]: there} | dict(e["rank_elsewhere"])
    return ", ".join(f"{c} {r}" for c, r in ranks.items() if r is not None)


def _opponent_mix(e: dict[str, Any], report: dict[str, Any]) -> str:
    opp = (report.get("opponents") or {}).get(e["model"])
    met = f" ({opp} opponents)" if opp is not None else ""
    if e["config"] in OPPONENT_MIX_RULES:
        return (
            f"a win rate depends on the opponent mix: which models it played{met}, not only how strong it is, "
            "and the Bradley-Terry rules adjust for who it met"
        )
    return f"the rules weigh ties, battle order and opponents{met} differently"


def exploit_text(e: dict[str, Any], report: dict[str, Any]) -> str:
    """The exploit verdict's message for one flagged model. On an Arena (battles or counts: UX review M4)
    it is a rule-dependent rank, not a gamed rule; on a published table, a lone, decisive crown."""
    if report.get("kind") == "arena":
        return (
            f"{e['model']} is {e['as']} only under {e['config']} (lead {e['lead']:.3g} over {e['rival']}, "
            f"interval above 0): {_opponent_mix(e, report)}; rank under each rule: {ranks_text(e, report)}"
        )
    elsewhere = ", ".join(f"{c} {r}" for c, r in e["rank_elsewhere"].items())
    return (
        f"{e['model']} is {e['as']} only under {e['config']} (lead {e['lead']:.3g} over {e['rival']}, "
        f"interval above 0), rank elsewhere: {elsewhere}"
    )


def exploit_step(e: dict[str, Any], report: dict[str, Any]) -> str:
    """The next step for one flagged model (worded for the input's kind, as ``exploit_text``)."""
    if report.get("kind") == "arena":
        return (
            f"Check {e['model']}'s opponents before its rank: it is {e['as']} only under {e['config']}, "
            f"decisively; {_opponent_mix(e, report)}. Rank under each rule: {ranks_text(e, report)}."
        )
    return (
        f"Examine {e['model']} first: it is {e['as']} only under {e['config']} and decisively so; "
        "a lone, decisive crown is how a gamed rule looks (e.g. a constant answer beating length control)."
    )


def next_steps(report: dict[str, Any]) -> list[str]:
    steps = []
    for e in report["exploit"]:
        if e["flagged"]:
            steps.append(exploit_step(e, report))
    champs = report["champions"]
    if len({m for ms in champs.values() for m in ms}) > 1:
        steps.append("Publish the champion under every rule, or name the rule that decides and why.")
    ties = [p for p in report["printed_pairs"] if p["separated"] is False]
    if ties:
        steps.append(f"Print {len(ties)} adjacent pair(s) no interval separates as ties (tiers: 'identified').")
    return steps


def _finish(report: dict[str, Any], verdicts: list[dict[str, Any]], scope: str) -> dict[str, Any]:
    for v in verdicts:
        v["scope"] = scope
    report["verdicts"] = verdicts
    report["next_steps"] = next_steps(report)
    return report


def audit_arena(
    counts: PairCounts,
    battles: Battles | None = None,
    *,
    n_boot: int = DEFAULT_ARENA_BOOT,
    seed: int = 1234,
    alpha: float = 0.05,
    n_shuffles: int = N_SHUFFLES,
    scope: str = "arena",
) -> dict[str, Any]:
    """The arena audit of ``counts`` (and, for time-ordered Elo, ``battles``)."""
    from .bootstrap import bootstrap_draws

    t0 = time.perf_counter()
    scores, skipped_rules = rule_scores(counts, battles, seed, n_shuffles)
    names = tuple(scores)
    S = np.column_stack([scores[r] for r in names])
    ref = names.index(PRINTED_RULE)
    t1 = time.perf_counter()
    draws = bootstrap_draws(counts, PRINTED_RULE, scores[PRINTED_RULE], n_boot, seed) if n_boot > 0 else {}
    t2 = time.perf_counter()
    grid = ScoreGrid(counts.models, names, S, ref, None, {names.index(r): d for r, d in draws.items()})
    report = {
        "format": AGGREGATE_REPORT,
        "kind": "arena",
        "scope": scope,
        "source": counts.source,
        "notes": list(counts.notes),
        "seed": seed,
        "bootstrap": n_boot,
        "alpha": alpha,
        "battles": counts.n_battles,
        "pairs": int(len(counts.i)),
        "rules": {r.name: r.description for r in RULES},
        "skipped_rules": skipped_rules,
        "opponents": {counts.models[m]: int(o) for m, o in enumerate(counts.opponents())},
        **grid_report(grid, alpha),
    }
    verdicts = grid_verdicts(grid, scope, report)
    verdicts.append(skipped("band", f"band[{scope}]", "the rules' scores are on different scales (see rank_range)"))
    verdicts += skipped_registry(scope, "needs per-item records; an arena has battles, not a fixed item set")
    report["timing_s"] = {"rules": t1 - t0, "bootstrap": t2 - t1, "checks": time.perf_counter() - t2}
    return _finish(report, verdicts, scope)


def audit_table(table: ScoreTable, *, alpha: float = 0.05, scope: str = "table") -> dict[str, Any]:
    """The aggregate-only audit of a published table."""
    grid = ScoreGrid(table.models, table.configs, table.scores, table.configs.index(table.reference), table.se)
    report = {
        "format": AGGREGATE_REPORT,
        "kind": "table",
        "scope": scope,
        "source": table.source,
        "notes": list(table.notes),
        "alpha": alpha,
        **grid_report(grid, alpha),
    }
    verdicts = grid_verdicts(grid, scope, report)
    bands, rows = band_verdicts(grid, scope)
    report["band"] = rows
    verdicts += bands
    if table.axes:
        axis_v, report["judge_axes"] = judge_axis_verdicts(table, scope, alpha)
        verdicts += axis_v
    verdicts += skipped_registry(scope, "needs per-item records; a published table has only aggregates")
    return _finish(report, verdicts, scope)


__all__ = ["AGGREGATE_REPORT", "DEFAULT_ARENA_BOOT", "audit_arena", "audit_table", "grid_verdicts"]
