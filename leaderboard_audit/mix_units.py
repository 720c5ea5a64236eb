"""Under xdist, ``mix``'s leave-one-out sets as work units of their own (issue 24).

Serially the pooled scope computes ``mix`` last: every pooled check again on the records
without each benchmark, compared with the pooled verdicts. That made the pooled scope one unit
holding half of a big audit's statistics. Split, the pooled scope's unit computes every check
but ``mix``, and each benchmark's leave-one-out set (``Mix.without_one``) is a unit of its own,
which needs only the records and the pooled verdicts and headline (``Mix.basis``, JSON): the
worker that computes the pooled scope publishes both (``xdist_store``), a worker computing a
leave-one-out set reads them (waiting while the pooled scope is computed), and the controller
puts the ``mix`` section and verdicts back into the pooled scope, in the serial run's order:
the reports are the same bytes (tests/test_mix_units.py).
"""

from __future__ import annotations

from typing import Any

MIX = "mix"
POOLED_KEY = "pooled-core"  # xdist_store key: the pooled scope without mix, and mix's basis


def unit_name(benchmark: str) -> str:
    """The work unit of the leave-one-out set without ``benchmark``."""
    return f"{MIX}:{benchmark}"


def eligible(records: Any) -> bool:
    """Whether ``mix`` can be split into units: it runs on the pooled scope (3+ benchmarks), is
    not skipped there, and is the registry's last check, so its section and verdicts come last
    in the pooled scope (where the controller appends them)."""
    from .checks import registry
    from .checks.base import POOLED
    from .auditor import make_scope

    reg = registry()
    names = list(reg)
    if MIX not in reg or names[-1] != MIX:
        return False
    check = reg[MIX]
    return check.applies_to(POOLED, records) and check.skip_reason(make_scope(records, POOLED)) is None


def assemble(
    pooled: dict[str, Any],
    basis: dict[str, Any],
    entries: dict[str, dict[str, Any]],
    verdicts: dict[str, dict[str, Any]],
    scope: Any,
) -> dict[str, Any] | None:
    """The pooled scope as the serial run computes it: ``pooled`` (every check but mix) with the
    ``mix`` section before its verdict list and mix's verdicts at the end of it, in benchmark
    order. None when a benchmark's entry is missing (a ``-k`` that ran only some of them)."""
    from .checks import registry

    benchmarks = list(scope.full.benchmarks)
    if any(b not in entries or b not in verdicts for b in benchmarks):
        return None
    out = {k: v for k, v in pooled.items() if k != "verdicts"}
    out[MIX] = registry()[MIX].section_of(scope, basis, entries)
    out["verdicts"] = [*pooled["verdicts"], *(verdicts[b] for b in benchmarks)]
    return out


__all__ = ["MIX", "POOLED_KEY", "assemble", "eligible", "unit_name"]
