"""Brittleness: the share of variance that is prompt sensitivity (Brittlebench section 3).

Section ``brittleness``: per model ``v_item``, ``v_prompt`` and
``brittleness = V_prompt / (V_item + V_prompt)``; the pooled scope adds Brittlebench's
aggregates over benchmarks, ``pi_model`` and ``pi_benchmark``. Verdict
``brittleness[<scope>]`` (docs/audits.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..metrics import axes as axes_m
from ..metrics.brittleness import (
    axis_shares,
    axis_variance,
    pooled_shares,
    variance_parts,
    variance_parts_from_right,
)
from ..metrics.per_model import derived, right_counts
from .tables import Line
from .verdicts import FAIL, PASS, WARN, at_most, exact, make_verdict
from .base import POOLED, Check, Scope

if TYPE_CHECKING:  # pragma: no cover
    from ..records import Records

AGGREGATES = ("pi_model", "pi_benchmark")


BLOCK_CELLS = 1 << 20  # (model, item) cells per block of the per-set reductions


def variance_parts_blocked(C: np.ndarray) -> dict[str, np.ndarray]:
    """``metrics.brittleness.variance_parts``, bit for bit, once per read-only view
    (``per_model.derived``): ``variance_parts_split`` of C alone."""
    M, N, K = C.shape
    if C.dtype != bool or K == 0 or N == 0:
        return variance_parts(C)
    return derived(C, "variance_parts", lambda: variance_parts_split(C)[0])


def variance_parts_split(
    C: np.ndarray, item_sets: Sequence[slice | np.ndarray] = ()
) -> tuple[dict[str, np.ndarray], list[dict[str, np.ndarray]]]:
    """``variance_parts`` of C and of each subset of its items (the pooled scope needs
    every benchmark's), bit for bit: one integer sum over configs per (model, item)
    (``per_model.right_counts``, shared with the harness-averaged order), then
    ``variance_parts_from_right`` on each item set, in blocks of models (its reductions run
    along one model's items)."""
    M, N, K = C.shape
    right = right_counts(C) if C.dtype == bool else C.sum(axis=2, dtype=np.int32)
    sets = [slice(None), *item_sets]
    acc = [{k: np.empty(M) for k in ("v_item", "v_prompt", "brittleness")} for _ in sets]
    step = max(1, BLOCK_CELLS // max(N, 1))
    for lo in range(0, M, step):
        block = right[lo : lo + step]
        for out, items in zip(acc, sets):
            for k, v in variance_parts_from_right(block[:, items].astype(np.int32), K).items():
                out[k][lo : lo + step] = v
    return acc[0], acc[1:]


def _benchmark_items(records: Records, benchmark: str) -> slice | np.ndarray:
    """The benchmark's item positions, as ``Records.scope`` takes them (a slice when contiguous)."""
    where = np.flatnonzero(records.items.benchmark == benchmark)
    lo, hi = int(where[0]), int(where[-1]) + 1
    return slice(lo, hi) if hi - lo == where.size else where


def pooled_parts(records: Records) -> tuple[dict[str, np.ndarray], list[dict[str, np.ndarray]]]:
    """The pooled variance parts and each benchmark's, from one pass; each benchmark's is
    kept for its own scope (``per_model.derived`` on the same view)."""
    if records.score is not None:  # the scores' variances (docs/audits.md)
        return variance_parts(records.score), [variance_parts(records.scope(b).score) for b in records.benchmarks]
    C = records.correct
    if C.dtype != bool or 0 in C.shape:
        return variance_parts(C), [variance_parts(records.scope(b).correct) for b in records.benchmarks]
    benches = records.benchmarks
    whole, parts = variance_parts_split(C, [_benchmark_items(records, b) for b in benches])
    whole = derived(C, "variance_parts", lambda: whole)
    return whole, [derived(records.scope(b).correct, "variance_parts", lambda p=p: p) for b, p in zip(benches, parts)]


def add_axis_parts(out: dict[str, Any], scope: Scope, vp: dict[str, np.ndarray]) -> None:
    """Per model, beside V_prompt: ``v_axis[a]`` over each single axis's group and its share
    ``v_axis[a] / V`` (docs/spec/AUDITS.md v3 "Declared axes"). Axes whose group holds only
    the reference are left out (their variance is 0 by construction)."""
    groups = axes_m.axis_groups(scope.records.grid)
    groups = {a: groups[a] for a in axes_m.single_axes(groups) if len(groups[a]) > 1}
    if not groups:
        return
    v_axis = axis_variance(scope.S, groups)
    share = axis_shares(v_axis, vp["v_item"] + vp["v_prompt"])
    for m, name in enumerate(scope.names):
        if name in out:
            out[name]["v_axis"] = {a: float(v_axis[a][m]) for a in groups}
            out[name]["v_axis_share"] = {a: float(share[a][m]) for a in groups}


class Brittleness(Check):
    name = "brittleness"
    position = 90  # in the report: after the checks with a lower position
    title = "Brittleness (Brittlebench section 3)"
    section = "brittleness"
    thresholds = {"brittleness_pass": 0.25, "brittleness_warn": 0.5}
    needs_configs = True
    scope_dependent = True  # pooled adds Brittlebench's aggregates over benchmarks

    def compute(self, scope: Scope) -> dict[str, Any]:
        names, order = scope.names, scope.order.tolist()
        if scope.name == POOLED:
            vp, parts = pooled_parts(scope.records)
        else:
            vp = variance_parts_blocked(scope.S)
        out: dict[str, Any] = {
            names[m]: {k: float(vp[k][m]) for k in ("v_item", "v_prompt", "brittleness")} for m in order
        }
        add_axis_parts(out, scope, vp)
        if scope.name == POOLED:
            benches = scope.records.benchmarks
            v_prompt = np.stack([p["v_prompt"] for p in parts], axis=1)
            v_total = np.stack([p["v_item"] + p["v_prompt"] for p in parts], axis=1)
            pi_m, pi_b = pooled_shares(v_prompt, v_total)
            out["pi_model"] = {names[m]: float(pi_m[m]) for m in order}
            out["pi_benchmark"] = {b: float(pi_b[j]) for j, b in enumerate(benches)}
        return out

    def judge(self, scope: Scope, section: dict[str, Any]) -> list[dict[str, Any]]:  # verdict: no axis part
        if scope.name == POOLED and section.get("pi_model"):
            return [pooled_brittleness_verdict(section, scope.thresholds)]
        per = {k: v for k, v in section.items() if k not in AGGREGATES}
        return [brittleness_verdict(scope.name, per, scope.thresholds)]

    def tables(self, name: str, s: dict[str, Any]) -> list[Line]:
        br = s.get("brittleness")
        if not br:
            return []
        per = [(r["model"], br[r["model"]]) for r in s["leaderboard"] if r["model"] in br]
        text = "brittleness V_prompt/V: " + ", ".join(f"{m} {v['brittleness']:.2f}" for m, v in per)
        if "pi_model" in br:
            text += "; pi_model over benchmarks (the pooled verdict): " + ", ".join(
                f"{m} {br['pi_model'][m]:.2f}" for m, _ in per if m in br["pi_model"]
            )
        if "pi_benchmark" in br:
            text += "; per benchmark: " + ", ".join(f"{b} {v:.2f}" for b, v in sorted(br["pi_benchmark"].items()))
        lines = [Line("brittleness", text)]
        shares = [(m, v["v_axis_share"]) for m, v in per if v.get("v_axis_share")]
        if shares:
            lines.append(
                Line(
                    "brittleness-axes",
                    "per-axis variance share v_axis/V (mean_i Var over the axis group): "
                    + "; ".join(f"{m} " + ", ".join(f"{a} {x:.2f}" for a, x in sh.items()) for m, sh in shares),
                    # a summary line (the short terminal report) when the grid declares its axes
                    detail="summary" if s.get("axes", {}).get("declared") else "short",
                )
            )
        return lines


def brittleness_verdict(scope: str, br: dict[str, Any], t: Any) -> dict[str, Any]:
    per = {m: v["brittleness"] for m, v in br.items() if isinstance(v, dict) and "brittleness" in v}
    model = max(per, key=lambda m: (per[m], m))
    value = per[model]
    status = PASS if at_most(value, t.brittleness_pass) else WARN if at_most(value, t.brittleness_warn) else FAIL
    msg = (
        f"largest prompt-sensitivity share {value:.3f} ({model}): V_prompt / (V_item + V_prompt); "
        f"pass <= {t.brittleness_pass}, warn <= {t.brittleness_warn}"
    )
    return make_verdict(
        "brittleness",
        f"brittleness[{scope}]",
        status,
        value,
        t.brittleness_pass,
        exact(t.brittleness_pass - value),
        msg,
        {"model": model, "per_model": per},
    )


def pooled_brittleness_verdict(br: dict[str, Any], t: Any) -> dict[str, Any]:
    """docs/spec/AUDITS.md v2 "Pooled brittleness": the pooled verdict is ``max_m pi_model[m]``,
    Brittlebench's ratio of sums over benchmarks. The brittleness of the pooled items
    would count benchmark difficulty as item variance (an easy and a hard benchmark
    make V_item large), hiding prompt sensitivity that every benchmark shows."""
    pi = br["pi_model"]
    model = max(pi, key=lambda m: (pi[m], m))
    value = pi[model]
    status = PASS if at_most(value, t.brittleness_pass) else WARN if at_most(value, t.brittleness_warn) else FAIL
    pooled_items = max((v["brittleness"] for k, v in br.items() if k not in AGGREGATES), default=None)
    per_bench = ", ".join(f"{b} {v:.3f}" for b, v in sorted(br.get("pi_benchmark", {}).items()))
    msg = (
        f"largest prompt-sensitivity share over benchmarks pi_model {value:.3f} ({model}): "
        f"sum_b V_prompt / sum_b V (Brittlebench); pass <= {t.brittleness_pass}, warn <= "
        f"{t.brittleness_warn}. Per benchmark (pi_benchmark): {per_bench}; the pooled items' own "
        f"V_prompt / V (benchmark difficulty counted as item variance) peaks at "
        f"{'n/a' if pooled_items is None else f'{pooled_items:.3f}'}"
    )
    return make_verdict(
        "brittleness",
        f"brittleness[{POOLED}]",
        status,
        value,
        t.brittleness_pass,
        exact(t.brittleness_pass - value),
        msg,
        {"model": model, "pi_model": pi, "pi_benchmark": br.get("pi_benchmark")},
    )


CHECK = Brittleness()
