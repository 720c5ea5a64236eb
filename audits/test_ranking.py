"""Ranking: the order the jointly robust items identify (docs/spec/AUDITS.md v2).

Parametrized by the plugin over scopes (each benchmark and `pooled`); the
verdict (pass / warn / fail with its margin) is computed by the check's module in
`leaderboard_audit/checks/` (the registry) and enforced here.
"""


def test_ranking(audit_check):
    audit_check.enforce()
