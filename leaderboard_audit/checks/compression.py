"""Compression: does a top-k-by-discrimination subset keep the fragile items?
(paper section 4.4, Table 7)

Section ``compression``: corr(discrimination, fragility) with its bootstrap CI, the
top-k cutoff and its tie-break draws, mean fragility of top-k vs all items, and
champion counts on full / top-k / random subsets. Verdict ``compression[<scope>]``.
"""

from __future__ import annotations

from typing import Any

from ..metrics.compression import compression as compression_m
from .tables import Line, Table, ci_cell
from .verdicts import FAIL, PASS, WARN, at_most, exact, fmt, make_verdict
from .base import GRADED_COMPRESSION, Check, Scope, num


class Compression(Check):
    name = "compression"
    position = 70  # in the report: after the checks with a lower position
    title = "Compression (section 4.4, Table 7)"
    section = "compression"
    thresholds = {"compression_k": 100}
    needs_configs = True

    def skip_reason(self, scope: Scope) -> str | None:
        return super().skip_reason(scope) or (GRADED_COMPRESSION if scope.graded else None)

    def compute(self, scope: Scope) -> dict[str, Any]:
        comp = compression_m(
            scope.C,
            scope.ref,
            seed=scope.seed,
            scope=scope.name,
            k=scope.thresholds.compression_k,
            baselines=not scope.verdicts_only,
        )
        return {k: num(v) if not isinstance(v, list) else v for k, v in comp.items()}

    def judge(self, scope: Scope, section: dict[str, Any]) -> list[dict[str, Any]]:
        return [compression_verdict(scope.name, section, scope.thresholds)]

    def tables(self, name: str, s: dict[str, Any]) -> list[Table | Line]:
        c = s.get("compression")
        if not c:
            return []
        return [
            Line(
                "compression",
                (
                    f"compression (k={c['k']}{', reduced to N//2' if c.get('k_reduced') else ''}): "
                    f"corr(disc, fragility) {fmt(c['corr'], 2)} {ci_cell(c['ci'], 2)}; "
                    f"{c['distinct_disc_values']} distinct disc values, cutoff {c['cutoff_above']} above + "
                    f"{c['cutoff_ties']} tied; mean fragility top-k {fmt(c['mean_fragility_topk'])} vs all "
                    f"{fmt(c['mean_fragility_all'])}; champions full {c['champions_full']}, top-k "
                    f"{fmt(c['champions_topk_mean'], 2)} [{c['champions_topk_min']}-{c['champions_topk_max']}], "
                    f"random {fmt(c['champions_random_mean'], 2)}"
                ),
            )
        ]


def compression_verdict(scope: str, c: dict[str, Any], t: Any) -> dict[str, Any]:
    corr, ci = c["corr"], c["ci"]
    lo = None if ci is None else ci[0]
    topk, allf = c["mean_fragility_topk"], c["mean_fragility_all"]
    no_fragile = allf is not None and allf <= 1e-12
    if corr is None and no_fragile:
        status, why = PASS, "no item is config-fragile for any model: compression cannot keep fragile items"
    elif corr is None:
        status, why = WARN, f"corr(disc, fragility) undefined: {_undefined_reason(c)}"
    elif lo is None or at_most(lo, 0.0):
        # v4: pass unless the CI's low bound is above 0 (a positive corr inside noise is no evidence)
        status, why = (
            PASS,
            (
                "discriminative items are not the fragile ones"
                if at_most(corr, 0.0)
                else "corr > 0 but its 95% CI includes 0: no evidence that discriminative items are the fragile ones"
            ),
        )
    elif topk is not None and allf is not None and not at_most(topk, allf):
        status, why = (
            FAIL,
            (f"compression keeps the fragile items: top-{_k(c)} mean fragility {topk:.3f} > {allf:.3f} over all items"),
        )
    else:
        status, why = WARN, f"corr > 0, but the top-{_k(c)} items are no more fragile than all items"
    msg = (
        f"{why}. corr {fmt(corr)} CI {ci_cell(ci)}; top-{_k(c)} (cutoff {c['cutoff_above']} above + "
        f"{c['cutoff_ties']} tied) mean fragility {fmt(topk)} vs all {fmt(allf)}; champions full "
        f"{c['champions_full']}, top-k mean {fmt(c['champions_topk_mean'], 2)}, random "
        f"{fmt(c['champions_random_mean'], 2)}" + (" (k reduced to N//2)" if c.get("k_reduced") else "")
    )
    value = lo if lo is not None else corr
    # v4: the status is decided by the CI's low bound <= 0 (pass), so the margin is -lo; an
    # undefined correlation is a pass at 0 when nothing is fragile, else a warn at -1 (the far
    # end of a correlation's range)
    if corr is None:
        margin = 0.0 if status == PASS else -1.0
    elif lo is None:
        margin = exact(0.0 - corr) + 0.0 if status != PASS else max(exact(0.0 - corr), 0.0) + 0.0
    else:
        margin = exact(0.0 - lo) + 0.0
    return make_verdict(
        "compression",
        f"compression[{scope}]",
        status,
        value,
        0.0,
        margin,
        msg,
        {
            k: c[k]
            for k in (
                "k",
                "corr",
                "ci",
                "mean_fragility_topk",
                "mean_fragility_all",
                "champions_full",
                "champions_topk_mean",
                "champions_random_mean",
            )
        },
    )


def _k(c: dict[str, Any]) -> str:
    """The top-k subset's label: its real size, with the requested k when fewer items rank."""
    used = c.get("k_used", c["k"])
    return str(used) if used == c["k"] else f"{used} (of k={c['k']}: only {used} items have a defined discrimination)"


def _undefined_reason(c: dict[str, Any]) -> str:
    defined = c.get("disc_defined")
    if c.get("mean_fragility_all") is not None and c["mean_fragility_all"] >= 1.0 - 1e-12:
        return "every item is config-fragile for every model (fragility is constant), the worst case for compression"
    if defined is not None and defined < 3:
        return f"only {defined} item{' has' if defined == 1 else 's have'} a defined discrimination"
    return "discrimination or fragility is constant over the items"


CHECK = Compression()
