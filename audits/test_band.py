"""Band: a model's score is a band, not a point (paper Table 1, Figure 1).

Parametrized by the plugin over scopes (each benchmark and `pooled`) and models; the
verdict (pass / warn / fail with its margin) is computed by the check's module in
`leaderboard_audit/checks/` (the registry) and enforced here.
"""


def test_band(audit_check):
    audit_check.enforce()
