"""Band: a model's score is a band, not a point (paper section 4.1, Table 1, Figure 1).

Section ``leaderboard``: the reference leaderboard with each model's band
(reference, min, max, spread, robust, optimistic, config-lucky). One verdict per
model: ``band[<scope>-<model>]`` on ``spread = max - min`` (docs/audits.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..metrics.harness_effects import cochran_q_p, graded_harness_p
from ..metrics.identified import holm_adjust
from ..metrics.per_model import band as band_m
from .tables import Cell, Table, bounds_text, range_cell
from .verdicts import FAIL, PASS, WARN, at_most, exact, fmt, make_verdict
from .base import Check, Scope, num

BAND_KEYS = ("reference", "min", "max", "spread", "robust", "optimistic", "config_lucky")


class Band(Check):
    name = "band"
    position = 10  # in the report: after the checks with a lower position
    title = "Band (Table 1, Figure 1)"
    section = "leaderboard"
    thresholds = {"band_pass": 0.02, "band_warn": 0.05}
    section_when_skipped = True  # the leaderboard is the printed order every check reads
    needs_configs = True
    gate = "subject"
    gate_default = False  # real grids' bands are wide: the maintainer opts in (--audit-gate band)

    def cases(self, scope: Scope) -> list[tuple[str, str]]:
        return [(f"band[{scope.name}-{m}]", f"{scope.name}-{m}") for m in scope.ordered_names]

    def subjects(self, scope: Scope) -> list[tuple[str, ...]]:
        return [(m,) for m in scope.ordered_names]

    def compute(self, scope: Scope) -> list[dict[str, Any]]:
        b = band_m(scope.C, scope.ref, scope.counts)  # the scope's counts: a sum of its parts'
        ref_counts = scope.counts[:, scope.ref]
        if scope.graded:  # Hotelling's T^2: graded configurations are not exchangeable (docs/audits.md)
            q, qp = graded_harness_p(scope.S, scope.ref)
        else:
            q, qp = cochran_q_p(scope.counts, scope.right_square_sums)
        q_holm = holm_adjust(qp)
        # models with more reference items, and with as many, by sorting (not M scans of M)
        ranked = np.sort(ref_counts)
        more = (ref_counts.size - np.searchsorted(ranked, ref_counts, side="right")).tolist()
        same = (np.searchsorted(ranked, ref_counts, side="right") - np.searchsorted(ranked, ref_counts)).tolist()
        rows = []
        for m in scope.order.tolist():
            row: dict[str, Any] = {"rank": 1 + more[m], "model": scope.names[m], "tie": same[m] > 1}
            row.update({k: num(b[k][m]) for k in BAND_KEYS})
            row["reference_items"] = num(ref_counts[m])  # a sum of outcomes on graded records
            # v4: is the spread beyond item sampling? Cochran's Q, Holm over the scope's models
            row["cochran_q"] = num(q[m])
            row["harness_p"] = float(qp[m])
            row["harness_p_holm"] = float(q_holm[m])
            rows.append(row)
        return rows

    def judge(self, scope: Scope, section: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            band_verdict(scope.name, row["model"], row, scope.thresholds, scope.alpha, graded=scope.graded)
            for row in section
        ]

    def tables(self, name: str, s: dict[str, Any]) -> list[Table]:
        if any("bounds" in r for r in s["leaderboard"]):
            return [bounded_table(s["leaderboard"])]
        ranges = s.get("champions", {}).get("rank_range", {})
        rows = [
            [
                f"{r['rank']}{'=' if r.get('tie') else ''}",
                r["model"],
                r["reference"],
                r["min"],
                r["max"],
                r["spread"],
                r["robust"],
                r["optimistic"],
                r["config_lucky"],
                Cell(range_cell(ranges.get(r["model"])), "code"),
            ]
            for r in s["leaderboard"]
        ]
        return [
            Table(
                "leaderboard",
                "Leaderboard and bands (Table 1, Figure 1)",
                [
                    "rank",
                    "model",
                    "reference",
                    "min",
                    "max",
                    "spread",
                    "robust",
                    "optimistic",
                    "config-lucky",
                    "rank range",
                ],
                rows,
                detail="short",
                widths={1: 22},
            )
        ]


def bounded_table(rows: list[dict[str, Any]]) -> Table:
    """Table 1 of an incomplete grid (checks/incomplete_sections.py): the reference accuracy as
    it is, every other column as the range it takes over all completions of the missing cells."""

    return Table(
        "leaderboard",
        "Leaderboard and bands (Table 1, Figure 1), incomplete grid",
        ["rank", "model", "reference", "averaged", "min", "max", "spread", "robust"],
        [
            [f"{r['rank']}{'=' if r.get('tie') else ''}", r["model"], r["reference"]]
            + [bounds_text(*r["bounds"][k]) for k in ("averaged", "min", "max", "spread", "robust")]
            for r in rows
        ],
        note=(
            "Incomplete grid: the reference configuration is observed on every item, so rank and reference are "
            "exact; every other column is the range its value takes over all completions of the missing cells "
            "(each missing cell wrong, then right)."
        ),
        detail="short",
        widths={1: 22},
    )


def band_verdict(
    scope: str, model: str, row: dict[str, Any], t: Any, alpha: float = 0.05, *, graded: bool = False
) -> dict[str, Any]:
    """v4 (docs/audits.md): pass when the spread is at most ``band_pass``; fail when it exceeds
    ``band_warn`` **and** Cochran's Q says the model's configurations differ beyond item
    sampling (``harness_p_holm <= alpha``, Holm over the scope's models); warn otherwise.
    A hand-built row without the test is judged on the spread alone (v3)."""
    s = row["spread"]
    q_name = "Hotelling's T^2" if graded else "Cochran's Q"  # graded outcomes: docs/audits.md
    p_holm = row.get("harness_p_holm")
    significant = p_holm is None or at_most(p_holm, alpha)
    if at_most(s, t.band_pass):
        status = PASS
    elif not at_most(s, t.band_warn) and significant:
        status = FAIL
    else:
        status = WARN
    if p_holm is None:
        test = ""
    elif significant:
        test = f"; the configs differ beyond item sampling ({q_name} p {p_holm:.2g}, Holm over models)"
    else:
        test = (
            f"; within item sampling: {q_name} p {p_holm:.2g} (Holm over models) does not show the "
            f"configs differ for this model, so the spread alone does not fail"
        )
    msg = (
        f"{model}: accuracy ranges {fmt(row['min'])}..{fmt(row['max'])} across configs "
        f"(spread {fmt(s)}; pass <= {t.band_pass}, warn <= {t.band_warn}{test}); reference "
        f"{fmt(row['reference'])}, robust {fmt(row['robust'])}, optimistic {fmt(row['optimistic'])}"
    )
    evidence = {k: row[k] for k in BAND_KEYS}
    if p_holm is not None:
        evidence.update(cochran_q=row.get("cochran_q"), harness_p=row.get("harness_p"), harness_p_holm=p_holm)
    return make_verdict(
        "band",
        f"band[{scope}-{model}]",
        status,
        s,
        t.band_pass,
        exact(t.band_pass - s),
        msg,
        evidence,
    )


CHECK = Band()
