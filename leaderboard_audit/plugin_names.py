"""Names the plugin and its session share (kept apart so neither imports the other)."""

PLUGIN_NAME = "leaderboard-audit-session"
WORKER_KEY = "leaderboard_audit"
