"""Champions: how many models does some harness configuration crown?
(paper section 4.3, Table 8, Figure 3)

Section ``champions``: per-config winners (competition ranking: exact ties all
win), the champion set, top-3, rank ranges and Kendall tau vs the reference.
One verdict per scope: ``champions[<scope>]`` (docs/audits.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..metrics.champions import challenger_leads, champions as champions_m, item_count
from ..metrics.harness_effects import one_sided
from ..metrics.identified import holm_adjust
from .tables import Line, Table
from .verdicts import FAIL, PASS, WARN, at_most, exact, make_verdict
from .base import Check, Scope, num, discordant_items


class Champions(Check):
    name = "champions"
    position = 60  # in the report: after the checks with a lower position
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
            c["model"] in newcomers for c in (with_v.get("evidence") or {}).get("significant", [])
        )

    def gate_why(self, with_v: dict[str, Any], newcomers: frozenset[str]) -> str | None:
        wins = [
            f"{c['model']} beats the reference winner {c['reference_winner']} under {c['config']} by "
            f"{c['lead_items']} items ({c['wins']} v {c['losses']}, Holm p {c['p_holm']:.2g})"
            for c in (with_v.get("evidence") or {}).get("significant", [])
            if c["model"] in newcomers
        ]
        if not wins:
            return None
        more = f" and {len(wins) - 3} more" if len(wins) > 3 else ""
        return f"{'; '.join(wins[:3])}{more}"

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
            "challenges": challenges(scope, ch),
        }

    def judge(self, scope: Scope, section: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            champions_verdict(
                scope.name, section, scope.keys[scope.ref], scope.thresholds, scope.alpha, graded=scope.graded
            )
        ]

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
                "margin_items": 0 if margin is None else item_count(margin * n_items),
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


def challenges(scope: Scope, ch: dict[str, Any]) -> dict[str, Any]:
    """v4: every model outside the reference winners R against the strongest of R under every
    other configuration (exact McNemar: the sign test on the items only one of the two gets
    right under that configuration), Holm over the (K - 1)(M - |R|) tests. The significant
    ones (Holm p <= alpha, in the challenger's favour) with their counts, sorted by p."""
    names, keys = scope.names, scope.keys
    M, K = scope.counts.shape
    R = [int(r) for r in ch["winners"][scope.ref]]
    others = np.array([m for m in range(M) if m not in set(R)], dtype=np.intp)
    tested = int(others.size * (K - 1))
    if not tested:
        return {"tested": 0, "alpha": scope.alpha, "significant": []}
    xs = np.repeat(others, len(R))
    ys = np.tile(np.array(R, dtype=np.intp), others.size)
    x_only, y_only = scope.config_discordance(xs, ys)
    x_only = x_only.reshape(others.size, len(R), K)
    y_only = y_only.reshape(others.size, len(R), K)
    # per config, the reference winner with the most items right under it (ties: R's order)
    strongest = np.argmax(scope.counts[R][:, :], axis=0)  # K
    cols = np.arange(K)
    a = x_only[:, strongest, cols]  # challengers x K
    b = y_only[:, strongest, cols]
    live = np.ones(K, dtype=bool)
    live[scope.ref] = False
    p = one_sided(a[:, live], b[:, live])
    p_holm = holm_adjust(p.ravel()).reshape(p.shape)
    hit = np.argwhere(p_holm <= scope.alpha + 1e-12)
    live_keys = np.flatnonzero(live)
    found = []
    for j, kk in hit.tolist():
        k = int(live_keys[kk])
        m, r = int(others[j]), R[int(strongest[k])]
        found.append(
            {
                "config": keys[k],
                "model": names[m],
                "reference_winner": names[r],
                "wins": int(a[j, k]),
                "losses": int(b[j, k]),
                "lead_items": num(scope.counts[m, k] - scope.counts[r, k]),
                "p": float(p[j, kk]),
                "p_holm": float(p_holm[j, kk]),
            }
        )
    found.sort(key=lambda c: (c["p_holm"], -c["lead_items"], c["config"], c["model"]))
    best = float(p_holm.min()) if p_holm.size else 1.0
    return {"tested": tested, "alpha": scope.alpha, "min_p_holm": best, "significant": found}


def _items(x: float) -> str:
    """A lead in items: a count, or on graded records a sum of outcomes (two decimals)."""
    return f"{x:.2f}" if isinstance(x, float) else str(x)


def _n2(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def champions_verdict(
    scope: str, ch: dict[str, Any], reference_key: str, t: Any, alpha: float = 0.05, *, graded: bool = False
) -> dict[str, Any]:
    """v4 (docs/audits.md, "AUDITS v4"). fail: some model beats the reference winner under some
    configuration beyond item sampling (exact McNemar, Holm over every (configuration,
    challenger) test: ``challenges``) **and** by more than ``champion_items`` items; warn: more
    than one champion by count, none of them such a win; pass: one champion. value =
    ``-log10`` of the smallest Holm p of the challenges (0 when there are none), threshold
    ``-log10 alpha``; margin: ``1 - count`` on a pass or warn, ``log10(p) - log10(alpha)`` (in
    decades of p) on a fail. A hand-built section without ``challenges`` is judged on the leads
    alone (v2)."""
    import math

    per = {row["config"]: row for row in ch["per_config"]}
    ref_winners = set(per[reference_key]["winners"])
    ref_txt = " / ".join(sorted(ref_winners))
    chal = ch.get("challenges")
    threshold = exact(-math.log10(alpha))
    if chal is None:  # v2 rule: leads in items
        sig = [
            {
                "config": r["config"],
                "model": " / ".join(r["winners"]),
                "reference_winner": ref_txt,
                "wins": None,
                "losses": None,
                "lead_items": r["lead_items"],
                "p": None,
                "p_holm": 0.0,
            }
            for r in ch["per_config"]
            if r.get("lead_items") is not None
        ]
        tested, best = len(sig), (0.0 if sig else 1.0)
    else:
        sig, tested, best = chal["significant"], chal["tested"], chal.get("min_p_holm", 1.0)
    real = [c for c in sig if not at_most(c["lead_items"], t.champion_items)]
    value = exact(-math.log10(max(best, 1e-300))) + 0.0 if tested else 0.0
    margin = float(1 - ch["count"]) + 0.0
    if ch["count"] <= 1 and not real:
        status, why = PASS, f"one champion ({', '.join(ch['set'])}) under every config"
    elif real:
        top = real[0]
        margin = min(exact(threshold - value), -1e-12)  # decades of p below alpha
        counts = "" if top["wins"] is None else f" ({top['wins']} v {top['losses']} items {discordant_items(graded)}"
        counts += "" if top["p_holm"] is None or top["wins"] is None else f", Holm p {top['p_holm']:.2g})"
        status, why = (
            FAIL,
            (
                f"{ch['count']} champions; under {top['config']}, {top['model']} beats the reference winner "
                f"{top['reference_winner']} by {_items(top['lead_items'])} items{counts}, beyond item sampling"
                + (f"; {len(real) - 1} more such win{'s' if len(real) > 2 else ''}" if len(real) > 1 else "")
            ),
        )
    else:
        status, why = (
            WARN,
            (
                f"{ch['count']} champions by count, but no configuration's winner beats the reference winner "
                f"beyond item sampling (exact McNemar, Holm over {tested} tests)"
                if tested
                else f"{ch['count']} champions, the others only through exact ties with the reference winner"
            ),
        )
    others = sorted({w for row in ch["per_config"] for w in row["winners"]} - ref_winners)
    challenged = [row for row in ch["per_config"] if row.get("lead_items") is not None]
    lead = max((row["lead_items"] for row in challenged), default=0)
    msg = (
        f"{why}. champion set {ch['set']}; reference winner(s) {sorted(ref_winners)}; "
        f"other winners {others}; largest lead of a configuration's winners over the reference winner "
        f"{lead} items; smallest Holm p of a challenge {best:.2g} (alpha {alpha:g}; a fail also needs "
        f"more than {t.champion_items:g} items)"
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
        threshold,
        margin,
        msg,
        {"set": ch["set"], "other_wins": wins, "significant": real[:20], "tested": tested},
    )


CHECK = Champions()
