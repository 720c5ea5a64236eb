"""Champions: how many models does some harness configuration crown (paper Table 8, Figure 3)?

Parametrized by the plugin over scopes (each benchmark and `pooled`); the
verdict (pass / warn / fail with its margin) is computed by
`leaderboard_audit.report.audit_scope` and enforced here.
"""


def test_champions(audit_check):
    audit_check.enforce()
