"""The audit engine: records + settings -> report-v1, serially or in processes.

``run`` (the whole audit, ``audit``), ``scope`` (one scope's cases and sections), ``scopes``
(the scopes a board has), ``parallel`` (the scopes in forked processes), ``evidence`` (what a
built report reads from the records), ``sources`` (an ``--audit PATH`` -> records, with the
fingerprint of the bytes read), ``gate`` (the submission gate). The names below are the
engine's public ones.
"""

from __future__ import annotations

from ..checks import POOLED
from ..settings import DEFAULT_ALPHA, DEFAULT_BOOT, DEFAULT_SEED
from .run import REPORT_FORMAT, audit, audit_scopes, build_report, dumps_report, records_summary
from .scope import (
    Case,
    audit_scope,
    audit_scope_computed,
    case_ids_by_scope,
    cases,
    collected_cases,
    make_scope,
)
from .scopes import alias_of, scope_records, scopes_of

__all__ = [
    "Case",
    "DEFAULT_ALPHA",
    "DEFAULT_BOOT",
    "DEFAULT_SEED",
    "POOLED",
    "REPORT_FORMAT",
    "alias_of",
    "audit",
    "audit_scope",
    "audit_scope_computed",
    "audit_scopes",
    "build_report",
    "case_ids_by_scope",
    "cases",
    "collected_cases",
    "dumps_report",
    "make_scope",
    "records_summary",
    "scope_records",
    "scopes_of",
]
