"""Leave one benchmark out: every headline number without one benchmark (paper, Table 9, A.9).

The paper recomputes its headline numbers with TruthfulQA removed (appendix A.9,
Table 9) and finds two that move (the champion count, 4 -> 3, and the minimum
Kendall tau). ``checks.mix`` does that for any benchmark; these helpers give it the reduced
records and compare headline facts (``moved``). Definitions: docs/audits.md, "Beyond the
paper: leave one benchmark out".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..records import Records

MIN_BENCHMARKS = 3


def without_benchmark(records: Records, benchmark: str) -> Records:
    """The records without one benchmark's items (models, grid, pred and margin kept)."""
    if benchmark not in records.benchmarks:
        raise KeyError(f"no benchmark {benchmark!r}; have {list(records.benchmarks)}")
    return records.select_items(np.flatnonzero(records.items.benchmark != benchmark))


# Discrete headline facts whose change is a change of conclusion, not of a decimal.
DISCRETE = (
    "reference_order",
    "manufactured",
    "nonzero_gaps",
    "champion_count",
    "champion_set",
    "reference_winners",
    "top3_count",
    "most_destructive",
    "robust_winner",
    "tiers",
)


def moved(full: dict[str, Any], reduced: dict[str, Any]) -> list[str]:
    """Headline facts that differ between the full and a reduced set: the discrete ones
    (:data:`DISCRETE`, those present), the sign of corr(disc, fragility)'s CI low, and the
    sign of the minimum Kendall tau."""
    out = [key for key in DISCRETE if (key in full or key in reduced) and full.get(key) != reduced.get(key)]

    def sign(x: float | None) -> int | None:
        return None if x is None else int(np.sign(round(x, 12)))

    def flips(a: float | None, b: float | None) -> bool:
        # v3: a defined <-> undefined change is not a sign change
        return a is not None and b is not None and sign(a) != sign(b)

    lo_f, lo_r = full.get("corr_ci"), reduced.get("corr_ci")
    if flips(lo_f and lo_f[0], lo_r and lo_r[0]):
        out.append("corr_ci_low_sign")
    tau_f, tau_r = full.get("kendall_tau") or {}, reduced.get("kendall_tau") or {}
    if flips(tau_f.get("min"), tau_r.get("min")):
        out.append("kendall_tau_min_sign")
    return out
