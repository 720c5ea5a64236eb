"""Champions: how many models does some harness configuration crown (paper Table 8, Figure 3)?

Parametrized by the plugin over scopes (each benchmark and `pooled`); the
verdict (pass / warn / fail with its margin) is computed by the check's module in
`leaderboard_audit/checks/` (the registry) and enforced here.
"""


def test_champions(audit_check):
    audit_check.enforce()
