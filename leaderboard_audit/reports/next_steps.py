""" "What to do next": the few lines every renderer shows first.

Built from one scope of a report-v1 dict (``pooled`` when present): the adjacent
pairs by cause (printed ties, identified, manufactured by sampling with the range of
items needed, manufactured by the harness with how many configurations reverse
them), the identified tiers (count, sizes, the top tier), the harness-averaged order
and the power note when the report carries them (AUDITS.md v3), the load-bearing
axis with a concrete suggestion, and "the harness was not varied" on a
one-configuration grid with the commands that add configurations.

Lines are plain text: untrusted names are passed through as they are and each
renderer escapes them (``clean`` / ``md`` / ``esc``).
"""

from __future__ import annotations

import statistics
from typing import Any

from .words import count, names_list

#: what to do when an axis carries the damage (AUDITS.md's paper axes; declared axes get a generic line)
AXIS_ADVICE = {
    "ordering": "option order is load-bearing: report permutation-averaged accuracy, or score by likelihood",
    "format": "the prompt format is load-bearing: report accuracy averaged over the templates, and publish the one used",
    "scoring": "the scoring method is load-bearing: publish it, and report generation and likelihood scores side by side",
}
MORE_CONFIGS = (
    "the harness was not varied (one configuration): the band, champion, compression, axes and brittleness "
    "checks do not apply; collect more configurations with `leaderboard-audit collect SPEC.toml` "
    "(docs/collect.md) or import several lm-eval runs with `leaderboard-audit import lm-eval` (docs/importers.md)"
)
TOP_NAMES = 3


def first_scope(report: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    scopes = report.get("scopes") or {}
    if not scopes:
        return None
    name = "pooled" if "pooled" in scopes else next(iter(scopes))
    return name, scopes[name]


def twin_scopes(report: dict[str, Any]) -> dict[str, str]:
    """With one benchmark the pooled scope repeats it: {benchmark scope: "pooled"}."""
    scopes = report.get("scopes") or {}
    benches = [n for n in scopes if n != "pooled"]
    return {benches[0]: "pooled"} if "pooled" in scopes and len(benches) == 1 else {}


def counts_note(report: dict[str, Any]) -> str:
    """How the header's counts relate to pytest's (HTML and Markdown; plain text)."""
    from .twins import reported_verdicts  # each repeated verdict once; a user check's on a twin scope too

    twins = twin_scopes(report)
    kept = [n for n in report.get("scopes") or {} if n not in twins]
    n = len(reported_verdicts(report))
    text = (
        f"These count the {count(n, 'verdict')} of the report over {count(len(kept), 'scope')}, one per check and "
        "scope (and per model or pair where a check judges them); pytest --audit runs one test per verdict "
        "(a warn is a test that passed with a warning"
    )
    if twins:
        text += f"; each {', '.join(twins)} test also judges the identical pooled verdict"
    return (
        text + "), and the counts: line of its summary relates its numbers to these; each scope heading counts its own."
    )


def _range(values: list[int]) -> str:
    lo, hi = min(values), max(values)
    med = statistics.median(values)
    med_text = f"{med:,.0f}" if med == int(med) else f"{med:,.1f}"
    return f"{lo:,}" if lo == hi else f"median {med_text}, range {lo:,}-{hi:,}"


def pair_lines(s: dict[str, Any]) -> list[str]:
    pairs = s.get("pairs") or []
    if not pairs:
        return []
    ties = [p for p in pairs if p["gap_items"] == 0]
    ident = [p for p in pairs if p["gap_items"] != 0 and not p["robust_tie"]]
    sampling = [p for p in pairs if p["gap_items"] != 0 and p["manufactured"] and p.get("cause") == "sampling"]
    harness = [p for p in pairs if p["gap_items"] != 0 and p["manufactured"] and p.get("cause") == "harness"]
    other = [p for p in pairs if p["gap_items"] != 0 and p["robust_tie"] and p not in sampling and p not in harness]
    parts = [f"{len(ident):,} identified"]
    if ties:
        parts.append(
            f"{len(ties):,} printed as {'a tie' if len(ties) == 1 else 'ties'} (equal scores: the printed order "
            "carries no claim)"
        )
    if sampling:
        needed = [p["items_needed"] for p in sampling if isinstance(p.get("items_needed"), int)]
        text = f"{len(sampling):,} manufactured by sampling (too few robust items to tell"
        text += f"; items needed {_range(needed)})" if needed else ")"
        parts.append(text)
    if harness:
        rev = [p["reversing"] for p in harness]
        n_k = s.get("n_configs", 0)
        parts.append(
            f"{len(harness):,} manufactured by the harness (reversed by {_range(rev)} of {n_k} configurations)"
        )
    if other:
        parts.append(f"{len(other):,} not identified")
    out = [f"{count(len(pairs), 'adjacent pair')}: " + "; ".join(parts)]
    if harness:
        worst = max(harness, key=lambda p: (p["reversing"], p["gap_items"]))
        out.append(
            f"most reversed: {worst['higher']} > {worst['lower']} (gap of {count(worst['gap_items'], 'item')}, "
            f"reversed by {worst['reversing']} of {s.get('n_configs', 0)} configurations)"
        )
    if ident and (sampling or harness):
        p = max(ident, key=lambda p: p["higher_only"] - p["lower_only"])
        out.append(
            f"an identified pair beside them: {p['higher']} > {p['lower']} ({p['higher_only']} v {p['lower_only']} "
            "robust items)"
        )
    return out


def tier_lines(s: dict[str, Any], key: str = "identified", label: str = "identified order") -> list[str]:
    block = s.get(key)
    if not isinstance(block, dict) or not block.get("tiers"):
        return []
    tiers = block["tiers"]
    sizes = [len(t) for t in tiers]
    shown = ", ".join(f"{n:,}" for n in sizes[:8]) + (f", ... ({len(sizes) - 8} more)" if len(sizes) > 8 else "")
    winner = block.get("robust_winner", block.get("winner"))
    top = names_list(tiers[0], TOP_NAMES)
    text = f"{label}: {count(len(tiers), 'tier')} of {shown} models; top tier: {top}"
    text += f"; winner: {winner}" if winner else "; no single winner"
    return [text + " (tiers are a partial order: models within a tier are not separated)"]


def axis_line(s: dict[str, Any]) -> str | None:
    """The axis whose variation alone reorders the models most (lowest min Kendall tau, as the
    axes check judges it; ties broken by the lower mean axis-robust accuracy)."""
    ax = s.get("axes")
    if s.get("n_configs", 1) <= 1 or not isinstance(ax, dict) or "skipped" in ax:
        return None
    taus = {a: v for a, v in (ax.get("axis_kendall_min") or {}).items() if a != "joint" and isinstance(v, (int, float))}
    means = ax.get("mean") or {}
    if not taus:
        return None
    axis = min(sorted(taus), key=lambda a: (taus[a], means.get(a, 1.0)))
    if taus[axis] >= 0.9:
        return None
    advice = AXIS_ADVICE.get(
        axis, f"the {axis} axis is load-bearing: report accuracy averaged over it, and publish the setting used"
    )
    return f"{advice} (varying {axis} alone gives a Kendall tau as low as {taus[axis]:.2f})"


def power_line(s: dict[str, Any]) -> str | None:
    un = s.get("unidentifiable_pairs")
    n_pairs = len(s.get("pairs") or [])
    n_un = len(un) if isinstance(un, list) else un if isinstance(un, int) else None
    if not n_un or not n_pairs:
        return None
    text = (
        f"{n_un:,} of {n_pairs:,} adjacent pairs have too few disagreeing robust items for any split to be identified"
    )
    if n_un * 2 > n_pairs:
        text += "; read the harness-averaged order" if s.get("averaged") else ""
    return text


def fragile_line(s: dict[str, Any]) -> str | None:
    """Why everything fails on tiny models: no item answers alike under every configuration."""
    rows = s.get("leaderboard") or []
    if s.get("n_configs", 1) <= 1 or not rows or any(r.get("robust", 0) > 0 for r in rows):
        return None
    return (
        "every item is config-fragile for every model (robust accuracy 0.000 throughout): no item is answered "
        "alike under all configurations, so no order can be identified and the checks fail together"
    )


def next_steps(report: dict[str, Any]) -> list[str]:
    """The lines, most important first; [] for a report without scopes."""
    got = first_scope(report)
    if got is None:
        return []
    _, s = got
    out: list[str] = []
    if s.get("n_configs", 1) <= 1:
        out.append(MORE_CONFIGS)
    line = fragile_line(s)
    if line:
        out.append(line)
    out += pair_lines(s)
    out += tier_lines(s)
    if s.get("n_configs", 1) > 1:
        out += tier_lines(s, "averaged", "harness-averaged order")
    for line in (power_line(s), axis_line(s)):
        if line:
            out.append(line)
    return out


__all__ = ["AXIS_ADVICE", "MORE_CONFIGS", "first_scope", "next_steps", "twin_scopes"]
