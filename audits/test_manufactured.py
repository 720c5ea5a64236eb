"""Manufactured orderings: is an adjacent pair ordered by its jointly robust items (paper Table 2, Figure 2)?

Parametrized by the plugin over scopes (each benchmark and `pooled`) and adjacent pairs; the
verdict (pass / warn / fail with its margin) is computed by the check's module in
`leaderboard_audit/checks/` (the registry) and enforced here.
"""


def test_manufactured(audit_check):
    audit_check.enforce()
