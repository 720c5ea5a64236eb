"""Glue between an --audit PATH and Records, and the test cases each check gets."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .metrics.per_model import leaderboard_order
from .records import Records, RecordsError, load_records
from .report import scope_records, scopes_of

SCOPE_CHECKS = ("champions", "compression", "axes", "brittleness")


def load_for_audit(path: str, fmt: str = "auto", *, intersect: bool = False,
                   mapping: str | None = None, metric: str | None = None) -> Records:
    """Records from a records-v1 directory, a long table, or an importer's source."""
    p = Path(path)
    if not p.exists():
        raise RecordsError.one(path, None, "no such file or directory",
                               fix="pass a records-v1 directory or a CSV/Parquet table to --audit")
    if fmt in ("lm-eval", "helm"):
        from .importers import load
        opts = {k: v for k, v in (("mapping", mapping), ("metric", metric)) if v is not None}
        return load(path, fmt, intersect=intersect, **opts)
    if fmt == "table" and not p.is_file():
        raise RecordsError.one(path, None, "--audit-format table needs a CSV or Parquet file")
    if fmt == "records" and not p.is_dir():
        raise RecordsError.one(path, None, "--audit-format records needs a records-v1 directory")
    return load_records(p, intersect=intersect)


def reference_order(r: Records) -> list[str]:
    ref = r.grid.reference_index
    acc = r.correct[:, :, ref].sum(axis=1) / r.shape[1]
    return [r.models[m] for m in leaderboard_order(acc, r.models)]


def case_ids(records: Records, check: str) -> list[tuple[str, str, str]]:
    """(scope, verdict id, test id) for ``check``: pooled first, then benchmarks sorted;
    models in reference-leaderboard order. Identical on every xdist worker."""
    out = []
    for scope in scopes_of(records):
        if check in SCOPE_CHECKS:
            out.append((scope, f"{check}[{scope}]", scope))
            continue
        order = reference_order(scope_records(records, scope))
        if check == "band":
            out += [(scope, f"band[{scope}-{m}]", f"{scope}-{m}") for m in order]
        elif check == "manufactured":
            out += [(scope, f"manufactured[{scope}-{h}>{l}]", f"{scope}-{h}>{l}")
                    for h, l in zip(order[:-1], order[1:])]
    return out


def check_submission(records: Records, models: list[str]) -> None:
    """A usage error (exit 4) when a --audit-submission model is not in the records."""
    unknown = [m for m in models if m not in records.models]
    if unknown:
        import pytest
        raise pytest.UsageError(f"--audit-submission {unknown}: not in the records "
                                f"(models: {', '.join(records.models)})")


def submission_filter(records: Records, check: str, cases: list[tuple[str, str, str]],
                      models: list[str]) -> list[tuple[str, str, str]]:
    """Only the checks a new model's arrival changes: its band, its adjacent pairs
    (above and below it on each scope's reference leaderboard), champions.

    Matches verdict ids exactly (rebuilt from each scope's order), so a model name
    that contains another one, ``-`` or ``>`` selects nothing extra."""
    check_submission(records, models)
    if check == "champions":
        return list(cases)
    wanted: set[str] = set()
    new = set(models)
    for scope in scopes_of(records):
        if check == "band":
            wanted |= {f"band[{scope}-{m}]" for m in new}
        elif check == "manufactured":
            order = reference_order(scope_records(records, scope))
            wanted |= {f"manufactured[{scope}-{h}>{l}]" for h, l in zip(order[:-1], order[1:])
                       if h in new or l in new}
    return [c for c in cases if c[1] in wanted]


__all__ = ["case_ids", "check_submission", "load_for_audit", "reference_order", "submission_filter", "np"]
