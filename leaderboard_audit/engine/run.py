"""The audit as a library: records -> report-v1 dict (docs/audits.md, "Report").

``audit(records)`` runs every scope (``scope.audit_scope_computed``), serially or in
``workers`` processes (``parallel``), then adds what needs the records (``evidence``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from typing import Any

from ..checks import POOLED, Scope, Thresholds
from ..metrics.per_model import DerivedCache, sharing
from ..records import Records
from ..settings import DEFAULT_ALPHA, DEFAULT_BOOT, DEFAULT_SEED
from .scope import (
    audit_scope_computed,
    case_ids_by_scope,
)
from .scopes import alias_of, scopes_of

REPORT_FORMAT = "leaderboard-audit/report-v1"


def audit_scopes(
    records: Records,
    names: Sequence[str] | None = None,
    *,
    workers: int = 1,
    cache: DerivedCache | None = None,
    evidence: dict[str, list[Any]] | None = None,
    **kw: Any,
) -> dict[str, dict[str, Any]]:
    """Several scopes, each distinct item set computed once (``alias_of``), sharing what they
    derive in ``cache`` (the audit's; default a new one). ``workers`` > 1: in that many forked
    processes (``engine.parallel``: the same bytes); ``evidence``, if given, receives the pair
    evidence the processes computed, by scope (``evidence.enrich_report``'s ``known_evidence``)."""
    cache = cache if cache is not None else DerivedCache()
    wanted = list(names) if names is not None else scopes_of(records)
    with sharing(cache):  # the scopes share what they derive from the same memory
        ids = case_ids_by_scope(records)
        if workers > 1 and len(records.benchmarks) > 1:
            from .parallel import can_fork, parallel_scopes

            if can_fork():
                got, ev = parallel_scopes(records, wanted, workers=workers, ids=ids, cache=cache, kw=kw)
                if evidence is not None:
                    evidence.update(ev)
                return {s: got[s] for s in wanted}
        done: dict[str, tuple[dict[str, Any], Scope]] = {}
        # compute aliases' targets first so ``pooled`` can reuse its single benchmark
        for s in sorted(wanted, key=lambda s: alias_of(records, s) != s):
            target = alias_of(records, s)
            if target != s and target not in done:
                done[target] = audit_scope_computed(records, target, ids=ids.get(target), cache=cache, **kw)
            shared = done[target][1] if target != s else None
            done[s] = audit_scope_computed(records, s, ids=ids.get(s), shared=shared, cache=cache, **kw)
        return {s: done[s][0] for s in wanted}


def records_summary(records: Records, path: str | None = None, sha256: str | None = None) -> dict[str, Any]:
    return {
        "path": path if path is not None else records.source,
        "sha256": sha256,
        "models": list(records.models),
        "items": int(records.shape[1]),
        "configs": list(records.grid.keys),
        "benchmarks": list(records.benchmarks),
        "reference": records.grid.reference,
        "legend_inferred": records.grid.inferred,
        "dropped": dict(records.dropped),
        "notes": list(records.notes),
        "layout_notes": list(getattr(records, "layout_notes", ())),
    }


def build_report(
    summary: dict[str, Any],
    scopes: dict[str, dict[str, Any]],
    *,
    seed: int,
    n_boot: int,
    thresholds: Thresholds,
    order: Iterable[str] | None = None,
) -> dict[str, Any]:
    names = list(order) if order is not None else sorted(scopes, key=lambda s: (s != POOLED, s))
    return {
        "format": REPORT_FORMAT,
        "seed": seed,
        "bootstrap": n_boot,
        "thresholds": thresholds.as_dict(),
        "records": summary,
        "scopes": {s: scopes[s] for s in names if s in scopes},
    }


def audit(
    records: Records | str | os.PathLike,
    *,
    seed: int = DEFAULT_SEED,
    n_boot: int = DEFAULT_BOOT,
    thresholds: Thresholds | None = None,
    path: str | None = None,
    alpha: float = DEFAULT_ALPHA,
    workers: int = 1,
    format: str = "auto",
    mapping: str | None = None,
    metric: str | None = None,
) -> dict[str, Any]:
    """Audit every scope of ``records``; returns the report-v1 dict (the plugin's JSON).

    ``records``: loaded ``Records``, or a path as ``pytest --audit`` takes it (a records-v1
    folder, a CSV/TSV/Parquet table or the folder holding it, a packed file, or another
    harness's runs with ``format=`` and ``mapping=``/``metric=``). The report's tables:
    ``report["scopes"][scope]`` holds each check's section (``"pairs"``, ``"leaderboard"``,
    ...) as lists of row dicts, so ``pandas.DataFrame(report["scopes"]["pooled"]["pairs"])``
    is the adjacent-pair table; ``report["scopes"][scope]["verdicts"]`` the verdicts
    (docs/reports.md). ``workers`` > 1 computes the scopes in that many forked processes
    (the same bytes)."""
    if isinstance(records, (str, os.PathLike)):
        from .sources import load_for_audit

        path = str(records) if path is None else path
        records = load_for_audit(str(records), format, mapping=mapping, metric=metric)
    from ..records.missing import refuse_incomplete

    refuse_incomplete(records, path or records.source or "records")  # reference cells missing only
    t = thresholds or Thresholds()
    sha = None
    if path is not None:
        from ..records.fingerprint import sha256_of

        sha = sha256_of(path)
    from .evidence import enrich_report  # legend and the items behind each pair's gap

    cache = DerivedCache()  # this audit's: every scope and the evidence, gone with the call
    known: dict[str, list[Any]] = {}
    scopes = audit_scopes(
        records, seed=seed, n_boot=n_boot, thresholds=t, alpha=alpha, workers=workers, cache=cache, evidence=known
    )
    report = build_report(records_summary(records, path, sha), scopes, seed=seed, n_boot=n_boot, thresholds=t)
    with sharing(cache):
        return enrich_report(report, records, seed=seed, n_boot=n_boot, thresholds=t, known_evidence=known)


def dumps_report(report: dict[str, Any]) -> str:
    """Deterministic JSON text (sorted keys at every level, fixed separators)."""
    return json.dumps(report, sort_keys=True, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


__all__ = ["REPORT_FORMAT", "audit", "audit_scopes", "build_report", "dumps_report", "records_summary"]
