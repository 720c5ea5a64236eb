"""Terminal summary (controller only): the paper's tables, readable at 100 columns."""
from __future__ import annotations

import textwrap
from typing import Any

import tabulate as _tabulate_module
from tabulate import tabulate as _tabulate


from .text import ci_text, clean, num, signed

NAME_W = 22
WIDTH = 100


def tabulate(rows: Any, headers: Any = (), tablefmt: str = "simple", **kw: Any) -> str:
    """tabulate without its 2-space minimum header padding (keeps tables < 100 columns)."""
    saved = _tabulate_module.MIN_PADDING
    _tabulate_module.MIN_PADDING = 0
    try:
        return _tabulate(rows, headers=headers, tablefmt=tablefmt, **kw)
    finally:
        _tabulate_module.MIN_PADDING = saved


def evidence_block(v: dict[str, Any]) -> str:
    """A failed check's message: the verdict line, then the numbers behind it."""
    head = (f"{v['id']}: {v['status'].upper()}  value {num(v['value'])}  threshold "
            f"{num(v['threshold'])}  margin {signed(v['margin'])}")
    rows = []
    for k, val in (v.get("evidence") or {}).items():
        if isinstance(val, list) and val and isinstance(val[0], (int, float)) and len(val) == 2:
            val = ci_text(val)
        elif isinstance(val, dict):
            val = ", ".join(f"{clean(a, 18)}={num(b) if not isinstance(b, (list, dict)) else b}"
                            for a, b in val.items())
        elif isinstance(val, list):
            val = ", ".join(clean(x) if not isinstance(x, dict) else
                            f"{x.get('config')}: {'/'.join(x.get('winners', []))} by {x.get('margin_items')}"
                            for x in val)
        else:
            val = num(val) if isinstance(val, (int, float, type(None))) else clean(val)
        rows.append((k, clean(val, 160)))
    table = tabulate(rows, tablefmt="plain", disable_numparse=True) if rows else ""
    return "\n".join([head, clean(v["message"]), table]).rstrip()


def leaderboard_table(s: dict[str, Any]) -> str:
    ranges = s["champions"]["rank_range"]
    rows = [(f"{r['rank']}{'=' if r.get('tie') else ''}", clean(r["model"], NAME_W), num(r["reference"]),
             num(r["min"]), num(r["max"]), num(r["spread"]), num(r["robust"]), num(r["optimistic"]),
             num(r["config_lucky"]), "{}-{}".format(*ranges[r["model"]]))
            for r in s["leaderboard"]]
    return tabulate(rows, headers=["rank", "model", "ref", "min", "max", "spread", "robust", "optim",
                                   "lucky", "ranks"], tablefmt="simple", disable_numparse=True)


def pairs_table(s: dict[str, Any]) -> str:
    """Table 2: hi / lo are higher_only / lower_only, the jointly robust items (J)
    only one of the two gets right."""
    K = s["n_configs"]
    rows = [(f"{clean(p['higher'], 13)} > {clean(p['lower'], 13)}", f"{num(p['gap'])} ({p['gap_items']})",
             num(p["fragile_share"], 2), p["robust_items"], p["higher_only"], p["lower_only"],
             ci_text(p["ci"]), "MANUF" if p["manufactured"] else ("tie" if p["robust_tie"] else "ident"),
             f"{p['reversing']}/{K}") for p in s["pairs"]]
    return tabulate(rows, headers=["pair", "gap (items)", "frag", "J", "hi", "lo",
                                   "robust diff CI", "order", "rev"], tablefmt="simple",
                    disable_numparse=True)


def champions_table(s: dict[str, Any]) -> str:
    rows = [(clean(c["config"], 26), clean("/".join(c["winners"]), 26), num(c["accuracy"]),
             clean(c["runner_up"] or "-", NAME_W), num(c["margin"]), c["margin_items"])
            for c in s["champions"]["per_config"]]
    return tabulate(rows, headers=["config", "winner", "acc", "runner-up", "margin", "items"],
                    tablefmt="simple", disable_numparse=True)


def axes_table(s: dict[str, Any]) -> str:
    ax = s["axes"]
    models = [r["model"] for r in s["leaderboard"]]
    rows = [(clean(m, NAME_W), *(num(ax["robust_accuracy"][m][a]) for a in ("ordering", "format", "scoring", "joint")),
             ax["most_destructive"][m]) for m in models]
    rows.append(("mean", *(num(ax["mean"][a]) for a in ("ordering", "format", "scoring", "joint")), ""))
    rows.append(("min Kendall tau", *(num(ax["axis_kendall_min"][a], 2)
                                      for a in ("ordering", "format", "scoring", "joint")), ""))
    sizes = {a: len(g) for a, g in ax["groups"].items()}
    return tabulate(rows, headers=[f"model (configs: o{sizes['ordering']} f{sizes['format']} "
                                   f"s{sizes['scoring']} j{sizes['joint']})", "ordering", "format",
                                   "scoring", "joint", "most destructive"],
                    tablefmt="simple", disable_numparse=True)


def compression_line(s: dict[str, Any]) -> str:
    c = s["compression"]
    return (f"compression (k={c['k']}{', reduced to N//2' if c.get('k_reduced') else ''}): "
            f"corr(disc, fragility) {num(c['corr'], 2)} {ci_text(c['ci'], 2)}; "
            f"{c['distinct_disc_values']} distinct disc values, cutoff {c['cutoff_above']} above + "
            f"{c['cutoff_ties']} tied; mean fragility top-k {num(c['mean_fragility_topk'])} vs all "
            f"{num(c['mean_fragility_all'])}; champions full {c['champions_full']}, top-k "
            f"{num(c['champions_topk_mean'], 2)} [{c['champions_topk_min']}-{c['champions_topk_max']}], "
            f"random {num(c['champions_random_mean'], 2)}")


def brittleness_line(s: dict[str, Any]) -> str:
    br = s["brittleness"]
    per = [(r["model"], br[r["model"]]) for r in s["leaderboard"]]
    parts = ", ".join(f"{clean(m, 16)} {v['brittleness']:.2f}" for m, v in per)
    line = f"brittleness V_prompt/V: {parts}"
    if "pi_benchmark" in br:
        line += "; per benchmark: " + ", ".join(f"{b} {v:.2f}" for b, v in sorted(br["pi_benchmark"].items()))
    return line


def champions_line(s: dict[str, Any]) -> str:
    ch = s["champions"]
    kt = ch["kendall_tau"]
    return (f"champions: {ch['count']} ({', '.join(clean(m, NAME_W) for m in ch['set'])}); "
            f"outright {len(ch['outright'])}; top-3 reached by {len(ch['top3'])}; Kendall tau vs "
            f"reference mean {num(kt['mean'], 2)}, min {num(kt['min'], 2)}")


def scope_text(name: str, s: dict[str, Any], detail: str) -> list[str]:
    out = [f"--- {name}: {s['n_models']} models x {s['n_items']} items x {s['n_configs']} configs "
           f"(reference {s['reference']}) ---", "", leaderboard_table(s), "", pairs_table(s), ""]
    if detail == "full" and name == "pooled":
        out += [champions_table(s), "", axes_table(s), ""]
    out += [champions_line(s), compression_line(s), brittleness_line(s), ""]
    return out


def render_summary(report: dict[str, Any], verdicts: list[dict[str, Any]], *, detail: str = "full",
                   width: int = 100) -> str:
    rec = report["records"]
    lines = [f"records {clean(rec['path'])}: {len(rec['models'])} models, {rec['items']} items, "
             f"{len(rec['configs'])} configs, benchmarks {', '.join(rec['benchmarks'])}; "
             f"seed {report['seed']}, {report['bootstrap']} resamples"]
    lines += [clean(n) for n in rec.get("notes", [])]
    lines.append("pairs: J = jointly robust items, hi/lo = those only the higher/lower model gets "
                 "right; with no disagreement in one direction a CI bound sits at 0 by construction, "
                 "so read hi/lo beside the CI; rev = configs that reverse the pair.")
    lines.append("")
    for name, s in report["scopes"].items():
        lines += scope_text(name, s, detail)
    W = WIDTH
    bad = sorted((v for v in verdicts if v["status"] in ("fail", "warn")),
                 key=lambda v: (v["status"] != "fail", v["id"]))
    if bad:
        lines.append("verdicts needing attention (margin = signed distance to the pass region):")
        for v in bad:
            head = f"{v['status'].upper():4} {clean(v['id'], 60)}  margin {signed(v['margin'])}"
            lines.append(head)
            lines.append("     " + clean(v["message"], W - 5))
    counts = {st: sum(v["status"] == st for v in verdicts) for st in ("pass", "warn", "fail")}
    lines.append(f"audit: {counts['pass']} pass, {counts['warn']} warn, {counts['fail']} fail")
    return "\n".join(wrap_line(line, W) for line in lines)


def wrap_line(line: str, width: int) -> str:
    """Prose lines wrap at ``width`` with a hanging indent; table rows are left alone."""
    if len(line) <= width or "  " in line.strip():
        return line
    return textwrap.fill(line, width=width, subsequent_indent="    ", break_on_hyphens=False)
