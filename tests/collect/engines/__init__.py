"""Tests of leaderboard_audit/collect/engines."""
