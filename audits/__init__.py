"""The audit checks, collected by the plugin when ``pytest --audit PATH`` is given.

Installed as ``leaderboard_audit.audits``; ``test_checks.py`` holds one test per registered check
(docs/spec/AUDITS.md).
"""
