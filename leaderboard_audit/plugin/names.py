"""Names the plugin's modules share (kept apart so none imports another for them)."""

PLUGIN_NAME = "leaderboard-audit-session"
#: workerinput keys: the resolved settings, and the finished audit the controller computed
SETTINGS_KEY = "leaderboard_audit"
FINISHED_KEY = "leaderboard_audit_finished"
