"""Flip predictor: does the option margin flag the config-fragile items? (beyond the paper:
section 6 "Future Work", appendix A.1)

Section ``flip`` (no verdict: a report section): ROC AUC of "low margin => fragile" per
model and pooled, and the screening figure (recall at the ``flip_precision`` target); in
the pooled scope also the AUC's bootstrap CI, the ROC curves and a calibration table by
margin decile (left out of benchmark scopes to keep the audit fast and the report small). Skipped with
the reason when the records carry no margins. Definitions: docs/audits.md, "Beyond the
paper: flip predictor".
"""

from __future__ import annotations

from typing import Any

from ..metrics.flip import DEFAULT_FLIP_BOOT, PRECISION_TARGET, flip_predictor
from .tables import Cell, Line, Table, ci_cell
from .verdicts import fmt
from .base import POOLED, Check, Scope


class Flip(Check):
    name = "flip"
    position = 100  # in the report: after the checks with a lower position
    title = "Flip predictor (beyond the paper: section 6)"
    section = "flip"
    thresholds = {"flip_precision": PRECISION_TARGET, "flip_boot": DEFAULT_FLIP_BOOT}
    scope_dependent = True  # the CI is drawn in the pooled scope only

    report_only = True  # no cases: a report section, no audits/ test module

    def cases(self, scope: Scope) -> list[tuple[str, str]]:
        return []

    def judge(self, scope: Scope, section: Any) -> list[dict[str, Any]]:
        return []

    def compute(self, scope: Scope) -> dict[str, Any]:
        t = scope.thresholds
        out = flip_predictor(
            scope.C,
            scope.records.margin,
            scope.records.grid,
            models=scope.names,
            seed=scope.seed,
            scope=scope.name,
            n_boot=t.flip_boot if scope.name == POOLED else 0,
            precision=t.flip_precision,
            curves=scope.name == POOLED,
        )
        if "skipped" not in out and scope.name != POOLED:
            out["ci_note"] = "bootstrap CI, ROC points and calibration in the pooled scope only"
        return out

    def tables(self, name: str, s: dict[str, Any]) -> list[Table | Line]:
        f = s.get("flip")
        if not f:
            return []
        if "skipped" in f:
            return [Line("flip", f"flip predictor: skipped ({f['skipped']})")]
        pct = f"{f['precision_target']:.0%}"
        rows = [
            [
                m,
                st["items"],
                st["base_rate"],
                st["auc"],
                Cell(ci_cell(st["ci"]), "code"),
                _recall(st["screen"]),
                st["screen"]["margin_cutoff"] if st["screen"] else None,
            ]
            for m, st in [*f["per_model"].items(), ("(pooled)", f["pooled"])]
        ]
        table = Table(
            "flip",
            f"Flip predictor: margin at {f['config']} vs config-fragile items",
            ["model", "items", "fragile share", "AUC", "95% CI", f"recall at {pct} precision", "margin cutoff"],
            rows,
            note="AUC of 'lower margin => config-fragile' (0.5 = no better than chance). Screening: "
            f"flag the items with the lowest margins; the share of fragile items caught while at "
            f"least {pct} of the flagged items are fragile. When the fragile share itself is above "
            "the target, flagging everything reaches it.",
            widths={0: 26},
        )
        cal = f["pooled"].get("calibration") or []
        cal_rows = [[c["decile"], c["margin_lo"], c["margin_hi"], c["items"], c["rate"]] for c in cal]
        calib = Table(
            "flip-calibration",
            "Flip predictor: fragile rate by margin decile (pooled over models)",
            ["decile", "margin from", "margin to", "items", "fragile rate"],
            cal_rows,
        )
        line = Line("flip", flip_line(f), detail="summary")
        return [table, calib, line] if cal_rows else [table, line]


def flip_line(f: dict[str, Any]) -> str:
    """The summary line: the pooled AUC and the screening figure, or why there is none. When
    the fragile share is already above the precision target, flagging everything reaches it:
    that is said, not printed as a perfect catch."""
    p = f["pooled"]
    pct = f"{f['precision_target']:.0%}"
    head = f"flip predictor ({f['config']} margin): "
    if p["auc"] is None:
        return head + f"no AUC ({p.get('reason') or 'no margins'}); fragile share {fmt(p['base_rate'], 2)}"
    text = head + f"pooled AUC {fmt(p['auc'], 2)}" + (f" {ci_cell(p['ci'], 2)}" if p.get("ci") else "")
    sc = p.get("screen")
    base = p.get("base_rate")
    if base is not None and base >= f["precision_target"]:
        return text + (
            f"; {base:.0%} of the items are fragile, above the {pct} precision target, so flagging every "
            "item reaches it: the margin adds nothing there"
        )
    if not sc or sc["recall"] is None:
        return text + f"; no margin cutoff reaches {pct} precision (fragile share {fmt(base, 2)})"
    text += (
        f"; flagging the lowest margins at {pct} precision catches {_recall(sc)} of the fragile items "
        f"(fragile share {fmt(base, 2)})"
    )
    if base is not None and f["precision_target"] - base < 0.1:  # UX review #21: flagging all is nearly as good
        text += f", barely above flagging every item (which gives {base:.0%} precision)"
    return text


def _recall(sc: dict[str, Any] | None) -> str:
    if not sc or sc["recall"] is None:
        return "never reached"
    return f"{sc['recall']:.0%} ({sc['flagged']} flagged)"


CHECK = Flip()
