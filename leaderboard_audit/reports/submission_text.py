"""Terminal text of the submission gate (``--audit-submission``): the newcomer's audit
and the one line on the overall state (``state_line``, shared with Markdown and HTML)."""

from __future__ import annotations

from typing import Any

from ..checks import POOLED
from ..submission import overall
from ..verdicts import FAIL, PASS, WARN
from .tables import ci_cell, pair_kind, pair_label
from .text import clean, num, signed


def _pair_line(p: dict[str, Any] | None, where: str, K: int) -> str:
    if p is None:
        return f"  {where}: none ({'top' if where == 'above' else 'bottom'} of the leaderboard)"
    v = p["verdict"]
    kind = pair_kind(p).upper() if p["manufactured"] else pair_kind(p)
    ci = ci_cell(p["ci"])
    return (
        f"  {where}: {clean(pair_label(clean(p['higher'], 28), clean(p['lower'], 28)))}: {kind}, gap {num(p['gap'])} "
        f"({p['gap_items']} items), fragile share {num(p['fragile_share'], 2)}; J {p['robust_items']}: "
        f"h_only {p['higher_only']}, l_only {p['lower_only']}, CI {ci}; reversing {p['reversing']}/{K}"
        f" -> {v['status'].upper()} margin {signed(v['margin'])}"
    )


def _champion_line(n: dict[str, Any]) -> str:
    ch = n["champion"]
    if not ch["enters"]:
        return "  champion: does not win any configuration (not in the champion set)"
    parts = []
    for w in ch["configs"]:
        how = "ties" if w["tie"] else f"by {w['margin_items']} items"
        disp = "/".join(clean(d, 24) for d in w["displaced"]) or "-"
        parts.append(f"{clean(w['config'], 30)} {how} (over {disp})")
    return (
        f"  champion: wins {len(ch['configs'])} config(s), {ch['ahead_of_existing']} ahead of every existing model: "
        + "; ".join(parts)
    )


def _broken_text(s: dict[str, Any]) -> str:
    if not s["broken"]:
        return f"breaks 0 of {s['existing_pairs']} existing adjacent orderings"
    items = []
    for b in s["broken"]:
        pair = f"{clean(b['higher'], 24)} > {clean(b['lower'], 24)}"
        if b["how"] == "split":
            items.append(
                f"{pair} (was {b['status_before'].upper()}, split by {', '.join(clean(x, 24) for x in b['between'])})"
            )
        else:
            items.append(f"{pair} ({b['status_before'].upper()} -> {b['status_after'].upper()})")
    return f"breaks {len(s['broken'])} of {s['existing_pairs']} existing adjacent orderings: " + "; ".join(items)


def _was(s: dict[str, Any]) -> str:
    before = s.get("champions_verdict_without")
    return "" if before is None else f" (without it: {before['status'].upper()} margin {signed(before['margin'])})"


def scope_lines(name: str, s: dict[str, Any]) -> list[str]:
    K = s["n_configs"]
    out = [
        f"--- {name}: {s['n_models']} models x {s['n_items']} items x {K} configs "
        f"(reference {clean(s['reference'])}) ---"
    ]
    for n in s["newcomers"]:
        bd, bv = n["band"], n["band_verdict"]
        out.append(
            f"{clean(n['model'], 40)}: rank {n['rank']} of {n['of']} (ranks {n['rank_range'][0]}-"
            f"{n['rank_range'][1]} across {K} configs); band reference {num(bd['reference'])}, "
            f"min {num(bd['min'])}, max {num(bd['max'])}, spread {num(bd['spread'])}, robust "
            f"{num(bd['robust'])}, optimistic {num(bd['optimistic'])} -> {bv['status'].upper()} "
            f"margin {signed(bv['margin'])}"
        )
        out.append(_pair_line(n["above"], "above", K))
        out.append(_pair_line(n["below"], "below", K))
        out.append(_champion_line(n))
    cv = s["champions_verdict"]
    out.append(
        f"champion set without: {', '.join(clean(m, 24) for m in s['champions_without']) or '-'}; "
        f"with: {', '.join(clean(m, 24) for m in s['champions_with'])} -> champions "
        f"{cv['status'].upper()} margin {signed(cv['margin'])}{_was(s)}"
    )
    out.append(_broken_text(s))
    return out


def benchmark_line(name: str, s: dict[str, Any]) -> str:
    parts = []
    for n in s["newcomers"]:
        pv = [p["verdict"]["status"].upper() for p in (n["above"], n["below"]) if p is not None]
        parts.append(
            f"{clean(n['model'], 24)} rank {n['rank']}/{n['of']} ({n['rank_range'][0]}-"
            f"{n['rank_range'][1]}), band {n['band_verdict']['status'].upper()} "
            f"{num(n['band']['spread'])}, pairs {'/'.join(pv) or '-'}, "
            f"champion {'yes' if n['champion']['enters'] else 'no'}"
        )
    return (
        f"{name}: " + "; ".join(parts) + f"; champions {s['champions_verdict']['status'].upper()} "
        f"({len(s['champions_without'])} -> {len(s['champions_with'])}); broken "
        f"{len(s['broken'])}/{s['existing_pairs']}"
    )


def state_line(sub: dict[str, Any], verdicts: list[dict[str, Any]] | None = None, strict: bool | None = None) -> str:
    """The one line on the overall state (what the exit code will say)."""
    strict = sub["overall"]["strict"] if strict is None else strict
    if verdicts:  # the checks that ran, in the audit's check order (not xdist's run order)
        rank = {v["id"]: j for j, v in enumerate(c for s in sub["scopes"].values() for c in s["checks"])}
        ov = overall(sorted(verdicts, key=lambda v: (rank.get(v["id"], len(rank)), v["id"])), strict)
    else:
        ov = sub["overall"]
    c = ov["counts"]
    worst = f"; worst {clean(ov['worst'], 80)}" if ov["worst"] else ""
    gate = "FAIL" if ov["exit_code"] else ov["status"].upper()
    return (
        f"submission {', '.join(clean(m, 40) for m in sub['models'])}: {gate} - {c[PASS]} pass, "
        f"{c[WARN]} warn, {c[FAIL]} fail in {ov['checks']} checks{worst}; exit {ov['exit_code']}"
        f"{' (--audit-strict: warn fails)' if strict else ''}"
    )


def render_submission_text(
    report: dict[str, Any],
    verdicts: list[dict[str, Any]] | None = None,
    *,
    strict: bool | None = None,
    width: int = 100,
) -> str:
    sub = report["submission_audit"]
    scopes = sub["scopes"]
    rec = report.get("records", {})
    lines = [
        f"submission audit of {', '.join(clean(m, 40) for m in sub['models'])}: what its arrival "
        f"changes on {clean(rec.get('path', ''))} (seed {report.get('seed')}, "
        f"{report.get('bootstrap')} resamples)",
        "pairs: J = jointly robust items; with no disagreement in one direction a CI bound sits at 0 "
        "by construction, so read h_only/l_only beside it.",
        "",
    ]
    first = POOLED if POOLED in scopes else next(iter(scopes), None)
    if first is not None:
        lines += scope_lines(first, scopes[first])
    rest = [s for s in scopes if s != first]
    if rest:
        lines += ["", "per benchmark:"] + [benchmark_line(s, scopes[s]) for s in rest]
    run = verdicts if verdicts else [v for s in scopes.values() for v in s["checks"]]
    bad = sorted((v for v in run if v["status"] in (WARN, FAIL)), key=lambda v: (v["status"] != FAIL, v["id"]))
    if bad:
        lines += ["", "verdicts needing attention (margin = signed distance to the pass region):"]
        lines += [
            f"{v['status'].upper():4} {clean(v['id'], 60)}  margin {signed(v['margin'])}  "
            f"{clean(v['message'], max(40, width - 20))}"
            for v in bad
        ]
    counts = {st: sum(v["status"] == st for v in run) for st in (PASS, WARN, FAIL)}
    lines += [
        "",
        f"audit: {counts[PASS]} pass, {counts[WARN]} warn, {counts[FAIL]} fail",
        state_line(sub, verdicts, strict),
    ]
    return "\n".join(lines)


__all__ = ["render_submission_text", "state_line"]
