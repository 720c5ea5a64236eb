"""Threshold names for pytest's ini registration, without importing the checks (numpy).

The checks declare their thresholds (``Check.thresholds``); this list must name the
same set — ``tests/checks/test_check_registry.py`` checks it — so ``pytest --help`` stays import-light.
Third-party checks' thresholds are set through ``[tool.leaderboard_audit]`` or
``--audit-threshold`` (ini names are registered for the bundled ones only)."""

THRESHOLD_NAMES = (
    "axes_pass",
    "axes_warn",
    "band_pass",
    "band_warn",
    "brittleness_pass",
    "brittleness_warn",
    "champion_items",
    "compression_k",
    "flip_boot",
    "flip_precision",
    "fragile_share",
    "mix_draws",
)
