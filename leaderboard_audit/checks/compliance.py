"""Wrong vs unparseable: how much of the generation loss is compliance? (beyond the paper:
section 6 "Future Work", appendix A.3)

Section ``compliance`` (no verdict: a report section): per model and generation config,
the accuracy loss split into compliance (unparseable answers) and competence (parsed but
wrong; the per-config rows in the pooled scope only, to keep the report small); the
scoring-axis Kendall tau recomputed with unparseable answers set aside and the
share of the ranking movement between scorings that is compliance; by answer class when
the records carry one. From the per-item ``unparsed`` counts (the paper's release) when
the records carry no ``pred``: the per-model split only. Skipped with the reason when
they carry neither.
Definitions: docs/audits.md, "Beyond the paper: compliance vs competence".
"""

from __future__ import annotations

from typing import Any

from ..metrics.compliance import DEFAULT_ANSWER_CLASSES, compliance
from .tables import Line, Table
from .verdicts import fmt
from .base import POOLED, Check, Scope


class Compliance(Check):
    name = "compliance"
    position = 110  # in the report: after the checks with a lower position
    title = "Compliance vs competence (beyond the paper: section 6)"
    section = "compliance"
    scope_dependent = True  # per-config rows in the pooled scope only

    report_only = True  # no cases: a report section, no audits/ test module

    def cases(self, scope: Scope) -> list[tuple[str, str]]:
        return []

    def judge(self, scope: Scope, section: Any) -> list[dict[str, Any]]:
        return []

    def compute(self, scope: Scope) -> dict[str, Any]:
        from ..records import model as records_model

        r = scope.records
        if scope.graded:
            return {"skipped": "graded outcomes: a judge's grade has no parsed or unparseable answer to split"}
        classes = tuple(getattr(records_model, "ANSWER_CLASSES", DEFAULT_ANSWER_CLASSES))
        return compliance(
            scope.C,
            r.pred,
            r.grid,
            models=scope.names,
            answer_class=getattr(r, "answer_class", None),
            classes=classes,
            per_config=scope.name == POOLED,
            unparsed=getattr(r, "unparsed", None),
        )

    def tables(self, name: str, s: dict[str, Any]) -> list[Table | Line]:
        c = s.get("compliance")
        if not c:
            return []
        if "skipped" in c:
            return [Line("compliance", f"compliance: skipped ({c['skipped']})")]
        order = [row["model"] for row in s.get("leaderboard", [])] or list(c["per_model"])
        classes = c.get("classes")
        extra = [*classes, "unclassified"] if classes else []
        rows = []
        for m in order:
            e = c["per_model"].get(m)
            if e is None:
                continue
            rows.append(
                [
                    m,
                    e["loss"],
                    e["compliance"],
                    e["competence"],
                    e["unrecorded"],
                    e["compliance_share"],
                    *[e["by_class"][k] for k in extra],
                ]
            )
        table = Table(
            "compliance",
            "Compliance vs competence on the generation configs (mean over configs)",
            [
                "model",
                "loss (1 - acc)",
                "compliance (unparseable)",
                "competence (parsed, wrong)",
                "no prediction",
                "compliance share",
                *[f"wrong: {k}" for k in extra],
            ],
            rows,
            note="Shares of the scope's items, averaged over the generation configurations; loss = "
            "compliance + competence + no prediction. Compliance share = unparseable losses / all "
            "losses.",
            widths={0: 26},
        )
        st = c["scoring_tau"]
        tau_rows = [
            [r["config"], r["tau_all"], r["tau_parsed"], r["movement"], r["compliance"], r["compliance_fraction"]]
            for r in st.get("per_config", [])
        ]
        tau = Table(
            "compliance-tau",
            "Scoring axis: Kendall tau vs the reference, unparseable answers set aside",
            [
                "config",
                "tau (all answers)",
                "tau (parsed only)",
                "movement 1 - tau",
                "compliance part",
                "compliance fraction",
            ],
            tau_rows,
            note="compliance part = tau (parsed) - tau (all): the agreement with the reference order "
            "that setting unparseable answers aside restores.",
        )
        shares = [(e["compliance_share"], m) for m, e in c["per_model"].items() if e["compliance_share"] is not None]
        worst = max(shares) if shares else None
        mean_share = sum(x for x, _ in shares) / len(shares) if shares else None
        if mean_share is None or (worst is not None and worst[0] == 0.0):
            text = "compliance: no unparseable answer recorded, so none of the generation loss is compliance"
        else:
            text = f"compliance: unparseable answers carry {fmt(mean_share, 2)} of the generation loss on average" + (
                f" (most: {worst[1]}, {worst[0]:.2f})" if worst else ""
            )
        if "skipped" in st:
            text += "; scoring-axis tau not split (per-item counts only, no per-config predictions)"
            return [table, Line("compliance", text, detail="summary")]
        text += (
            f"; scoring-axis tau mean {fmt(st['tau_all']['mean'], 2)} -> {fmt(st['tau_parsed']['mean'], 2)} "
            f"with them set aside (compliance fraction of the movement {fmt(st['compliance_fraction'], 2)})"
        )
        return [table, tau, Line("compliance", text, detail="summary")]


CHECK = Compliance()
