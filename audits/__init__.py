"""The audit checks, collected by the plugin when ``pytest --audit PATH`` is given.

Installed as ``leaderboard_audit.audits``; one module per check of docs/spec/AUDITS.md.
"""
