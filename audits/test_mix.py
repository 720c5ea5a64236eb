"""Mix: does the pooled conclusion survive leaving one benchmark out (paper Table 9, appendix A.9)?

Parametrized by the plugin over benchmarks (pooled scope, at least 3 benchmarks); the
verdict (pass / warn / fail with its margin) is computed by the check's module in
`leaderboard_audit/checks/` (the registry) and enforced here.
"""


def test_mix(audit_check):
    audit_check.enforce()
