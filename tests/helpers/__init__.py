"""Shared test helpers: builders, boards, paths and strategies (no tests here; tests import these,
never another test module)."""
