"""Checks that third-party packages register (entry point group ``leaderboard_audit.checks``).

One test function per registered check that is not bundled, named ``test_<check>`` so
``-k <check>`` selects it; parametrized by the plugin like the bundled ones.
"""

from leaderboard_audit.checks import BUILTIN, registry


def _make(name):
    def test(audit_check):
        audit_check.enforce()

    test.__name__ = f"test_{name}"
    test.__doc__ = registry()[name].title or f"registered check {name}"
    return test


for _name in registry():
    if _name not in BUILTIN:
        globals()[f"test_{_name}"] = _make(_name)
