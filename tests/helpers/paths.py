"""Paths the tests read, independent of how deep a test module sits under tests/."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
DATA = TESTS / "data"
FIXTURES = REPO / "fixtures"
TINY = FIXTURES / "tiny"
DEMO = FIXTURES / "demo"
REAL = FIXTURES / "real"
RELEASE = FIXTURES / "release"
# the optional full datasets beside the checkout (``../shared``)
SHARED = REPO.parent / "shared"
