"""Champions: how many models does some harness configuration crown?
(paper section 4.3, Table 8, Figure 3)

Section ``champions``: per-config winners (competition ranking: exact ties all
win), the champion set, top-3, rank ranges and Kendall tau vs the reference.
One verdict per scope: ``champions[<scope>]`` (docs/audits.md).
"""

from __future__ import annotations

from typing import Any

from ..metrics.champions import challenger_leads, champions as champions_m
from .tables import Line, Table
from .verdicts import FAIL, PASS, WARN, at_most, exact, make_verdict
from .base import Check, Scope, num


class Champions(Check):
    name = "champions"
    title = "Champions (Table 8, Figure 3)"
    section = "champions"
    thresholds = {"champion_items": 3.0}
    needs_configs = True
    gate = "scope"

    def gate_created(
        self, with_v: dict[str, Any], without_v: Any, newcomers: frozenset[str], section: Any = None
    ) -> bool:
        """Also the newcomer's when it already failed: a newcomer wins a configuration by
        more than ``champion_items`` over the reference winner."""
        if super().gate_created(with_v, without_v, newcomers, section):
            return True
        return with_v["status"] == FAIL and any(
            newcomers & set(w["winners"]) and w.get("lead_items") is not None and w["lead_items"] > with_v["threshold"]
            for w in (with_v.get("evidence") or {}).get("other_wins", [])
        )

    def gate_why(self, with_v: dict[str, Any], newcomers: frozenset[str]) -> str | None:
        wins = [
            f"{' / '.join(sorted(newcomers & set(w['winners'])))} wins {w['config']} by {w['lead_items']} items"
            for w in (with_v.get("evidence") or {}).get("other_wins", [])
            if newcomers & set(w["winners"])
            and w.get("lead_items") is not None
            and w["lead_items"] > with_v["threshold"]
        ]
        if not wins:
            return None
        more = f" and {len(wins) - 3} more configs" if len(wins) > 3 else ""
        return f"{'; '.join(wins[:3])}{more} over the reference winner (more than {with_v['threshold']:g})"

    def compute(self, scope: Scope) -> dict[str, Any]:
        names = scope.names
        entry, ch = champions_entry(scope.acc, scope.ref, names, scope.keys, scope.shape[1])
        order = scope.order.tolist()
        return {
            "set": entry["set"],
            "count": entry["count"],
            "outright": entry["outright"],
            "top3": [names[m] for m in ch["top3"]],
            "ties": "competition ranking: every model tied at the top of a config wins it",
            "per_config": entry["per_config"],
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
        line = Line(
            "champions",
            f"champions: {ch['count']} ({', '.join(ch['set'])}); outright "
            f"{len(ch['outright'])}; top-3 reached by {len(ch['top3'])}; Kendall tau vs reference mean "
            f"{_n2(kt['mean'])}, min {_n2(kt['min'])}",
        )
        rows = [
            [
                c["config"],
                " / ".join(c["winners"]),
                c["accuracy"],
                c["runner_up"] or "-",
                c["margin"],
                c["margin_items"],
                "-" if c.get("lead_items") is None else c["lead_items"],
            ]
            for c in ch["per_config"]
        ]
        table = Table(
            "champions",
            "Champions per configuration (Table 8, Figure 3)",
            ["config", "winner(s)", "accuracy", "runner-up", "margin", "margin items", "lead over ref winner"],
            rows,
            note="Exact ties: every tied model wins the configuration (competition ranking). Lead over "
            "ref winner: items by which the configuration's winners beat the reference "
            "configuration's winner(s), where none of those wins it (the verdict's value).",
            widths={0: 26, 1: 26, 3: 22},
        )
        return [table, line]


def champions_entry(
    acc: Any, ref: int, names: Any, keys: Any, n_items: int, members: list[int] | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The section's ``set``, ``count``, ``outright`` and ``per_config`` over the models
    ``members`` (indices into ``names``; all by default: the submission gate passes the
    models already on the leaderboard), and the raw ``metrics.champions`` result."""
    idx = list(range(len(names))) if members is None else list(members)
    sub = acc[idx]
    ch = champions_m(sub, ref)
    leads = challenger_leads(sub, ref, n_items)
    per_config = []
    for k in range(len(keys)):
        ru = ch["runner_up"][k]
        margin = num(ch["margin"][k])
        per_config.append(
            {
                "config": keys[k],
                "winners": [names[idx[m]] for m in ch["winners"][k]],
                "accuracy": float(ch["best"][k]),
                "runner_up": None if ru is None else names[idx[ru]],
                "margin": margin,
                "margin_items": 0 if margin is None else int(round(margin * n_items)),
                "lead_items": leads[k],
            }
        )
    entry = {
        "set": [names[idx[m]] for m in ch["champion_set"]],
        "count": len(ch["champion_set"]),
        "outright": [names[idx[m]] for m in ch["outright"]],
        "per_config": per_config,
    }
    return entry, ch


def _n2(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def champions_verdict(scope: str, ch: dict[str, Any], reference_key: str, t: Any) -> dict[str, Any]:
    """docs/spec/AUDITS.md v2: value = the largest lead, in items, of a configuration's winners over
    the reference winner(s), over configurations none of whose winners is a reference
    winner (0 if none). pass: one champion; warn: several and value <= champion_items
    (including sets that grow only through ties with the reference winners); fail:
    value > champion_items. Ties among the challengers do not soften the verdict."""
    per = {row["config"]: row for row in ch["per_config"]}
    ref_winners = set(per[reference_key]["winners"])
    challenged = [row for row in ch["per_config"] if row.get("lead_items") is not None]
    value = max((row["lead_items"] for row in challenged), default=0)
    worst = max(challenged, key=lambda r: r["lead_items"], default=None)
    ref_txt = " / ".join(sorted(ref_winners))
    # v3 margins: champions beyond one (1 - count) decide pass/warn, the lead in items a fail
    margin = float(1 - ch["count"]) + 0.0
    if ch["count"] <= 1:
        status, why = PASS, f"one champion ({', '.join(ch['set'])}) under every config"
    elif not at_most(value, t.champion_items):
        margin = exact(t.champion_items - value) + 0.0
        tie = f" (tied: {' / '.join(worst['winners'])})" if len(worst["winners"]) > 1 else ""
        status, why = (
            FAIL,
            (
                f"{ch['count']} champions; {worst['config']} is won by "
                f"{' / '.join(worst['winners'])}{tie} by {value} items over the reference "
                f"winner {ref_txt}"
            ),
        )
    elif challenged:
        status, why = (
            WARN,
            (
                f"{ch['count']} champions, the others lead the reference winner by <= "
                f"{t.champion_items:g} items (coin flips)"
            ),
        )
    else:
        status, why = WARN, f"{ch['count']} champions, the others only through exact ties with the reference winner"
    others = sorted({w for row in ch["per_config"] for w in row["winners"]} - ref_winners)
    msg = (
        f"{why}. champion set {ch['set']}; reference winner(s) {sorted(ref_winners)}; "
        f"other winners {others}; largest lead over the reference winner {value} items "
        f"(threshold {t.champion_items:g})"
    )
    wins = [
        {
            "config": r["config"],
            "winners": r["winners"],
            "margin_items": r["margin_items"],
            "lead_items": r.get("lead_items"),
        }
        for r in ch["per_config"]
        if set(r["winners"]) - ref_winners
    ]
    return make_verdict(
        "champions",
        f"champions[{scope}]",
        status,
        value,
        t.champion_items,
        margin,
        msg,
        {"set": ch["set"], "other_wins": wins},
    )


CHECK = Champions()
