"""Plugin-level tests: pytest --audit driven through pytester (leaderboard_audit/plugin.py)."""
