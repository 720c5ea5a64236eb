"""Verdicts on an incomplete grid (docs/audits.md, "Incomplete grids"; issue 44, item 2).

A verdict is **decided** when its status is the same whatever the missing cells hold: the
rules below use only bounds that count every unknown cell both ways (metrics/incomplete.py),
and a sufficient condition for each status, so a decided status is the full grid's status
by construction. Anything else is **undecided**: a warn with ``decided: false`` that names
the missing cells it depends on. Quantities no bound pins down are **estimated** from the
design's uniform random item sample (``collection_design.random_sample``), never from the
adaptively chosen cells.

Exact rules: ``band`` (spread bounds and a bound of Cochran's Q), ``ranking`` (the adjacent
pairs and every contradicting edge of the harness-averaged order, each pair's sign test at
its least and most favourable completion), ``champions`` (per-configuration winners from
accuracy bounds, challenges at their least and most favourable completion), ``axes`` (pass
and warn from bounds of each config's Kendall tau-b; a fail is never decided). Every other
check's verdict on an incomplete scope is undecided, with that reason.

``decide`` is called by the engine (engine/scope.py) only when the records have missing
cells: a complete grid's report is untouched.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..metrics import incomplete as inc
from ..records.missing import NOT_POSSIBLE
from ..metrics.exact import le_array as _le
from ..metrics.identified import holm_adjust
from ..metrics.incomplete import UNDECIDED
from .base import POOLED, Check, Scope
from .verdicts import FAIL, PASS, SKIP, WARN, exact

SHOWN_CELLS = 20  # (model, item, config) cells listed in an undecided verdict
DESIGN_KEY = "collection_design"


class Bounds:
    """One scope's bounds, computed once per scope (``bounds_of``)."""

    def __init__(self, sc: Scope):
        r = sc.records
        self.C = np.asarray(r.correct)
        self.miss = np.asarray(r.missing) if r.missing is not None else np.zeros(self.C.shape, np.int8)
        self.obs = self.miss == 0
        self.collectable = (self.miss != 0) & (self.miss != NOT_POSSIBLE)
        self.possible = inc.possible_configs(self.miss, self.C.shape)
        self.cnt_lo, self.cnt_hi = inc.count_bounds(self.C, self.miss)
        self.status = inc.robust_status(self.C, self.miss)
        self.col = np.count_nonzero(self.collectable, axis=1)  # (M, K) collectable cells per column
        self._columns: dict[int, tuple[dict[str, Any], np.ndarray]] = {}  # id(cells) -> (cells, columns)
        self.undecided: list[tuple[dict[str, Any], np.ndarray]] = []  # (verdict, its deciding columns)

    def cells(self, sc: Scope, mk: np.ndarray) -> dict[str, Any]:
        """The collectable missing cells of the (model, config) columns ``mk`` (M, K), on every
        item of the scope: their count and the first ``SHOWN_CELLS`` as [model, item, config]
        (item: ``benchmark/item_id`` in a pooled scope of several benchmarks). Every rule's
        deciding cells are whole columns, so counts and unions are (M, K) sums, never a scan
        of the grid; the columns are kept for ``to_decide`` (``note``)."""
        mk = np.asarray(mk, dtype=bool)
        n = int(self.col[mk].sum())
        out = {"count": n, "shown": self._shown(sc, mk) if n else []}
        self._columns[id(out)] = (out, mk)
        return out

    def _shown(self, sc: Scope, mk: np.ndarray) -> list[list[str]]:
        """The first ``SHOWN_CELLS`` collectable cells of the columns ``mk`` in (model, item,
        config) order: one model at a time, stopping once enough are found."""
        items = sc.records.items
        several = len(sc.records.benchmarks) > 1
        shown: list[list[str]] = []
        for m in np.flatnonzero((self.col * mk).any(axis=1)).tolist():
            hit = self.collectable[m] & mk[m][None, :]
            first = np.flatnonzero(hit.reshape(-1))[: SHOWN_CELLS - len(shown)]
            for i, k in zip(*(a.tolist() for a in np.unravel_index(first, hit.shape))):
                item = f"{items.benchmark[i]}/{items.item_id[i]}" if several else str(items.item_id[i])
                shown.append([sc.names[m], item, sc.keys[k]])
            if len(shown) >= SHOWN_CELLS:
                break
        return shown

    def all_cells(self, sc: Scope) -> dict[str, Any]:
        """``cells`` of every missing cell (the checks without an exact rule), once per scope."""
        if not hasattr(self, "_all"):
            self._all = self.cells(sc, np.ones(self.col.shape, dtype=bool))
        return self._all

    def note(self, v: dict[str, Any]) -> None:
        """Keep an undecided verdict with its deciding columns (for ``to_decide``); a verdict
        whose cells did not come from ``cells`` depends, for all we know, on every missing cell."""
        got = self._columns.get(id(v["evidence"]["deciding_cells"]))
        mk = got[1] if got is not None and got[0] is v["evidence"]["deciding_cells"] else None
        self.undecided.append((v, np.ones(self.col.shape, dtype=bool) if mk is None else mk))


def bounds_of(sc: Scope) -> Bounds:
    b = sc.__dict__.get("_incomplete_bounds")
    if b is None:
        b = sc.__dict__["_incomplete_bounds"] = Bounds(sc)
    return b


def is_incomplete(sc: Scope) -> bool:
    return sc.records.missing is not None and bool(np.asarray(sc.records.missing).any())


def decide(check: Check, sc: Scope, verdicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``verdicts`` of ``check`` on a scope of incomplete records, each decided or undecided.
    A scope whose own cells are all observed keeps its verdicts (``decided: true``)."""
    out = []
    complete = not is_incomplete(sc)
    for j, v in enumerate(verdicts):
        if v["status"] == SKIP:
            out.append(v)
        elif complete:
            out.append({**v, "decided": True})
        elif check.name in EXACT_RULES:
            out.append(EXACT_RULES[check.name](sc, v))
        else:
            b = bounds_of(sc)
            why = (
                f"the {check.name} check has no exact bound on an incomplete grid (docs/audits.md, "
                f"'Incomplete grids'); collecting the scope's missing cells decides it"
            )
            out.append(undecided(v, why, b.all_cells(sc)))
        if out[-1].get("decided") is False:
            bounds_of(sc).note(out[-1])
    _refresh_to_decide(sc)
    return out


def decided(v: dict[str, Any], status: str, why: str, value_bounds: tuple[float, float] | None) -> dict[str, Any]:
    """``v`` with the status every completion gives; value and margin are then bounds only."""
    out = {**v, "status": status, "decided": True, "value": None, "margin": None}
    out["message"] = f"{why} (decided on an incomplete grid: the same whatever the missing cells hold)"
    out["evidence"] = {"value_bounds": None if value_bounds is None else [float(x) for x in value_bounds]}
    return out


def undecided(
    v: dict[str, Any],
    why: str,
    cells: dict[str, Any],
    value_bounds: tuple[float, float] | None = None,
    estimate: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``v`` as an undecided warn: why, and the missing cells it depends on."""
    n = cells["count"]
    if n:
        shown = ", ".join(f"({m}, {i}, {k})" for m, i, k in cells["shown"])
        more = f" and {n - len(cells['shown'])} more" if n > len(cells["shown"]) else ""
        need = f"{n} missing cell{'s' if n != 1 else ''} would decide it: {shown}{more}"
    else:
        need = "no collectable cell decides it (the cells left are not possible for their models)"
    out = {**v, "status": WARN, "decided": False, "value": None, "margin": None}
    out["message"] = f"undecided on an incomplete grid: {why}; {need}"
    ev: dict[str, Any] = {"deciding_cells": cells}
    if value_bounds is not None:
        ev["value_bounds"] = [float(x) for x in value_bounds]
    if estimate is not None:
        ev["estimate"] = estimate
    out["evidence"] = ev
    return out


# band ---------------------------------------------------------------------------------


def _band(sc: Scope, v: dict[str, Any]) -> dict[str, Any]:
    b = bounds_of(sc)
    t = sc.thresholds
    model = v["id"][len(f"band[{sc.name}-") : -1]
    m = sc.names.index(model)
    if "_band_sides" not in sc.__dict__:  # every model's at once: Holm reads them all
        sc.__dict__["_band_sides"] = inc.band_sides(
            b.C, b.miss, b.possible, band_pass=t.band_pass, band_warn=t.band_warn, alpha=sc.alpha
        )
    sides = sc.__dict__["_band_sides"]
    s_lo, s_hi = float(sides.s_lo[m]), float(sides.s_hi[m])
    configs = [sc.keys[k] for k in np.flatnonzero(b.possible[m])]
    on = "" if len(configs) == sc.shape[2] else f" on its {len(configs)} possible configs ({', '.join(configs)})"
    span = f"{model}: spread between {s_lo:.3f} and {s_hi:.3f}{on}"
    if sides.is_pass[m]:
        return decided(v, PASS, f"{span}, at most {t.band_pass} whatever the missing cells", (s_lo, s_hi))
    if sides.is_fail[m]:
        why = f"{span}, above {t.band_warn}, and Cochran's Q is significant in every completion"
        return decided(v, FAIL, why, (s_lo, s_hi))
    if sides.is_warn[m]:
        why = f"{span}: above {t.band_pass}" + (
            f", at most {t.band_warn}" if _le(s_hi, t.band_warn) else ", and Cochran's Q is never significant"
        )
        return decided(v, WARN, why, (s_lo, s_hi))
    mask = np.zeros(b.col.shape, dtype=bool)  # (model, config) columns: model m's possible configs
    mask[m] = b.possible[m]
    why = f"{span} (pass <= {t.band_pass}, warn <= {t.band_warn}), so the missing cells decide its side"
    return undecided(v, why, b.cells(sc, mask), (s_lo, s_hi), _robust_estimate(sc, b, m))


# ranking ------------------------------------------------------------------------------


def _pair_bounds(b: Bounds, xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, ...]:
    """(x_above_lo, x_above_hi, y_above_lo, y_above_hi) per pair, each pair on the
    configurations both models have."""
    if b.possible.all():
        r_lo, r_hi = inc.right_count_bounds(b.C, b.miss)
        out = []
        step = max(1, (1 << 24) // max(1, b.C.shape[1]))
        for s in range(0, len(xs), step):
            x, y = xs[s : s + step], ys[s : s + step]
            out.append((*inc.above_bounds(r_lo, r_hi, x, y), *inc.above_bounds(r_lo, r_hi, y, x)))
        return tuple(np.concatenate([o[j] for o in out]) if out else np.zeros(0, np.int64) for j in range(4))
    res = np.zeros((4, len(xs)), dtype=np.int64)
    for j, (x, y) in enumerate(zip(xs.tolist(), ys.tolist())):
        ks = np.flatnonzero(b.possible[x] & b.possible[y])
        r_lo, r_hi = inc.right_count_bounds(b.C[[x, y]], b.miss[[x, y]], ks)
        two = np.array([0]), np.array([1])
        res[0, j], res[1, j] = (a[0] for a in inc.above_bounds(r_lo, r_hi, *two))
        res[2, j], res[3, j] = (a[0] for a in inc.above_bounds(r_lo, r_hi, *two[::-1]))
    return tuple(res)


def _edges(sc: Scope, b: Bounds, xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, ...]:
    """(xs above ys in every completion, in some completion, ys above xs in every, in some)
    per pair (xs, ys: every pair once): the harness-averaged order's edge (two-sided sign
    test, Holm over all pairs at alpha). A pair's p is largest where the counts are least
    favourable to the side that leads in every completion (1 when no side always leads), and
    smallest at the most favourable counts of either side; Holm's adjusted p-values are
    monotone in the raw ones, so Holm over the largest bounds each adjusted p from above and
    Holm over the smallest from below."""
    x_lo, x_hi, y_lo, y_hi = _pair_bounds(b, xs, ys)
    up_max, up_min = inc.sign_p_range(x_lo, x_hi, y_lo, y_hi)
    dn_max, dn_min = inc.sign_p_range(y_lo, y_hi, x_lo, x_hi)
    h_max = holm_adjust(np.minimum(up_max, dn_max))
    h_min = holm_adjust(np.minimum(up_min, dn_min))
    sure = _le(h_max, sc.alpha)
    # where a side leads, the pair's adjusted p is at least its raw p, itself at least that
    # side's most favourable p
    up_can = _le(np.maximum(h_min, up_min), sc.alpha) & (x_hi > y_lo)
    dn_can = _le(np.maximum(h_min, dn_min), sc.alpha) & (y_hi > x_lo)
    return sure & (x_lo > y_hi), up_can, sure & (y_lo > x_hi), dn_can


def _ranking(sc: Scope, v: dict[str, Any]) -> dict[str, Any]:
    b = bounds_of(sc)
    M = sc.shape[0]
    names = sc.names
    ref_counts = b.cnt_lo[:, sc.ref]  # the reference cells are all observed (engine refuses otherwise)
    iu, ju = np.triu_indices(M, k=1)
    up_sure, up_can, dn_sure, dn_can = _edges(sc, b, iu, ju)
    # a contradiction: x identified above y although y's reference score is higher
    against_up = ref_counts[ju] > ref_counts[iu]  # iu above ju would contradict
    against_dn = ref_counts[iu] > ref_counts[ju]
    sure_bad = (up_sure & against_up) | (dn_sure & against_dn)
    can_bad = (up_can & against_up) | (dn_can & against_dn)
    order = sc.order.tolist()
    adj = list(zip(order[:-1], order[1:]))
    pos = {(int(a), int(c)): j for j, (a, c) in enumerate(zip(iu.tolist(), ju.tolist()))}

    def edge(h: int, lo: int) -> tuple[bool, bool]:
        j = pos.get((h, lo))
        if j is not None:
            return bool(up_sure[j]), bool(up_can[j])
        j = pos[(lo, h)]
        return bool(dn_sure[j]), bool(dn_can[j])

    ties = [(h, lo) for h, lo in adj if ref_counts[h] == ref_counts[lo]]
    state = [edge(h, lo) for h, lo in adj]
    sure_ok = sum(1 for (h, lo), (s, _) in zip(adj, state) if s and ref_counts[h] != ref_counts[lo])
    can_ok = sum(1 for (h, lo), (_, c) in zip(adj, state) if c and ref_counts[h] != ref_counts[lo])
    n = len(adj)
    vb = (exact(sure_ok / n), exact(can_ok / n)) if n else (1.0, 1.0)
    basis = "the harness-averaged sign test (Holm; the ranking check's own test, not the board's rank intervals)"
    if sure_bad.any():
        j = int(np.flatnonzero(sure_bad)[0])
        x, y = (iu[j], ju[j]) if (up_sure[j] and against_up[j]) else (ju[j], iu[j])
        why = (
            f"the printed order contradicts {basis} in every completion: {names[y]} is printed above "
            f"{names[x]} but {names[x]} is identified above it ({int(sure_bad.sum())} such pair(s))"
        )
        return decided(v, FAIL, why, vb)
    undecided_pairs: list[tuple[int, int]] = []
    if can_bad.any():
        for j in np.flatnonzero(can_bad).tolist():
            undecided_pairs.append((int(iu[j]), int(ju[j])))
        why = f"{len(undecided_pairs)} pair(s) could contradict the printed order, depending on the missing cells"
    elif ties:
        why = f"{len(ties)} of {n} adjacent pairs are printed ties (equal reference scores) and no pair can contradict the printed order"
        return decided(v, WARN, why, vb)
    elif all(s for s, _ in state):
        return decided(v, PASS, f"{basis} separates every one of the {n} adjacent pairs in every completion", vb)
    elif any(not c for _, c in state):
        miss = [f"{names[h]} > {names[lo]}" for (h, lo), (_, c) in zip(adj, state) if not c]
        why = f"{len(miss)} of {n} adjacent pairs are separated in no completion ({', '.join(miss[:5])})"
        return decided(v, WARN, why, vb)
    else:
        undecided_pairs = [(h, lo) for (h, lo), (s, _) in zip(adj, state) if not s]
        shown = ", ".join(f"{names[h]} > {names[lo]}" for h, lo in undecided_pairs[:5])
        why = f"{len(undecided_pairs)} of {n} adjacent pairs are separated in some completions only ({shown})"
    mask = np.zeros(b.col.shape, dtype=bool)  # (model, config) columns
    for h, lo in undecided_pairs:
        both = b.possible[h] & b.possible[lo]
        mask[h] |= both
        mask[lo] |= both
    return undecided(v, why, b.cells(sc, mask), vb)


# champions ----------------------------------------------------------------------------


def _champions(sc: Scope, v: dict[str, Any]) -> dict[str, Any]:
    b = bounds_of(sc)
    M, _, K = sc.shape
    names, ref = sc.names, sc.ref
    items = sc.thresholds.champion_items
    lo = np.where(b.possible, b.cnt_lo, -1)
    hi = np.where(b.possible, b.cnt_hi, -1)
    others_hi = _others_max(hi)
    sure_win = b.possible & (lo >= others_hi)  # a winner (ties win) in every completion
    strict = b.possible & (lo > others_hi)  # the only winner in every completion
    vb = None
    sole = [m for m in range(M) if strict[m].all()]
    if sole:
        why = f"one champion ({names[sole[0]]}) under every config in every completion"
        return decided(v, PASS, why, vb)
    not_pass = len({m for m in range(M) if sure_win[m].any()}) > 1
    can_ref = [r for r in range(M) if hi[r, ref] >= lo[:, ref].max()]
    live = [k for k in range(K) if k != ref]
    # FAIL in every completion: a certain sole reference winner r beaten under k beyond item
    # sampling. The family is then fixed, (K - 1)(M - 1) challenges, and Holm over each one's
    # largest p bounds its adjusted p from above (Holm is monotone in the raw p-values)
    if len(can_ref) == 1 and strict[can_ref[0], ref]:
        r = can_ref[0]
        cand = [(m, k) for m in range(M) if m != r for k in live]
        p_max = np.ones(len(cand))
        leads = np.zeros(len(cand), dtype=bool)
        for j, (m, k) in enumerate(cand):
            if b.possible[m, k] and b.possible[r, k]:
                a_lo, _, _, b_hi = _mcnemar(b, m, r, k)
                p_max[j] = float(inc.sign_p_range(a_lo, a_lo, b_hi, b_hi)[0][0])
                leads[j] = lo[m, k] - hi[r, k] > items
        hit = np.flatnonzero(leads & _le(holm_adjust(p_max), sc.alpha))
        if hit.size:
            m, k = cand[int(hit[0])]
            why = (
                f"under {sc.keys[k]}, {names[m]} beats the reference winner {names[r]} by more than "
                f"{items:g} items beyond item sampling in every completion ({hit.size} such challenge(s))"
            )
            return decided(v, FAIL, why, vb)
    # no challenge can be real in any completion
    open_cells = np.zeros(b.col.shape, dtype=bool)  # (model, config) columns
    can_real = False
    for m in range(M):
        for k in live:
            if not b.possible[m, k]:
                continue
            for r in can_ref:
                if r == m or not b.possible[r, k]:
                    continue
                if hi[m, k] - lo[r, k] <= items:
                    continue
                _, a_hi, b_lo, _ = _mcnemar(b, m, r, k)
                if not _le(inc.sign_p_range(a_hi, a_hi, b_lo, b_lo)[1][0], sc.alpha):
                    continue
                can_real = True
                open_cells[[m, r], k] = True
    if not_pass and not can_real:
        why = "more than one champion in every completion, and no configuration's winner can beat the reference winner beyond item sampling"
        return decided(v, WARN, why, vb)
    # cells that bear on it: every model's cells under a config it could still win
    could_win = b.possible & (hi >= np.where(b.possible, lo, -1).max(axis=0, keepdims=True))
    open_cells |= could_win
    parts = []
    if not not_pass:
        parts.append("whether one model wins every config")
    if can_real:
        parts.append("whether a configuration's winner beats the reference winner beyond item sampling")
    why = " and ".join(parts) + " depends on the missing cells"
    return undecided(v, why, b.cells(sc, open_cells), vb)


def _others_max(a: np.ndarray) -> np.ndarray:
    """(M, K): per model and config, the largest value of the other models (-1 when none)."""
    M = a.shape[0]
    if M < 2:
        return np.full(a.shape, -1)
    top = np.argmax(a, axis=0)
    best = a.max(axis=0)
    second = np.where(np.arange(M)[:, None] == top[None, :], -1, a).max(axis=0)
    return np.where(np.arange(M)[:, None] == top[None, :], second[None, :], best[None, :])


def _mcnemar(b: Bounds, m: int, r: int, k: int) -> tuple[np.ndarray, ...]:
    """(a_lo, a_hi, b_lo, b_hi) under config k: items only m gets right (a) and only r gets
    right (b), fewest and most over every completion."""
    om, orr = b.obs[m, :, k], b.obs[r, :, k]
    cm, cr = b.C[m, :, k], b.C[r, :, k]
    m_right, m_wrong = om & cm, om & ~cm
    r_right, r_wrong = orr & cr, orr & ~cr
    a_lo = int((m_right & r_wrong).sum())
    a_hi = int((~m_wrong & ~r_right).sum())
    b_lo = int((r_right & m_wrong).sum())
    b_hi = int((~r_wrong & ~m_right).sum())
    return np.array([a_lo]), np.array([a_hi]), np.array([b_lo]), np.array([b_hi])


# axes ---------------------------------------------------------------------------------


def _axes(sc: Scope, v: dict[str, Any]) -> dict[str, Any]:
    """pass: every single axis's configs keep tau-b >= ``axes_pass`` in every completion; warn:
    some config's tau is below ``axes_pass`` in every completion and none can fall below
    ``axes_warn`` (so no axis can fail, whatever its interaction test says); else undecided
    (a fail also needs the interaction test, which is not bounded here)."""
    from ..metrics import axes as axes_m

    b = bounds_of(sc)
    t = sc.thresholds
    groups = axes_m.axis_groups(sc.records.grid)
    ks = sorted({k for a in axes_m.single_axes(groups) for k in groups[a] if k != sc.ref})
    x = b.cnt_lo[:, sc.ref]
    lows, highs = [], []
    for k in ks:
        has = b.possible[:, k]
        got = inc.kendall_tau_bounds(x[has], b.cnt_lo[has, k], b.cnt_hi[has, k])
        if got is None:
            lows = []
            break
        lows.append(got[0])
        highs.append(got[1])
    mask = np.zeros(b.col.shape, dtype=bool)  # (model, config) columns
    mask[:, ks] = True
    if lows:
        vb = (min(lows), min(highs))
        span = f"the least Kendall tau of a single axis's configs lies between {vb[0]:.2f} and {vb[1]:.2f}"
        if bool(_le(t.axes_pass, vb[0])):
            return decided(v, PASS, f"{span}: every single axis keeps the order (pass >= {t.axes_pass})", vb)
        if not bool(_le(t.axes_pass, vb[1])) and bool(_le(t.axes_warn, vb[0])):
            why = f"{span}: below {t.axes_pass}, never below {t.axes_warn}, so no axis can fail"
            return decided(v, WARN, why, vb)
        why = f"{span} (pass >= {t.axes_pass}, warn >= {t.axes_warn}; a fail also needs the interaction test)"
        return undecided(v, why, b.cells(sc, mask), vb)
    why = (
        "a Kendall tau of some single axis's config can be undefined (every model tied), depending on the missing cells"
    )
    return undecided(v, why, b.cells(sc, mask))


# estimates ----------------------------------------------------------------------------


def sample_items(sc: Scope) -> np.ndarray | None:
    """The scope's items in the design's uniform random sample (None: no design recorded)."""
    d = sc.records.grid.extra.get(DESIGN_KEY)
    if not isinstance(d, dict) or not isinstance(d.get("random_sample"), dict):
        return None
    ids = d["random_sample"].get("item_ids") or {}
    items = sc.records.items
    want = {(str(bn), str(i)) for bn, lst in ids.items() for i in lst}
    return np.array(
        [j for j in range(len(items)) if (str(items.benchmark[j]), str(items.item_id[j])) in want], dtype=np.intp
    )


def _robust_estimate(sc: Scope, b: Bounds, m: int) -> dict[str, Any] | None:
    """Model m's robust accuracy from the random sample (``robust_estimates``)."""
    est = robust_estimates(sc)
    return None if est is None else {"robust": est["robust_accuracy"][sc.names[m]], "items": est["items"]}


def robust_estimates(sc: Scope) -> dict[str, Any] | None:
    """Per model, robust accuracy estimated from the design's random sample with its 95%
    interval (Wilson, finite-population corrected), the interval cut to the exact bounds (the
    value always lies in them, so the cut interval covers at least as often). Only sampled
    items every one of whose cells was observed enter: a sampled cell that failed is not a
    random omission."""
    cached = sc.__dict__.get("_incomplete_estimates", False)
    if cached is not False:
        return cached
    out = None
    sample = sample_items(sc)
    if sample is not None and sample.size:
        b = bounds_of(sc)
        N = sc.shape[1]
        lo_b, hi_b = inc.robust_accuracy_bounds(b.status)
        rows = {}
        for m in range(sc.shape[0]):
            est, lo, hi = inc.srs_interval(sample_values(b, m, sample), N)
            rows[sc.names[m]] = [
                float(est) if np.isfinite(est) else None,
                float(np.clip(lo, lo_b[m], hi_b[m])),
                float(np.clip(hi, lo_b[m], hi_b[m])),
            ]
        out = {"items": int(sample.size), "robust_accuracy": rows}
    sc.__dict__["_incomplete_estimates"] = out
    return out


def sample_values(b: Bounds, m: int, sample: np.ndarray) -> np.ndarray:
    """Model m's robust indicator on the sampled items whose cells (on its possible configs)
    were all observed: the values the design-based estimate averages."""
    ks = np.flatnonzero(b.possible[m])
    full = sample[b.obs[m][sample][:, ks].all(axis=1)]
    return b.C[m][full][:, ks].all(axis=1)


def incomplete_section(sc: Scope) -> dict[str, Any]:
    """The scope's ``incomplete`` section: what is missing, the robust statuses known, each
    model's configurations when some are not possible, and the design-based estimates."""
    b = bounds_of(sc)
    M, N, K = sc.shape
    miss = b.miss
    out: dict[str, Any] = {
        "cells": int(M * N * K),
        "missing": int((miss != 0).sum()),
        "not_possible": int((miss == NOT_POSSIBLE).sum()),
        "robust_status_known": int((b.status != UNDECIDED).sum()),
        "pairs": int(M * N),
        "rules": "docs/audits.md, 'Incomplete grids'",
    }
    lo, hi = inc.robust_accuracy_bounds(b.status)
    out["robust_accuracy_bounds"] = {sc.names[m]: [float(lo[m]), float(hi[m])] for m in sc.order.tolist()}
    partial = {sc.names[m]: [sc.keys[k] for k in np.flatnonzero(b.possible[m])] for m in range(M)}
    out["compared_on"] = {m: ks for m, ks in partial.items() if len(ks) < K}
    est = robust_estimates(sc)
    if est is not None:
        out["estimates"] = {**est, "design": "uniform random item sample (collection_design.random_sample)"}
    out["to_decide"] = sc.__dict__["_to_decide"] = to_decide(sc)
    return out


def to_decide(sc: Scope) -> dict[str, Any]:
    """What the rest would cost: the distinct collectable missing cells (``not_possible`` left
    out) that decide every undecided verdict of the scope, the union of their deciding cells;
    its share of the grid; each verdict's own count. Each verdict's deciding cells are whole
    (model, config) columns on the scope's items, so the union is an (M, K) OR and its size a
    sum of per-column counts. ``not_deciding``: the collectable cells in no verdict's columns,
    per model and config (only when there are some): the report-level total needs them
    (``report_to_decide``)."""
    b = bounds_of(sc)
    M, N, K = sc.shape
    union = np.zeros(b.col.shape, dtype=bool)
    for _, mk in b.undecided:
        union |= mk
    n = int(b.col[union].sum())
    out: dict[str, Any] = {
        "cells": n,
        "share": n / (M * N * K),
        "undecided": len(b.undecided),
        "by_verdict": {str(v["id"]): int(v["evidence"]["deciding_cells"]["count"]) for v, _ in b.undecided},
    }
    rest = np.where(union, 0, b.col)
    if rest.any():
        out["not_deciding"] = {
            "count": int(rest.sum()),
            "columns": {
                sc.names[m]: {sc.keys[k]: int(rest[m, k]) for k in np.flatnonzero(rest[m]).tolist()}
                for m in np.flatnonzero(rest.any(axis=1)).tolist()
            },
        }
    return out


def _refresh_to_decide(sc: Scope) -> None:
    """Verdicts decided after the scope's section was written (the leave-one-benchmark-out
    check, run apart by engine/parallel.py) join its ``to_decide``: updated in place, so every
    copy of the section holding the same dict sees them."""
    got = sc.__dict__.get("_to_decide")
    if got is not None:
        new = to_decide(sc)
        got.clear()
        got.update(new)


def report_to_decide(report: dict[str, Any]) -> dict[str, Any] | None:
    """Across the report's scopes, the distinct collectable missing cells that decide every
    undecided verdict, and their share of the grid (None: a report without ``to_decide``, or
    whose scopes do not cover the pooled items, where no exact total can be read).

    The pooled scope holds every item and each benchmark's scope a part of them, so a cell
    decides no verdict anywhere only when neither the pooled scope's nor its benchmark's
    verdicts need its (model, config) column: those cells are counted from the two
    ``not_deciding`` tables."""
    scopes = report.get("scopes") or {}
    secs = {n: s["incomplete"] for n, s in scopes.items() if isinstance(s.get("incomplete"), dict)}
    if not secs or any("to_decide" not in x for x in secs.values()):
        return None
    pooled = secs.get(POOLED)
    if pooled is None:  # benchmark scopes only: disjoint items
        cells = sum(int(x["to_decide"]["cells"]) for x in secs.values())
        grid = sum(int(x["cells"]) for x in secs.values())
        every = all(int(x["to_decide"]["cells"]) == int(x["missing"]) - int(x["not_possible"]) for x in secs.values())
        np_ = sum(int(x["not_possible"]) for x in secs.values())
        return {
            "cells": cells,
            "share": cells / grid if grid else 0.0,
            "every_missing_cell": every,
            "not_possible": np_,
        }
    collectable = int(pooled["missing"]) - int(pooled["not_possible"])
    left = (pooled["to_decide"].get("not_deciding") or {}).get("columns") or {}
    nowhere = 0
    if left:
        parts = [s for n, s in scopes.items() if n != POOLED]
        if sum(int(s.get("n_items", 0)) for s in parts) != int(scopes[POOLED].get("n_items", -1)):
            return None
        for s in parts:
            mine = (((s.get("incomplete") or {}).get("to_decide") or {}).get("not_deciding") or {}).get("columns") or {}
            nowhere += sum(n for m, ks in mine.items() for k, n in ks.items() if k in left.get(m, {}))
    cells = collectable - nowhere
    return {
        "cells": cells,
        "share": cells / int(pooled["cells"]),
        "every_missing_cell": nowhere == 0,
        "not_possible": int(pooled["not_possible"]),
    }


def to_decide_phrase(report: dict[str, Any], n_undecided: int) -> str:
    """The "incomplete grid:" line's cost of the rest (reports/next_steps.py), with its leading
    "; ": how many cells decide all ``n_undecided`` verdicts; "" when none is undecided or the
    report cannot say exactly."""
    got = report_to_decide(report) if n_undecided else None
    if got is None:
        return ""
    if not got["cells"]:
        return "; no collectable cell decides them (the cells left are not possible for their models)"
    kind = "collectable" if got["not_possible"] else "missing"  # not-possible cells can never be collected
    what = (
        f"the remaining {got['cells']:,} {kind} cells"
        if got["every_missing_cell"]
        else f"{got['cells']:,} of the {kind} cells"
    )
    return (
        f"; to decide all {n_undecided} undecided verdict{'s' if n_undecided != 1 else ''}, collect {what} "
        f"({_share(got['share'])} of the grid)"
    )


def _share(x: float) -> str:
    """A share as a percentage: whole above 10%, one decimal below (and where 100% would overstate)."""
    if 0 < x < 0.0005:
        return "<0.1%"  # a few cells of a big grid are not "0.0%"
    return f"{x:.0%}" if 0.1 <= x and (x == 1 or f"{x:.0%}" != "100%") else f"{x:.1%}"


#: the checks with an exact rule on incomplete grids (docs/audits.md, "Incomplete grids")
EXACT_RULES = {"band": _band, "ranking": _ranking, "champions": _champions, "axes": _axes}

__all__ = [
    "EXACT_RULES",
    "bounds_of",
    "decide",
    "incomplete_section",
    "is_incomplete",
    "report_to_decide",
    "robust_estimates",
    "sample_items",
    "to_decide",
    "to_decide_phrase",
]
