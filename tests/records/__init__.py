"""Tests of leaderboard_audit/records."""
