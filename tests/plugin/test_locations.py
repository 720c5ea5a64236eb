"""Each parametrized audit test's ``location`` is shared from the first of its function's
(``plugin/locations.py``), and equals the one pytest derives itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.builders import write
from leaderboard_audit.records.simulate import demo_spec, simulate


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    return write(simulate(demo_spec(items_per_benchmark=60)), tmp_path_factory.mktemp("demo"))


def test_shared_locations_are_pytests_own(pytester, demo_dir):
    seen: dict[str, tuple] = {}

    class Check:
        def pytest_collection_finish(self, session):
            for item in session.items:
                got = item.__dict__.pop("location", None)
                if got is not None:
                    seen[item.nodeid] = (got, item.location)

    pytester.inline_run("--audit", str(demo_dir), "--collect-only", "-p", "no:cacheprovider", "-q", plugins=[Check()])
    assert len(seen) > 40
    assert all(shared == own for shared, own in seen.values())
