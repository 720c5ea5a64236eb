"""pytest-xdist scheduling by scope: every test of one scope goes to one worker, so each
worker computes only the scopes it runs (a scope's statistics are computed once per process).

xdist's own ``--dist loadgroup`` would do this from ``xdist_group`` marks, but with
pytest >= 9 its nodeid suffix no longer takes effect (pytest-xdist issue 1386), so the
plugin hands xdist a ``LoadScopeScheduling`` whose work units are the audit's scopes.
Tests that are not audit cases keep one work unit each (plain ``load`` behaviour).
"""

from __future__ import annotations

from typing import Any
from collections.abc import Mapping

from xdist.scheduler import LoadScopeScheduling


def case_of(nodeid: str) -> tuple[str, str] | None:
    """(test function name, parameter id) of ``path::test_x[id]``, or None."""
    name = nodeid.rsplit("::", 1)[-1]
    if "[" not in name or not name.endswith("]"):
        return None
    func, _, rest = name.partition("[")
    return func, rest[:-1]


class ScopeScheduling(LoadScopeScheduling):
    def __init__(self, config: Any, log: Any, groups: Mapping[tuple[str, str], str]) -> None:
        super().__init__(config, log)
        self.groups = dict(groups)

    def _split_scope(self, nodeid: str) -> str:
        key = case_of(nodeid)
        group = self.groups.get(key) if key is not None else None
        return f"leaderboard-audit::{group}" if group is not None else nodeid


__all__ = ["ScopeScheduling", "case_of"]
