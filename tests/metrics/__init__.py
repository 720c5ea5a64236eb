"""Tests of leaderboard_audit/metrics."""
