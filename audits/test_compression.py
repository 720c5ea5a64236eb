"""Compression: does a top-k-by-discrimination subset keep the fragile items (paper section 4.4, Table 7)?

Parametrized by the plugin over scopes (each benchmark and `pooled`); the
verdict (pass / warn / fail with its margin) is computed by the check's module in
`leaderboard_audit/checks/` (the registry) and enforced here.
"""


def test_compression(audit_check):
    audit_check.enforce()
