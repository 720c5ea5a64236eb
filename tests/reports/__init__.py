"""Tests of leaderboard_audit/reports."""
