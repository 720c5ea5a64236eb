"""The fix texts the importers attach to each decision's error, matched exactly by
``decisions.load_or_decide`` (apart from it, so an importer need not import the decision
machinery, which imports the importers)."""

from __future__ import annotations

# each front end names the mapping its own way: pytest --audit-mapping, `leaderboard-audit
# audit`/`import` --mapping; only `import` has --model (UX review 2026-12-04 #11)
FIX_MODEL = (
    "name it: 'model' in the mapping file (pytest: --audit-mapping FILE; leaderboard-audit audit/import: "
    "--mapping FILE; import also takes --model NAME)"
)
FIX_MODEL_HELM = FIX_MODEL
FIX_METRIC_MISSING = "choose a metric every sample carries"
FIX_ONE_LEGEND = (
    "a records set has one legend: every benchmark needs the same configurations; "
    "name each run's benchmark and config in a mapping (docs/importers.md), or "
    "import the benchmarks separately"
)
FIX_COVERAGE = (
    "runs must cover the same documents; re-run the missing ones, "
    "or pass intersect=True (--intersect) to import only the common ones"
)

__all__ = ["FIX_COVERAGE", "FIX_METRIC_MISSING", "FIX_MODEL", "FIX_MODEL_HELM", "FIX_ONE_LEGEND"]
