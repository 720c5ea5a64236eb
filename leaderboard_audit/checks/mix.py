"""Mix: does the pooled conclusion survive leaving one benchmark out? (paper appendix A.9,
Table 9; beyond the paper: every benchmark in turn)

Pooled scope only, with at least 3 benchmarks. For each benchmark b, the registry's
pooled checks (every check with verdicts, this one excepted) run again on the records
without b, with generators keyed as the pooled scope's (keyed, not shared: the items differ), and the
headline numbers of Table 9 are read from the sections they compute. One verdict per
benchmark, ``mix[<benchmark>]``:

A change is compared with chance (docs/spec/AUDITS.md v3): a pooled verdict that
changes status without b is *specific to b* only when, over
``mix_draws`` seeded random drops of as many pooled items, the share ``q`` of drops
under which it changes too is below 0.05 / (benchmarks). Only the changed verdicts' checks rerun.

* fail (AUDITS v5): some change specific to b: Monte-Carlo p = (hits + 1)/(draws + 1) at
  most 0.05 / F, F = (pooled verdicts of the rerun checks) x (benchmarks), the family of
  verdict x left-out benchmark cells that *could* change, fixed before the data (Bonferroni;
  v4 divided by the verdicts that did change, a family the data select: review U2), with at
  least 20 F - 1 drops so that p can reach that level;
* warn: a pooled verdict that fails the run no longer fails without b, with p <= 0.05 but
  above the board's level;
* pass: otherwise; changes, threshold crossings and moved headline facts (champion
  count or set, reference order, manufactured count, most destructive axis, sign of the
  corr(disc, fragility) CI low or of the minimum Kendall tau, robust winner or tiers) are
  listed in the message.

value = number of changes specific to b, threshold 0; margin: ``min p - level`` on a
fail, minus the number of such failing verdicts on a warn, 0 on a pass
(docs/audits.md, "Beyond the paper: leave one benchmark out", "Margins").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..metrics.leave_one_out import MIN_BENCHMARKS, moved, without_benchmark
from ..metrics.per_model import items_of, released
from ..metrics.rng import rng_for
from .tables import Cell, Line, Table, ci_cell
from .verdicts import FAIL, PASS, SEVERITY, WARN, exact, fmt, make_verdict, skipped
from .base import POOLED, Check, Scope
from .drop_scope import DropScope


def _changed(n: int) -> str:
    """ "1 pooled verdict changes" or "3 pooled verdicts change", never the parenthesised plural."""
    return "1 pooled verdict changes" if n == 1 else f"{n:,} pooled verdicts change"


def headline_from_sections(
    sections: dict[str, Any], n_items: int, benchmarks: list[str], reference: str
) -> dict[str, Any]:
    """Table 9's quantities, read from the sections the checks computed (nothing recomputed);
    the same keys as ``headline_numbers`` in tests/helpers/table9.py, which computes them from
    the metrics directly (plus the identified order)."""
    out: dict[str, Any] = {"items": n_items, "benchmarks": benchmarks}
    lb = sections.get("leaderboard")
    if lb:
        lucky = [r["config_lucky"] for r in lb if r["config_lucky"] is not None]
        out.update(
            reference_order=[r["model"] for r in lb], mean_config_lucky=sum(lucky) / len(lucky) if lucky else None
        )
    pairs = sections.get("pairs")
    if pairs is not None:
        shares = [p["fragile_share"] for p in pairs if p["fragile_share"] is not None]
        out.update(
            pairs=len(pairs),
            nonzero_gaps=sum(p["gap_items"] != 0 for p in pairs),
            # the paper's Table 9 count: printed gaps the robust items do not order (the pairs
            # section's ``manufactured`` is, since AUDITS v5, the harness cause alone)
            manufactured=sum(p["gap_items"] != 0 and bool(p["robust_tie"]) for p in pairs),
            mean_fragile_share=sum(shares) / len(shares) if shares else None,
        )
    ch = sections.get("champions")
    if ch:
        wins: dict[str, dict[str, Any]] = {}
        for row in ch["per_config"]:
            for m in row["winners"]:
                w = wins.setdefault(m, {"configs": 0, "outright": 0, "margins": []})
                w["configs"] += 1
                if len(row["winners"]) == 1:
                    w["outright"] += 1
                    w["margins"].append(row["margin_items"])
        champion_wins = {
            m: {
                "configs": w["configs"],
                "outright": w["outright"],
                "min_margin_items": min(w["margins"], default=0),
                "max_margin_items": max(w["margins"], default=0),
            }
            for m, w in sorted(wins.items())
        }
        ref_row = next((r for r in ch["per_config"] if r["config"] == reference), None)
        out.update(
            champion_count=ch["count"],
            champion_set=ch["set"],
            reference_winners=ref_row["winners"] if ref_row else [],
            champion_wins=champion_wins,
            top3_count=len(ch["top3"]),
            kendall_tau=dict(ch["kendall_tau"]),
        )
    comp = sections.get("compression")
    if comp:
        out.update(
            corr=comp["corr"],
            corr_ci=comp["ci"],
            mean_fragility_topk=comp["mean_fragility_topk"],
            mean_fragility_all=comp["mean_fragility_all"],
        )
    ax = sections.get("axes")
    if ax:
        out.update(
            axis_robust_mean=dict(ax["mean"]),
            axis_kendall_min=dict(ax["axis_kendall_min"]),
            most_destructive=dict(ax["most_destructive"]),
        )
    ident = sections.get("identified")
    if ident:
        out.update(robust_winner=ident.get("robust_winner"), tiers=ident.get("tiers"))
    return out


def _side(v: dict[str, Any]) -> bool | None:
    """Which side of its threshold a verdict's value sits on (a value exactly at the
    threshold counts as on or above it); None when either is missing."""
    val, thr = v.get("value"), v.get("threshold")
    if not isinstance(val, (int, float)) or not isinstance(thr, (int, float)):
        return None
    return exact(val) >= exact(thr)


def worst_status(vs: list[dict[str, Any]]) -> dict[str, str]:
    """check -> its worst status among ``vs``."""
    out: dict[str, str] = {}
    for v in vs:
        if v["check"] not in out or SEVERITY[v["status"]] > SEVERITY[out[v["check"]]]:
            out[v["check"]] = v["status"]
    return out


def compare(full: list[dict[str, Any]], reduced: list[dict[str, Any]]) -> dict[str, Any]:
    """Status changes, threshold crossings and appearing/disappearing verdicts between two
    verdict lists of the same checks (matched by verdict id). A crossing: the status is the
    same but the value moved to the other side of its threshold."""
    f = {v["id"]: v for v in full}
    r = {v["id"]: v for v in reduced}
    changes, crossings = [], []
    for vid, a in f.items():
        b = r.get(vid)
        if b is None:
            continue
        if a["status"] != b["status"]:
            changes.append({"check": a["check"], "id": vid, "before": a["status"], "after": b["status"]})
        elif _side(a) is not None and _side(b) is not None and _side(a) != _side(b):
            crossings.append(
                {
                    "check": a["check"],
                    "id": vid,
                    "status": a["status"],
                    "value_before": a["value"],
                    "value_after": b["value"],
                    "threshold": a["threshold"],
                }
            )
    wf, wr = worst_status(full), worst_status(reduced)
    check_status = {
        c: {"before": wf.get(c), "after": wr.get(c)} for c in sorted(set(wf) | set(wr)) if wf.get(c) != wr.get(c)
    }
    return {
        "status_changes": changes,
        "check_status": check_status,
        "crossings": crossings,
        "only_full": sorted(set(f) - set(r)),
        "only_reduced": sorted(set(r) - set(f)),
    }


def random_drop_shares(
    scope: Scope,
    checks: list[Check],
    full_v: list[dict[str, Any]],
    changes: list[dict[str, Any]],
    *,
    n_drop: int,
    draws: int,
    key: str,
    level: float = 0.05,
) -> tuple[list[tuple[int, int]], int]:
    """docs/spec/AUDITS.md v3, "mix is compared with random drops": for each changed verdict
    (``changes``), the share ``q`` of seeded random drops of ``n_drop`` pooled items under
    which it changes too.

    Only the checks owning those verdicts are recomputed (verdicts only). A verdict that
    does not exist under a drop (its pair is no longer adjacent) counts as changed. The
    drops come one by one from a generator keyed by (seed, "mix", "drops", benchmark),
    and a change stops being judged once it has ``ceil(level * draws)`` hits: from then on
    it cannot be specific (q < level), so the decision is the one all draws give; its q is
    then the share among the drops it was judged under (its check is not rerun once all
    of its changes are decided). Returns (q per change, drops made)."""
    full = scope.records
    before = {v["id"]: v["status"] for v in full_v}
    rerun = [c for c in checks if c.name in {ch["check"] for ch in changes}]
    rng = rng_for(scope.seed, "mix", "drops", key)
    kept_labels = label_codes(np.asarray(full.items.benchmark[full.items.benchmark != key], dtype=object))
    hits = np.zeros(len(changes), dtype=np.int64)
    seen = np.zeros(len(changes), dtype=np.int64)  # drops each change was judged under

    # v4: a change stops being judged once its Monte-Carlo p, (hits + 1) / (draws + 1), is above
    # its level whatever the remaining drops give: hits >= floor(level * (draws + 1)). The level
    # is the board's for a change of a passing or warning verdict, and 0.05 for a failing one
    # (mix warns when a failing verdict rests on b at 0.05 but not at the board's level)
    def enough_at(lv: float) -> int:
        return max(1, int(round(lv * 1e6)) * (draws + 1) // 1_000_000)

    enough = np.array([enough_at(max(level, SPECIFIC_Q) if ch.get("before") == FAIL else level) for ch in changes])
    done = 0
    while done < draws and np.any(hits < enough):
        sc = _random_drop(scope, rng, n_drop, kept_labels)
        # a check whose changes have all reached their ``enough`` is not rerun: their p is decided
        live = {ch["check"] for ch, h, e in zip(changes, hits, enough) if h < e}
        got: list[dict[str, Any]] = []
        for c in rerun:
            if c.name in live:
                got += _run(c, sc)
        now = {v["id"]: v["status"] for v in got}
        for j, ch in enumerate(changes):
            if ch["check"] in live and hits[j] < enough[j]:
                hits[j] += now.get(ch["id"]) != before[ch["id"]]
                seen[j] += 1
        done += 1
    return [(int(h), int(n)) for h, n in zip(hits.tolist(), seen.tolist())], done


def label_codes(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(names, codes): ``labels`` as small integers whose order is the names' order, so a
    stable sort of the codes is the stable sort of the labels (an object array sorts by
    Python comparisons: ~45% of a random drop's time on the paper-sized grid x4 items)."""
    names, codes = np.unique(labels, return_inverse=True)
    dtype = np.uint8 if names.size <= 1 << 8 else np.uint16 if names.size <= 1 << 16 else np.intp
    return names, codes.astype(dtype, copy=False)


def _random_drop(
    scope: Scope, rng: np.random.Generator, n_drop: int, labels: tuple[np.ndarray, np.ndarray]
) -> DropScope:
    """``n_drop`` pooled items dropped at random, the rest dealt at random to the remaining
    benchmarks' labels (``labels``: the labels left without the benchmark, as many as the
    items kept, as ``label_codes``), so the reduced set has the leave-one-out set's structure: the same
    benchmarks with the same sizes. A check that reads benchmark labels (pooled
    brittleness: Brittlebench's aggregate over benchmarks) then meets the same structure
    under a random drop as without the benchmark; under exchangeable benchmarks the two
    reduced sets have one distribution. Its tensor is copied only if a check reads it
    (``drop_scope``)."""
    full = scope.records
    N = full.shape[1]
    perm = rng.permutation(N)
    keep = perm[: N - n_drop]
    names, codes = labels
    dealt = codes[rng.permutation(codes.size)]
    order = np.argsort(dealt, kind="stable")  # items grouped by benchmark, as a Records keeps them
    return DropScope(
        full,
        keep[order],
        perm[N - n_drop :],
        names[dealt[order]],
        seed=scope.seed,
        n_boot=scope.n_boot,
        thresholds=scope.thresholds,
        alpha=scope.alpha,
    )


def _verdicts(check: Check, scope: Scope) -> list[dict[str, Any]]:
    reason = check.skip_reason(scope)
    if reason:  # as the auditor does: one skipped verdict per scope
        return [skipped(check.name, f"{check.name}[{scope.name}]", reason)]
    return check.judge(scope, scope.sections.get(check.section) if check.section else None)


#: a change is specific to the left-out benchmark when random drops of as many items
#: reproduce it in fewer than this share of draws (v3), divided by the number of
#: benchmarks left out in turn (``specific_level``: docs/audits.md, "mix against chance")
SPECIFIC_Q = 0.05


def board_draws(mix_draws: int, n_family: int) -> int:
    """Random drops per change: ``mix_draws``, or more when the board's level needs them: a
    Monte-Carlo p is at least 1/(draws + 1), so it can reach 0.05 / F only with draws >= 20 F - 1.
    A change stops being judged at its first hit once 0.05 (draws + 1) / F <= 1 (``enough_at``),
    so only a change that random drops (almost) never make runs them all."""
    return max(int(mix_draws), int(n_family) * 20 - 1 if n_family else int(mix_draws))


def family_size(n_verdicts: int, n_benchmarks: int) -> int:
    """AUDITS v5: mix's Bonferroni family, fixed before looking at the data: every pooled verdict
    of the rerun checks (``basis["verdicts"]``, the only ones ``compare`` can find changed) for
    every benchmark left out in turn."""
    return max(1, int(n_verdicts) * int(n_benchmarks))


def specific_level(n_family: int) -> float:
    """AUDITS v5: 0.05, Bonferroni-divided over the family ``family_size``: every candidate
    (pooled verdict, left-out benchmark) cell, whether or not it changed. v4 divided by the
    verdicts that did change (a family the data select: 6.7 % [5.2, 8.4] of null boards failed,
    review U2); v3 by the benchmarks only (20 % failed, review T1). Each cell's Monte-Carlo p is
    valid (1 when it does not change), so P(any false fail) <= F x 0.05 / F = 0.05."""
    return SPECIFIC_Q / max(1, n_family)


V4_RULE = "Bonferroni over every changed verdict of the board (AUDITS v4)"
V5_RULE = "Bonferroni over every pooled verdict x benchmark left out, fixed before the data (AUDITS v5)"


def _pct(q: float | None) -> str:
    return "n/a" if q is None else f"{q:.0%}"


def _run(check: Check, scope: Scope) -> list[dict[str, Any]]:
    """A check's section (unless it is skipped: v3) and verdicts in a reduced scope."""
    if check.section is not None and (check.skip_reason(scope) is None or check.section_when_skipped):
        scope.sections[check.section] = check.compute(scope)
    return _verdicts(check, scope)


def _signless(x: float | None) -> str:
    """fmt without a negative zero (a value rounded to 0 from below)."""
    return fmt(None if x is None else exact(x) + 0.0)


def _moved_text(key: str, a: Any, b: Any) -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        diff = [f"{k}: {a.get(k)} -> {b.get(k)}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        return f"{key} ({'; '.join(diff)})"
    if key.endswith("_sign"):
        return key.replace("_sign", "").replace("_", " ") + " changes sign"
    return f"{key.replace('_', ' ')} {a} -> {b}"


class Mix(Check):
    name = "mix"
    position = 130  # in the report: after the checks with a lower position
    title = "Mix: leave one benchmark out (Table 9, appendix A.9)"
    section = "mix"
    thresholds = {"mix_draws": 100}

    def applies_to(self, scope_name: str, records: Any) -> bool:
        return scope_name == POOLED and len(records.benchmarks) >= MIN_BENCHMARKS

    def cases(self, scope: Scope) -> list[tuple[str, str]]:
        return [(f"mix[{b}]", b) for b in scope.full.benchmarks]

    def rerun(self, scope: Scope) -> list[Check]:
        """The pooled checks that judge something (report-only sections and this check left out)."""
        from . import registry

        return [
            c
            for c in registry().values()
            if c.name != self.name and c.applies_to(POOLED, scope.records) and c.cases(scope)
        ]

    def basis(self, scope: Scope) -> dict[str, Any]:
        """What every leave-one-out set is compared with, read from the pooled scope's computed
        sections (JSON): the rerun checks, their pooled verdicts and Table 9's headline. The
        processes that compute the leave-one-out sets (``engine.parallel``) receive it from the
        one that computed the pooled scope instead of computing that scope again."""
        checks = self.rerun(scope)
        return {
            "checks": [c.name for c in checks],
            "verdicts": [v for c in checks for v in _verdicts(c, scope)],
            "full": headline_from_sections(
                scope.sections, scope.shape[1], list(scope.records.benchmarks), scope.keys[scope.ref]
            ),
        }

    def section_of(self, scope: Scope, basis: dict[str, Any], without: dict[str, Any]) -> dict[str, Any]:
        """The ``mix`` section from the basis and each benchmark's entry (``reduced_entry`` and ``drop_entry``; a
        worker judging one benchmark's set has that entry only). When no verdict changes, nothing
        is judged against a level and the section keeps its v4 form (level 0.05, ``mix_draws``),
        so those reports are unchanged; otherwise it records the family (AUDITS v5)."""
        total = sum(len(e["status_changes"]) for e in without.values())
        out = {
            "checks": list(basis["checks"]),
            "full": basis["full"],
            "without": {b: without[b] for b in scope.full.benchmarks if b in without},
            "draws": int(scope.thresholds.mix_draws),
            "specific_level": SPECIFIC_Q,
            "changes_total": total,
            "level_rule": V4_RULE,
        }
        if total:
            family = self.family(scope, basis)
            out.update(
                draws=board_draws(int(scope.thresholds.mix_draws), family),
                specific_level=specific_level(family),
                family=family,
                level_rule=V5_RULE,
            )
        return out

    def family(self, scope: Scope, basis: dict[str, Any]) -> int:
        """The board's Bonferroni family (``family_size``): every pooled verdict of the rerun checks
        for every benchmark left out."""
        return family_size(len(basis["verdicts"]), len(scope.full.benchmarks))

    def compute(self, scope: Scope) -> dict[str, Any]:
        """Every benchmark's reduced set first (its changed verdicts), then the random drops of
        each at the board's level: 0.05 over every pooled verdict x benchmark (AUDITS v5),
        with enough drops for a Monte-Carlo p to reach it (``board_draws``)."""
        basis = self.basis(scope)
        without = {b: self.reduced_entry(scope, b, lambda: basis) for b in scope.full.benchmarks}
        family = self.family(scope, basis)
        level, draws = specific_level(family), board_draws(int(scope.thresholds.mix_draws), family)
        for b, e in without.items():
            self.drop_entry(scope, b, e, basis, level=level, draws=draws)
        return self.section_of(scope, basis, without)

    def reduced_entry(self, scope: Scope, b: str, basis: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """One benchmark's entry of the section without its random drops: the pooled checks on
        the records without ``b``, compared with the pooled verdicts. Depends only on the
        records and the basis, asked for (``basis()``) once the reduced set's verdicts are
        computed."""
        checks = self.rerun(scope)
        ref_key = scope.keys[scope.ref]
        red = without_benchmark(scope.full, b)
        items_of(red.correct, scope.C, np.flatnonzero(scope.full.items.benchmark != b))
        sc = scope.on(red, POOLED, full=red)
        sc.verdicts_only = True  # its sections are only compared, never reported
        # the remaining benchmarks' items, as views of the pooled tensor: the pair counts
        # summed over items are theirs, already computed for the pooled scope
        sc.parts = [scope.records.scope(x).correct for x in scope.full.benchmarks if x != b]
        red_v = []
        for c in checks:
            if not c.applies_to(POOLED, red):
                continue
            red_v += _run(c, sc)
        h = headline_from_sections(sc.sections, red.shape[1], list(red.benchmarks), ref_key)
        released(red.correct)  # a view of the pooled tensor would keep its masks as long as the tensor
        got = basis()
        entry = compare(got["verdicts"], red_v)
        entry.update(items=int(red.shape[1]), headline=h, moved=moved(got["full"], h))
        return entry

    def drop_entry(
        self, scope: Scope, b: str, entry: dict[str, Any], basis: dict[str, Any], *, level: float, draws: int
    ) -> None:
        """The random drops of one benchmark's status changes, into ``entry`` (only verdicts'
        status changes are judged against random drops; a check's overall status that changes
        with no matched verdict changing is a moved fact, v3)."""
        if not entry["status_changes"]:
            return
        items_left = entry["items"]
        qv, made = random_drop_shares(
            scope,
            self.rerun(scope),
            basis["verdicts"],
            entry["status_changes"],
            n_drop=scope.shape[1] - items_left,
            draws=draws,
            key=b,
            level=level,
        )
        entry["drops"] = made
        for ch, (hits, seen) in zip(entry["status_changes"], qv):
            ch["q"] = hits / max(seen, 1)  # the share of drops judged under that change it too
            ch["p"] = (hits + 1) / (draws + 1)  # Monte-Carlo p; a lower bound when stopped early
            ch["drops_judged"] = seen
            ch["p_is_bound"] = seen < draws

    def judge(self, scope: Scope, section: dict[str, Any]) -> list[dict[str, Any]]:
        return [self.judge_one(scope, section, b) for b in scope.full.benchmarks]

    def judge_one(self, scope: Scope, section: dict[str, Any], b: str) -> dict[str, Any]:
        """The verdict ``mix[b]`` from the section's entry for ``b`` (the other entries unread)."""
        draws = section.get("draws", 0)
        level = section.get("specific_level", SPECIFIC_Q)
        e = section["without"][b]
        facts = [_moved_text(k, section["full"].get(k), e["headline"].get(k)) for k in e["moved"]]
        facts += [
            f"{c['id']} value {_signless(c['value_before'])} -> {_signless(c['value_after'])} crosses its "
            f"threshold {fmt(c['threshold'])}"
            for c in e["crossings"]
        ]
        facts += [
            f"{c} overall {st['before']} -> {st['after']} (verdicts appear or disappear)"
            for c, st in e["check_status"].items()
            if not any(x["check"] == c for x in e["status_changes"])
        ]
        if e["only_full"] or e["only_reduced"]:
            facts.append(
                f"verdicts that exist only with it: {', '.join(e['only_full'][:4]) or '-'}; only "
                f"without it: {', '.join(e['only_reduced'][:4]) or '-'}"
            )
        changes = [
            (c["id"], c["check"], f"{c['before']} -> {c['after']}", c.get("p"), c.get("p_is_bound", False), c["before"])
            for c in e["status_changes"]
        ]
        specific = [x for x in changes if x[3] is not None and not x[4] and x[3] <= level + 1e-15]
        # a run-failing pooled verdict that rests on b at the unadjusted level, not after the board's correction
        suggestive = [
            x for x in changes if x not in specific and x[5] == FAIL and x[3] is not None and x[3] <= SPECIFIC_Q
        ]
        changed = sorted({x[1] for x in specific})
        left = f"without {b} ({e['items']} items left)"
        n_drop = scope.shape[1] - e["items"]

        def p_txt(x: tuple) -> str:
            return f"p {'>= ' if x[4] else ''}{x[3]:.3f}" if x[3] is not None else "p n/a"

        if specific:
            status = FAIL
            shown = "; ".join(f"{x[0]} {x[2]} (random drops: {p_txt(x)})" for x in specific[:6])
            msg = (
                f"{left} {_changed(len(specific))} status, and random drops of the same {n_drop} items "
                f"change them so rarely (Monte-Carlo p <= {level:.2g}, Bonferroni over the board's "
                f"{section.get('family', len(changes))} pooled verdicts x benchmarks, {draws} drops): {shown}: the pooled conclusion rests on {b}"
            )
            margin = min(exact(min(x[3] for x in specific) - level), -1e-12)
        elif suggestive:
            status = WARN
            shown = "; ".join(f"{x[0]} {x[2]} ({p_txt(x)})" for x in suggestive[:6])
            msg = (
                f"{left} a pooled verdict that fails the run no longer fails, and random drops of as many items "
                f"({n_drop}) rarely do that (p <= {SPECIFIC_Q:g}), but not beyond the board's multiplicity "
                f"(level {level:.2g}): {shown}"
            )
            margin = -float(len(suggestive))
        else:
            status = PASS
            if changes:
                shown = "; ".join(f"{x[0]} {x[2]} ({p_txt(x)})" for x in changes[:6])
                msg = (
                    f"{left} {_changed(len(changes))} status, but random drops of the same {n_drop} items "
                    f"change them as often (Monte-Carlo p over {draws} seeded drops; a change is not judged "
                    f"further once p > the board's level {level:.2g} is certain, and its p is then a bound): "
                    f"{shown}: not specific to {b}"
                )
            elif facts:
                msg = f"{left} no pooled verdict changes status; for the record: "
            else:
                msg = f"{left} every pooled verdict keeps its status and no headline number crosses a threshold"
            margin = 0.0
        if facts:
            msg += ("; also: " if changes else "") + "; ".join(facts)
        ev = {
            "benchmark": b,
            "items_left": e["items"],
            "changed_checks": changed,
            "status_changes": e["status_changes"][:20],
            "specific": [x[0] for x in specific][:20],
            "p": {x[0]: x[3] for x in changes[:20]},
            "moved": e["moved"],
            "crossings": [c["id"] for c in e["crossings"]][:20],
        }
        value = len(specific)
        return make_verdict(self.name, f"mix[{b}]", status, value, 0, margin, msg[:1500], ev)

    def tables(self, name: str, s: dict[str, Any]) -> list[Table | Line]:
        m = s.get("mix")
        if not m:
            return []
        full = m["full"]
        status = {v["id"]: v["status"] for v in s.get("verdicts", []) if v["check"] == self.name}

        def row(label: str, h: dict[str, Any], st: Any, changed: str) -> list[Any]:
            kt = h.get("kendall_tau") or {}
            return [
                label,
                h["items"],
                st,
                changed,
                h.get("champion_count"),
                f"{h.get('manufactured')}/{h.get('nonzero_gaps')}",
                h.get("mean_fragile_share"),
                kt.get("mean"),
                kt.get("min"),
                h.get("corr"),
                Cell(ci_cell(h.get("corr_ci"), 2), "code"),
            ]

        rows = [row("(all benchmarks)", full, "-", "-")]
        for b, e in m["without"].items():
            changed = ", ".join(sorted({c["check"] for c in e["status_changes"]} | set(e["check_status"]))) or "-"
            rows.append(row(f"without {b}", e["headline"], Cell(status.get(f"mix[{b}]", "-"), "status"), changed))
        table = Table(
            "mix",
            "Leave one benchmark out (Table 9): the pooled headline numbers without each benchmark",
            [
                "item set",
                "items",
                "mix",
                "checks that change status",
                "champions",
                "manufactured / nonzero gaps",
                "mean fragile share",
                "Kendall tau mean",
                "min",
                "corr(disc, fragility)",
                "CI",
            ],
            rows,
            note="The pooled checks rerun on the records without one benchmark, with the pooled scope's "
            "random generators; mix fails when a pooled verdict changes status without the benchmark and random "
            "drops of as many items change it rarely "
            + (
                "(Monte-Carlo p <= 0.05 over every pooled verdict x benchmark, AUDITS v5)."
                if m.get("family")
                else "(Monte-Carlo p <= 0.05 over the board's changed verdicts)."
            ),
            widths={0: 26},
        )
        bad = [(b, status.get(f"mix[{b}]")) for b in m["without"] if status.get(f"mix[{b}]") in (WARN, FAIL)]
        shown = "; ".join(f"without {b}: {st}" for b, st in bad[:6])
        more = f"; and {len(bad) - 6} more benchmarks" if len(bad) > 6 else ""
        n_changed = sum(len(e["status_changes"]) for e in m["without"].values())
        text = "mix (leave one benchmark out): " + (
            shown + more
            if bad
            else "every pooled verdict keeps its status without any single benchmark"
            if not n_changed
            else f"{_changed(n_changed)} status without some benchmark, none beyond what random drops "
            "of as many items do"
        )
        return [table, Line("mix", text, detail="summary")]


CHECK = Mix()
