"""Importers: existing evaluation runs -> records-v1 (issue 6, docs/importers.md).

* ``lm-eval``: a directory of lm-evaluation-harness runs written with ``--log_samples``.
* ``helm``: a HELM ``benchmark_output/runs/<suite>`` tree.
* ``lighteval``: a directory of lighteval ``--save-details`` runs (details_*.parquet).

``load(src, fmt, **opts)`` returns :class:`~leaderboard_audit.records.Records`;
``leaderboard-audit import {lm-eval,helm,lighteval} SRC -o DIR`` writes them (importers.cli).
"""

from __future__ import annotations

import os
from typing import Any

FORMATS = ("lm-eval", "helm", "lighteval")
MAPPING_FILE = "audit_mapping.json"  # picked up from SRC when no mapping is given


def load(src: str | os.PathLike[str], fmt: str, **opts: Any):
    """Import ``src`` in format ``fmt`` ("lm-eval", "helm" or "lighteval") as Records.

    lm-eval options: metric, mapping, match_by ("auto"|"doc_hash"|"doc_id"),
    intersect, reference, model, benchmark, filter.
    helm options: metric (default "exact_match"), mapping, intersect, reference,
    model, benchmark.
    lighteval options: metric (default "acc"), mapping, match_by ("auto"|"doc_id"|"query"|
    "specific:KEY"), intersect, reference, model, benchmark.
    Without ``mapping``, a ``SRC/audit_mapping.json`` is used when present (so
    ``pytest --audit SRC --audit-format lm-eval`` needs no further option).
    """
    f = fmt.lower().replace("_", "-")
    if opts.get("mapping") is None:
        from pathlib import Path

        found = Path(src) / MAPPING_FILE
        if found.is_file():
            opts["mapping"] = str(found)
    if f in ("lm-eval", "lmeval", "lm-evaluation-harness"):
        from .lmeval import load_lmeval

        return load_lmeval(src, **opts)
    if f == "helm":
        from .helm import load_helm

        return load_helm(src, **opts)
    if f in ("lighteval", "light-eval"):
        from .lighteval import load_lighteval

        return load_lighteval(src, **opts)
    raise ValueError(f"unknown import format {fmt!r}; expected one of {FORMATS}")


__all__ = ["FORMATS", "MAPPING_FILE", "load"]
