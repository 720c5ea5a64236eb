"""Axes: which harness axis, varied alone, reorders the models (paper Table 3, Figure 4)?

Parametrized by the plugin over scopes (each benchmark and `pooled`); the
verdict (pass / warn / fail with its margin) is computed by the check's module in
`leaderboard_audit/checks/` (the registry) and enforced here.
"""


def test_axes(audit_check):
    audit_check.enforce()
