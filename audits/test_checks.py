"""The audit's tests: one test function per registered check, named ``test_<check>`` so
``-k <check>`` selects it, parametrized by the plugin over the check's cases (each scope's
models, pairs, ...); the verdict is computed by the check's module and enforced here.

Generated for every check, bundled or registered by a third-party package (entry point
group ``leaderboard_audit.checks``), so a check is its module and nothing else; a bundled
check that is a report section only (``report_only``: no cases anywhere) has none.
"""

from leaderboard_audit.checks import BUILTIN, registry


def _make(name, check):
    def test(audit_check):
        audit_check.enforce()

    test.__name__ = test.__qualname__ = f"test_{name}"
    test.__doc__ = check.title or f"registered check {name}"
    return test


for _name, _check in registry().items():
    if not (_name in BUILTIN and _check.report_only):
        globals()[f"test_{_name}"] = _make(_name, _check)
