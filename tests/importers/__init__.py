"""Tests of leaderboard_audit/importers."""
