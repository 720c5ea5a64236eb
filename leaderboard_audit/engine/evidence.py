"""Report additions that need the whole Records (computed where they are loaded; no rendering).

* ``legend(records)``: the full harness legend (every config's key, scoring,
  template, ordering, permutation and any extra field: template text, decoding
  parameters...), plus the grid's own extra fields.
* ``pair_evidence(records, scope, pair)``: for a pair whose printed gap the robust items
  do not order (manufactured by the harness, not decidable, or sampling: its ``cause``), the items that
  carry its gap: items that are *not* jointly robust (fragile for at least one of
  the two) where the two models differ under the reference config, with the
  question text when the records carry it. Capped (``EVIDENCE_CAP``), counts exact.
* ``enrich_report(report, records, ...)``: adds ``legend``, each such pair's
  ``fragile_evidence`` (the gate's ``submission_audit``: ``submission.with_gate``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..metrics.per_model import robust_masks, sharing
from ..records import Records
from .scopes import scope_records

EVIDENCE_CAP = 20
QUESTION_CHARS = 400


def legend(records: Records) -> dict[str, Any]:
    g = records.grid.to_json()
    g["inferred"] = bool(records.grid.inferred)
    return g


def _question(q: Any) -> str | None:
    if q is None:
        return None
    q = str(q)
    return q if len(q) <= QUESTION_CHARS else q[: QUESTION_CHARS - 1] + "…"


def pair_evidence(records: Records, scope: str, higher: str, lower: str, cap: int = EVIDENCE_CAP) -> dict[str, Any]:
    """The fragile items on which ``higher`` and ``lower`` differ under the reference."""
    return _pair_evidence(scope_records(records, scope), higher, lower, cap)


def _pair_evidence(r: Records, higher: str, lower: str, cap: int) -> dict[str, Any]:
    C = r.correct
    ref = r.grid.reference_index
    K = C.shape[2]
    h, l = r.models.index(higher), r.models.index(lower)
    rc, rw, _ = robust_masks(C)  # once per scope view (shared by its pairs)
    fragile = ~((rc[h] | rw[h]) & (rc[l] | rw[l]))
    h_ref, l_ref = C[h, :, ref], C[l, :, ref]
    fav_h = np.flatnonzero(fragile & h_ref & ~l_ref)
    fav_l = np.flatnonzero(fragile & l_ref & ~h_ref)
    items = []
    for side, idx in (("higher", fav_h), ("lower", fav_l)):
        for i in idx[: max(0, cap - len(items))].tolist():
            items.append(
                {
                    "item_id": str(r.items.item_id[i]),
                    "benchmark": str(r.items.benchmark[i]),
                    "question": _question(r.items.question[i]),
                    "favours": side,
                    "higher_configs": int(C[h, i].sum()),
                    "lower_configs": int(C[l, i].sum()),
                    "configs": K,
                }
            )
    return {
        "higher_right": int(fav_h.size),
        "lower_right": int(fav_l.size),
        "net_items": int(fav_h.size) - int(fav_l.size),
        "shown": len(items),
        "cap": cap,
        "rule": "items not robust for both models where the two differ under the reference config; "
        "higher_configs / lower_configs = configs under which each model gets the item right",
        "items": items,
    }


def scope_pair_evidence(
    records: Records, scope: str, pairs: list[dict[str, Any]], cap: int = EVIDENCE_CAP
) -> list[dict[str, Any] | None]:
    """Per pair of ``scope``'s ``pairs`` section, in its order, the evidence
    ``add_pair_evidence`` attaches (None: none). Under xdist the worker that computed the
    scope sends it, so the controller reads no tensor for it."""
    out: list[dict[str, Any] | None] = []
    r = None
    for p in pairs:
        ev = None
        if p.get("manufactured") or p.get("cause"):  # v5: every printed gap the robust items do not order
            r = scope_records(records, scope) if r is None else r
            ev = _pair_evidence(r, p["higher"], p["lower"], cap)
            if not (ev["higher_right"] + ev["lower_right"] or p.get("cause") != "sampling"):
                ev = None  # a sampling pair without fragile items has nothing to show
        out.append(ev)
    return out


def add_pair_evidence(
    report: dict[str, Any],
    records: Records,
    cap: int = EVIDENCE_CAP,
    known: dict[str, list[dict[str, Any] | None]] | None = None,
) -> None:
    """Each unordered pair's (a ``cause``) ``fragile_evidence`` (``scope_pair_evidence``); ``known``:
    scope -> that scope's evidence, computed already (by an xdist worker) for the same pairs
    in the same order, used as it is."""
    for scope, s in report.get("scopes", {}).items():
        pairs = s.get("pairs", [])
        got = known.get(scope) if known else None
        if got is None or len(got) != len(pairs):
            got = scope_pair_evidence(records, scope, pairs, cap)
        for p, ev in zip(pairs, got):
            if ev is not None:
                p["fragile_evidence"] = ev


def enrich_report(
    report: dict[str, Any],
    records: Records,
    *,
    seed: int | None = None,
    n_boot: int | None = None,
    thresholds: Any = None,
    known_evidence: dict[str, list[dict[str, Any] | None]] | None = None,
) -> dict[str, Any]:
    """Add what needs the Records to a built report (in place; also returned). The
    submission gate adds its own part (``submission.with_gate``); ``seed``, ``n_boot`` and
    ``thresholds`` are accepted for the callers' signature and not needed here;
    ``known_evidence``: pair evidence already computed, by scope (``add_pair_evidence``)."""
    report["legend"] = legend(records)
    with sharing():  # a scope's robust masks once for all of its pairs
        add_pair_evidence(report, records, known=known_evidence)
    return report


__all__ = ["EVIDENCE_CAP", "add_pair_evidence", "enrich_report", "legend", "pair_evidence", "scope_pair_evidence"]
