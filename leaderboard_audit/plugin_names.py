"""Names the plugin and its session share (kept apart so neither imports the other)."""

PLUGIN_NAME = "leaderboard-audit-session"
WORKER_KEY = "leaderboard_audit"
UNITS_KEY = "leaderboard_audit_units"  # workerinput: send your scheduling units (AuditSession.pytest_collection_finish)
STORE_KEY = "leaderboard_audit_store"  # workerinput: the run's shared-results directory (xdist_store)
