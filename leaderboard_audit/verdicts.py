"""Thresholds -> pass / warn / fail with a margin (AUDITS.md, "Verdicts").

``margin`` is the signed distance from ``value`` to ``threshold``, the boundary of
the pass region: positive inside it, negative outside.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

PASS, WARN, FAIL = "pass", "warn", "fail"
CHECKS = ("band", "manufactured", "champions", "compression", "axes", "brittleness")


@dataclass(frozen=True)
class Thresholds:
    """Defaults from AUDITS.md; every one configurable (pyproject / ini / command line)."""

    band_pass: float = 0.02
    band_warn: float = 0.05
    fragile_share: float = 0.5
    champion_items: float = 3.0
    axes_pass: float = 0.9
    axes_warn: float = 0.6
    brittleness_pass: float = 0.25
    brittleness_warn: float = 0.5
    compression_k: int = 100

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    @classmethod
    def from_mapping(cls, values: dict[str, Any]) -> "Thresholds":
        unknown = set(values) - set(cls.names())
        if unknown:
            raise ValueError(f"unknown audit threshold(s) {sorted(unknown)}; known: {cls.names()}")
        conv = {f.name: (int if f.type in (int, "int") else float)(values[f.name])
                for f in fields(cls) if f.name in values}
        return cls(**conv)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def verdict(check: str, vid: str, status: str, value: float | None, threshold: float,
            margin: float | None, message: str, evidence: dict[str, Any] | None = None) -> dict[str, Any]:
    out = {"check": check, "id": vid, "status": status, "value": value, "threshold": threshold,
           "margin": margin, "message": message}
    if evidence is not None:
        out["evidence"] = evidence
    return out


def _f(x: float | None, nd: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{nd}f}"


def band_verdict(scope: str, model: str, row: dict[str, Any], t: Thresholds) -> dict[str, Any]:
    s = row["spread"]
    status = PASS if s <= t.band_pass else WARN if s <= t.band_warn else FAIL
    msg = (f"{model}: accuracy ranges {_f(row['min'])}..{_f(row['max'])} across configs "
           f"(spread {_f(s)}; pass <= {t.band_pass}, warn <= {t.band_warn}); reference "
           f"{_f(row['reference'])}, robust {_f(row['robust'])}, optimistic {_f(row['optimistic'])}")
    return verdict("band", f"band[{scope}-{model}]", status, s, t.band_pass, t.band_pass - s, msg,
                   {k: row[k] for k in ("reference", "min", "max", "spread", "robust", "optimistic",
                                        "config_lucky")})


def pair_verdict(scope: str, p: dict[str, Any], n_configs: int, t: Thresholds) -> dict[str, Any]:
    h, l = p["higher"], p["lower"]
    ci = p["ci"]
    value = 0.0 if ci is None else ci[0]
    fs = p["fragile_share"]
    identified = not p["robust_tie"]
    if p["manufactured"] and p["reversing"] > 0:
        status, why = FAIL, (f"manufactured: the robust items do not order the pair and "
                             f"{p['reversing']}/{n_configs} configs print the opposite order")
    elif ci is not None and ci[1] < 0:
        status, why = FAIL, "the jointly robust items order the pair the other way"
    elif p["gap_items"] == 0:
        status, why = WARN, "an order printed for a tie (reference gap = 0)"
    elif p["manufactured"]:
        status, why = WARN, "manufactured by fragile items, though no config reverses the pair"
    elif identified and fs is not None and fs > t.fragile_share:
        status, why = WARN, f"identified, but {fs:.0%} of the gap is carried by fragile items"
    else:
        status, why = PASS, "the robust items order the pair"
    ci_txt = "n/a (no jointly robust items)" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"
    caveat = ""
    if ci is not None and (p["higher_only"] == 0 or p["lower_only"] == 0):
        caveat = (" (no disagreement in one direction: a CI bound sits at 0 by construction)"
                  if p["higher_only"] + p["lower_only"] > 0 else
                  " (the two agree on every jointly robust item: the CI is [0, 0] by construction)")
    msg = (f"{h} > {l}: {why}. gap {_f(p['gap'])} ({p['gap_items']} items), fragile share "
           f"{_f(fs)}; robust items {p['robust_items']}: higher_only {p['higher_only']}, lower_only "
           f"{p['lower_only']}, robust diff CI {ci_txt}{caveat}; reversing {p['reversing']}/{n_configs}")
    ev = {k: p[k] for k in ("gap", "gap_items", "fragile_share", "robust_items", "higher_only",
                            "lower_only", "robust_diff", "ci", "reversing")}
    ev["configs"] = n_configs
    return verdict("manufactured", f"manufactured[{scope}-{h}>{l}]", status, value, 0.0, value, msg, ev)


def champions_verdict(scope: str, ch: dict[str, Any], reference_key: str, t: Thresholds) -> dict[str, Any]:
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
    return verdict("champions", f"champions[{scope}]", status, value, t.champion_items,
                   t.champion_items - value, msg, {"set": ch["set"], "other_wins": wins})


def compression_verdict(scope: str, c: dict[str, Any], t: Thresholds) -> dict[str, Any]:
    corr, ci = c["corr"], c["ci"]
    lo = None if ci is None else ci[0]
    topk, allf = c["mean_fragility_topk"], c["mean_fragility_all"]
    if corr is None:
        status, why = PASS, "corr(disc, fragility) undefined (constant discrimination or fragility)"
    elif corr <= 0:
        status, why = PASS, "discriminative items are not the fragile ones"
    elif lo is None or lo <= 0:
        status, why = WARN, "corr > 0 but its CI includes 0"
    elif topk is not None and allf is not None and topk > allf:
        status, why = FAIL, (f"compression keeps the fragile items: top-{c['k']} mean fragility "
                             f"{topk:.3f} > {allf:.3f} over all items")
    else:
        status, why = WARN, f"corr > 0, but the top-{c['k']} items are no more fragile than all items"
    ci_txt = "n/a" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"
    msg = (f"{why}. corr {_f(corr)} CI {ci_txt}; top-{c['k']} (cutoff {c['cutoff_above']} above + "
           f"{c['cutoff_ties']} tied) mean fragility {_f(topk)} vs all {_f(allf)}; champions full "
           f"{c['champions_full']}, top-k mean {_f(c['champions_topk_mean'], 2)}, random "
           f"{_f(c['champions_random_mean'], 2)}" + (" (k reduced to N//2)" if c.get("k_reduced") else ""))
    value = lo if lo is not None else (corr if corr is not None else 0.0)
    return verdict("compression", f"compression[{scope}]", status, value, 0.0, 0.0 - value, msg,
                   {k: c[k] for k in ("k", "corr", "ci", "mean_fragility_topk", "mean_fragility_all",
                                      "champions_full", "champions_topk_mean", "champions_random_mean")})


def axes_verdict(scope: str, ax: dict[str, Any], t: Thresholds) -> dict[str, Any]:
    single = {a: v for a, v in ax["axis_kendall_min"].items() if a != "joint" and v is not None}
    if not single:
        return verdict("axes", f"axes[{scope}]", PASS, None, t.axes_pass, None,
                       "no single axis varies (or every Kendall tau is undefined)")
    axis = min(single, key=lambda a: (single[a], a))
    value = single[axis]
    status = PASS if value >= t.axes_pass else WARN if value >= t.axes_warn else FAIL
    detail = ", ".join(f"{a} {v:.2f}" for a, v in single.items())
    lead = (f"the {axis} axis is load-bearing: varying it alone reorders the models "
            f"(min Kendall tau {value:.2f})" if status != PASS else
            f"every single axis keeps the order (min Kendall tau {value:.2f}, {axis})")
    msg = f"{lead}; min tau per axis: {detail}; pass >= {t.axes_pass}, warn >= {t.axes_warn}"
    return verdict("axes", f"axes[{scope}]", status, value, t.axes_pass, value - t.axes_pass, msg,
                   {"axis_kendall_min": ax["axis_kendall_min"], "load_bearing": axis})


def brittleness_verdict(scope: str, br: dict[str, Any], t: Thresholds) -> dict[str, Any]:
    per = {m: v["brittleness"] for m, v in br.items() if isinstance(v, dict) and "brittleness" in v}
    model = max(per, key=lambda m: (per[m], m))
    value = per[model]
    status = PASS if value <= t.brittleness_pass else WARN if value <= t.brittleness_warn else FAIL
    msg = (f"largest prompt-sensitivity share {value:.3f} ({model}): V_prompt / (V_item + V_prompt); "
           f"pass <= {t.brittleness_pass}, warn <= {t.brittleness_warn}")
    return verdict("brittleness", f"brittleness[{scope}]", status, value, t.brittleness_pass,
                   t.brittleness_pass - value, msg, {"model": model, "per_model": per})
