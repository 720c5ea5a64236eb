"""The sign test's critical values the package ships (metrics/power.py, ``SHIPPED_FILE``)
are the recurrence's own, bit for bit, and a table started from them continues as one
grown from n = 0."""

from __future__ import annotations

import numpy as np

from leaderboard_audit.metrics import power
from leaderboard_audit.metrics.power import SHIPPED_N, _CriticalTable, shipped_table


def test_the_shipped_table_is_the_recurrence_and_continues_with_the_same_bits():
    fresh = _CriticalTable(0.05, shipped=False)
    fresh.upto(SHIPPED_N)
    got = shipped_table(0.05)
    assert got is not None, "metrics/critical_0.05.npz is missing: write_shipped_table() makes it"
    values, at = got
    assert np.array_equal(values, fresh.state()[0]), "regenerate it: power.write_shipped_table()"
    assert at.tobytes() == fresh.state()[1].tobytes()  # the recurrence's exact state at SHIPPED_N
    started = _CriticalTable(0.05)  # reads the file, then grows on
    more = SHIPPED_N + 30_000
    assert np.array_equal(started.upto(more), fresh.upto(more))
    assert started.state()[0].size > SHIPPED_N  # it did start from the file


def test_other_alphas_small_tables_and_unreadable_files_use_the_recurrence(tmp_path):
    assert shipped_table(0.01) is None
    assert shipped_table(0.05, tmp_path / "missing.npz") is None
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    assert shipped_table(0.05, bad) is None
    small = _CriticalTable(0.05)
    small.upto(power.SHIPPED_FROM - 1)  # quicker than reading the file: not read
    assert small.state()[0].size < power.SHIPPED_FROM + 1
    assert np.array_equal(small.upto(1_000), _CriticalTable(0.05, shipped=False).upto(1_000))
