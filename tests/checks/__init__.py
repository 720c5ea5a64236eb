"""Tests of leaderboard_audit/checks."""
