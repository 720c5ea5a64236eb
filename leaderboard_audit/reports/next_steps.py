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

from .twins import twin_scopes
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


def one_model_line(s: dict[str, Any]) -> str | None:
    """UX review #16: a one-model board has no order to audit; say so, with its own facts."""
    rows = s.get("leaderboard") or []
    if len(rows) != 1:
        return None
    r = rows[0]
    text = f"one model ({r['model']}): there is no order to audit; add models to compare"
    if s.get("n_configs", 1) > 1 and r.get("min") is not None:
        text += (
            f". Its score is a band: {r['min']:.3f} to {r['max']:.3f} over {s['n_configs']} configurations "
            f"(reference {r['reference']:.3f}, robust {r['robust']:.3f})"
        )
        br = (s.get("brittleness") or {}).get(r["model"])
        if isinstance(br, dict) and br.get("brittleness") is not None:
            text += f"; {br['brittleness']:.0%} of its variance is prompt sensitivity (Brittlebench)"
    return text


def board_line(s: dict[str, Any]) -> str | None:
    """Which order the published board uses and why (AUDITS v4, "The board")."""
    withheld = ((s.get("incomplete") or {}).get("withheld") or {}).get("averaged")
    if withheld:  # an incomplete grid whose design sample cannot estimate the board (incomplete_sections.py)
        return f"no board to publish yet: {withheld}"
    avg = s.get("averaged") or {}
    board = avg.get("board")
    if not board or len(board["rows"]) < 2:
        return None
    rows = board["rows"]
    ranks = sorted({r["rank"] for r in rows})
    top = [r["model"] for r in rows if r["rank"] == 1]
    basis = avg.get("estimated_from")
    sample = (
        ""
        if not basis
        else f" on the design sample of {basis['items']:,} of {basis['of']:,} items (the grid is incomplete; "
        "scores estimated)"
    )
    rule = (
        "(rank = the best of its simultaneous 95% rank interval, never above a higher score)"
        if any("rank_interval" in r for r in rows)
        else "(rank = 1 + models identified above, Benjamini-Hochberg)"
    )
    first = "rank 1" if len(top) == 1 else "rank 1 shared by"
    text = (
        f"publish the board by the harness-averaged comparison {rule}{sample}: {count(len(ranks), 'rank')} for "
        f"{count(len(rows), 'model')}, {first}: {names_list(top, TOP_NAMES)}"
    )
    ident = s.get("identified") or {}
    if s.get("n_configs", 1) > 1 and isinstance(ident.get("edges_total"), int):
        pairs = len(rows) * (len(rows) - 1) // 2
        text += (
            f"; not by robust items: they identify only {ident['edges_total']:,} of {pairs:,} pairs"
            if ident["edges_total"] * 2 < pairs
            else f"; robust items identify {ident['edges_total']:,} of {pairs:,} pairs (own column)"
        )
    return text


def board_separates(s: dict[str, Any], higher: str, lower: str) -> bool | None:
    """Whether the published board (AUDITS v5: simultaneous rank intervals) separates the printed
    adjacent pair ``higher`` > ``lower`` in that direction: the one rule every line uses for "is
    this pair separated" (None: no v5 board, or not an adjacent printed pair)."""
    board = (s.get("averaged") or {}).get("board") or {}
    flags = board.get("printed_pairs_separated")
    order = [r["model"] for r in s.get("leaderboard") or []]
    if flags is None or len(flags) != max(len(order) - 1, 0):
        return None
    for j, (h, lo) in enumerate(zip(order[:-1], order[1:])):
        if (h, lo) == (higher, lower):
            return bool(flags[j])
    return None


def pair_lines(s: dict[str, Any]) -> list[str]:
    pairs = s.get("pairs") or []
    if not pairs:
        return []
    ties = [p for p in pairs if p["gap_items"] == 0]
    ident = [p for p in pairs if p["gap_items"] != 0 and not p["robust_tie"]]
    # AUDITS v5: every printed gap the robust items do not order carries its cause, and only the
    # harness cause is ``manufactured``
    sampling = [p for p in pairs if p["gap_items"] != 0 and p.get("cause") == "sampling"]
    undecidable = [p for p in pairs if p["gap_items"] != 0 and p.get("cause") == "undecidable"]
    harness = [p for p in pairs if p["gap_items"] != 0 and p.get("cause") == "harness"]
    other = [
        p
        for p in pairs
        if p["gap_items"] != 0 and p["robust_tie"] and p not in sampling and p not in harness and p not in undecidable
    ]
    parts = [f"{len(ident):,} identified (unadjusted)"]
    if ties:
        parts.append(
            f"{len(ties):,} printed as {'a tie' if len(ties) == 1 else 'ties'} (equal scores: the printed order "
            "carries no claim)"
        )
    if harness:
        parts.append(f"{len(harness):,} manufactured by the harness (reversed beyond item sampling)")
    if undecidable:
        sep = [p for p in undecidable if board_separates(s, p["higher"], p["lower"])]
        parts.append(f"{len(undecidable):,} not decidable on robust items (the board separates {len(sep):,})")
    if sampling:
        parts.append(f"{len(sampling):,} too close to call on the robust items (sampling)")
    if other:
        parts.append(f"{len(other):,} not identified")
    out = [f"{count(len(pairs), 'adjacent pair')}: " + "; ".join(parts)]
    if harness:
        worst = max(harness, key=lambda p: (p.get("reversing_significant", 0), p["reversing"], p["gap_items"]))
        rev = worst.get("reversal") or {}
        out.append(
            f"act on the harness: {worst['higher']} > {worst['lower']} is reversed beyond sampling by "
            f"{worst.get('reversing_significant', 0)} of {s.get('n_configs', 0)} configurations (e.g. "
            f"{rev.get('config', '-')}): print it as a tie, or fix the configuration and say which"
        )
    if sampling:
        needed = [p["items_needed"] for p in sampling if isinstance(p.get("items_needed"), int)]
        out.append(
            f"act on the sample: {count(len(sampling), 'pair')} need more items to be told apart on robust items"
            + (f" (jointly robust items needed: {_range(needed)})" if needed else "")
        )
    if ident and (sampling or harness or undecidable):
        p = max(ident, key=lambda p: p["higher_only"] - p["lower_only"])
        out.append(
            f"an identified pair beside them: {p['higher']} > {p['lower']} ({p['higher_only']} v {p['lower_only']} "
            "robust items)"
        )
    return out


def multiplicity_line(s: dict[str, Any]) -> str | None:
    """How many false alarms to expect (AUDITS v4: board-wide error control of the pair verdicts)."""
    pairs = s.get("pairs") or []
    tests = next((p.get("board_tests") for p in pairs if p.get("board_tests")), None)
    if not pairs or tests is None:
        return None
    n = len(pairs)
    text = (
        f"false alarms: a pair fails only after Holm over the board's {tests:,} claims (<= 5% of boards with no effect)"
    )
    identified = sum(1 for p in pairs if p.get("identified") is not None)
    if not identified:  # UX review M13: no chance count for claims nobody made
        return text + "; no adjacent pair is identified"
    alpha = (s.get("averaged") or {}).get("alpha", 0.05)
    return text + f"; 'identified' is unadjusted (~{alpha * n:.1f} of {n:,} by chance)"


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
    # v4: the load-bearing axis by the mean tau over its configurations (the min favours the largest group)
    mean_tau = {
        a: v for a, v in (ax.get("axis_kendall_mean") or {}).items() if a in taus and isinstance(v, (int, float))
    }
    means = ax.get("mean") or {}
    if not taus:
        return None
    if min(taus.values()) >= 0.9:
        return None
    if mean_tau:
        axis = min(sorted(mean_tau), key=lambda a: (mean_tau[a], means.get(a, 1.0)))
    else:
        axis = min(sorted(taus), key=lambda a: (taus[a], means.get(a, 1.0)))
    advice = AXIS_ADVICE.get(
        axis, f"the {axis} axis is load-bearing: report accuracy averaged over it, and publish the setting used"
    )
    mean_txt = f"mean Kendall tau {mean_tau[axis]:.2f}, " if axis in mean_tau else ""
    return f"{advice} (varying {axis} alone: {mean_txt}as low as {taus[axis]:.2f})"


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
    if s.get("n_configs", 1) <= 1 or not rows or any("robust" not in r or r["robust"] > 0 for r in rows):
        return None
    return (
        "every item is config-fragile for every model (robust accuracy 0.000 throughout): no item is answered "
        "alike under all configurations, so no order can be identified and the checks fail together"
    )


def incomplete_line(report: dict[str, Any]) -> str | None:
    """An incomplete grid (docs/audits.md, "Incomplete grids"): how much is missing, how many
    verdicts are undecided, and that the tables read only the observed cells; None when complete."""
    scopes = report.get("scopes") or {}
    pooled = next((s["incomplete"] for s in scopes.values() if "incomplete" in s), None)
    if pooled is None:
        return None
    from ..checks.incomplete import to_decide_phrase  # what deciding every verdict would cost
    from .twins import reported_verdicts  # a twin scope's repeated verdicts once, as counts_note counts them

    verdicts = [v for v in reported_verdicts(report) if "decided" in v]
    open_ = sum(1 for v in verdicts if not v["decided"])
    return (
        f"incomplete grid: {pooled['missing']:,} of {pooled['cells']:,} cells missing; {open_} of "
        f"{len(verdicts)} verdicts undecided (warns that name the missing cells that would decide them; "
        f"--audit-strict or --strict fails them){to_decide_phrase(report, open_)}. Decided verdicts hold whatever "
        "the missing cells hold; the tables read the observed cells only"
    )


def next_steps(report: dict[str, Any]) -> list[str]:
    """The lines, most important first; [] for a report without scopes."""
    got = first_scope(report)
    if got is None:
        return []
    _, s = got
    out: list[str] = []
    line = incomplete_line(report)
    if line:
        out.append(line)
    line = one_model_line(s)
    if line:
        out.append(line)
    if s.get("n_configs", 1) <= 1:
        out.append(MORE_CONFIGS)
    line = fragile_line(s)
    if line:
        out.append(line)
    line = board_line(s)
    if line:
        out.append(line)
    out += pair_lines(s)
    has_board = bool((s.get("averaged") or {}).get("board"))
    if s.get("n_configs", 1) <= 1 or not has_board:  # with a board line, its robust-items count says it
        out += tier_lines(s)
    if s.get("n_configs", 1) > 1 and not has_board:
        out += tier_lines(s, "averaged", "harness-averaged order")  # a pre-v4 report: no board line
    for line in (multiplicity_line(s), power_line(s), axis_line(s)):
        if line:
            out.append(line)
    return out


__all__ = ["AXIS_ADVICE", "MORE_CONFIGS", "first_scope", "incomplete_line", "next_steps", "twin_scopes"]
