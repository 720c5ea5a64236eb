"""Brittleness: the share of variance that is prompt sensitivity (Brittlebench section 3).

Parametrized by the plugin over scopes (each benchmark and `pooled`); the
verdict (pass / warn / fail with its margin) is computed by the check's module in
`leaderboard_audit/checks/` (the registry) and enforced here.
"""


def test_brittleness(audit_check):
    audit_check.enforce()
