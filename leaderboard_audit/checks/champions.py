"""Champions: how many models does some harness configuration crown?
(paper section 4.3, Table 8, Figure 3)

Section ``champions``: per-config winners (competition ranking: exact ties all
win), the champion set, top-3, rank ranges and Kendall tau vs the reference.
One verdict per scope: ``champions[<scope>]`` (docs/audits.md).
"""
from __future__ import annotations

from typing import Any

from ..metrics.champions import champions as champions_m
from ..reports.tables import Line, Table
from ..verdicts import FAIL, PASS, WARN, exact, make_verdict
from .base import Check, Scope, num


class Champions(Check):
    name = "champions"
    title = "Champions (Table 8, Figure 3)"
    section = "champions"
    thresholds = {"champion_items": 3.0}
    needs_configs = True

    def compute(self, scope: Scope) -> dict[str, Any]:
        names, keys, N = scope.names, scope.keys, scope.shape[1]
        ch = champions_m(scope.acc, scope.ref)
        per_config = []
        for k in range(scope.shape[2]):
            ru = ch["runner_up"][k]
            margin = num(ch["margin"][k])
            per_config.append({"config": keys[k], "winners": [names[m] for m in ch["winners"][k]],
                               "accuracy": float(ch["best"][k]),
                               "runner_up": None if ru is None else names[ru], "margin": margin,
                               "margin_items": 0 if margin is None else int(round(margin * N))})
        order = scope.order.tolist()
        return {
            "set": [names[m] for m in ch["champion_set"]], "count": len(ch["champion_set"]),
            "outright": [names[m] for m in ch["outright"]], "top3": [names[m] for m in ch["top3"]],
            "ties": "competition ranking: every model tied at the top of a config wins it",
            "per_config": per_config,
            "rank_range": {names[m]: [int(ch["rank_range"][m, 0]), int(ch["rank_range"][m, 1])] for m in order},
            "reference_rank": {names[m]: int(ch["ranks"][m, scope.ref]) for m in order},
            "kendall_tau": {"mean": ch["tau_mean"], "min": ch["tau_min"]},
        }

    def judge(self, scope: Scope, section: dict[str, Any]) -> list[dict[str, Any]]:
        return [champions_verdict(scope.name, section, scope.keys[scope.ref], scope.thresholds)]

    def tables(self, name: str, s: dict[str, Any]) -> list[Table | Line]:
        ch = s.get("champions")
        if not ch:
            return []
        kt = ch["kendall_tau"]
        line = Line("champions", f"champions: {ch['count']} ({', '.join(ch['set'])}); outright "
                    f"{len(ch['outright'])}; top-3 reached by {len(ch['top3'])}; Kendall tau vs reference mean "
                    f"{_n2(kt['mean'])}, min {_n2(kt['min'])}")
        rows = [[c["config"], " / ".join(c["winners"]), c["accuracy"], c["runner_up"] or "-", c["margin"],
                 c["margin_items"]] for c in ch["per_config"]]
        table = Table("champions", "Champions per configuration (Table 8, Figure 3)",
                      ["config", "winner(s)", "accuracy", "runner-up", "margin", "margin items"], rows,
                      note="Exact ties: every tied model wins the configuration (competition ranking).",
                      widths={0: 26, 1: 26, 3: 22})
        return [table, line]


def _n2(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def champions_verdict(scope: str, ch: dict[str, Any], reference_key: str, t: Any) -> dict[str, Any]:
    per = {row["config"]: row for row in ch["per_config"]}
    ref_winners = set(per[reference_key]["winners"])
    outright_other = [row for row in ch["per_config"]
                      if len(row["winners"]) == 1 and row["winners"][0] not in ref_winners]
    value = max((row["margin_items"] for row in outright_other), default=0)
    if ch["count"] <= 1:
        status, why = PASS, f"one champion ({', '.join(ch['set'])}) under every config"
    elif value > t.champion_items:
        worst = max(outright_other, key=lambda r: r["margin_items"])
        status, why = FAIL, (f"{ch['count']} champions; {worst['winners'][0]} wins {worst['config']} "
                             f"by {worst['margin_items']} items over {worst['runner_up']}")
    else:
        how = "by <= %g items" % t.champion_items if outright_other else "only through exact ties"
        status, why = WARN, f"{ch['count']} champions, the others win {how} (coin flips)"
    others = sorted({w for row in ch["per_config"] for w in row["winners"]} - ref_winners)
    msg = (f"{why}. champion set {ch['set']}; reference winner(s) {sorted(ref_winners)}; "
           f"other winners {others}; largest other-winner margin {value} items "
           f"(threshold {t.champion_items:g})")
    wins = [{"config": r["config"], "winners": r["winners"], "margin_items": r["margin_items"]}
            for r in ch["per_config"] if set(r["winners"]) - ref_winners]
    return make_verdict("champions", f"champions[{scope}]", status, value, t.champion_items,
                        exact(t.champion_items - value), msg, {"set": ch["set"], "other_wins": wins})


CHECK = Champions()
