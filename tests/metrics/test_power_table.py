"""The sign test's critical values the package ships (metrics/power.py, ``SHIPPED_FILE``)
are the recurrence's own, bit for bit, and a table started from them continues as one
grown from n = 0. The first million is grown again here and a stretch after every stored
state; ``power.verify_shipped_table()`` grows all 10 million (~11 s: a release check)."""

from __future__ import annotations

import numpy as np

from leaderboard_audit.metrics import power
from leaderboard_audit.metrics.power import SHIPPED_N, _CriticalTable, shipped_checkpoints, shipped_table

STRETCH = 30_000


def test_the_shipped_table_is_the_recurrence_and_continues_with_the_same_bits():
    got = shipped_table(0.05)
    assert got is not None, "metrics/critical_0.05.npz is missing: write_shipped_table() makes it"
    values, at = got
    assert values.size == SHIPPED_N + 1
    checkpoints = shipped_checkpoints()
    assert checkpoints[:, 0].tolist() == list(range(power.SHIPPED_EVERY, SHIPPED_N, power.SHIPPED_EVERY))
    fresh = _CriticalTable(0.05, shipped=False)
    fresh.grow(power.SHIPPED_EVERY)
    assert np.array_equal(fresh.state()[0], values[: power.SHIPPED_EVERY + 1]), "regenerate: write_shipped_table()"
    assert fresh.state()[1].tobytes() == checkpoints[0, 1:].tobytes()
    # from every stored state, a stretch of steps gives the shipped values
    for n, state in ((int(row[0]), row[1:]) for row in checkpoints):
        assert values[n] == state[0]  # the state's k is the value at its n
        t = _CriticalTable(0.05, shipped=False)
        t.restore(values[: n + 1], state)
        t.grow(n + STRETCH)
        assert np.array_equal(t.state()[0][n:], values[n : n + STRETCH + 1]), n
    started = _CriticalTable(0.05)  # reads the file (no step taken), grows on from its last state
    assert np.array_equal(started.upto(SHIPPED_N), values) and started.state()[1].tobytes() == at.tobytes()
    assert values[SHIPPED_N] == at[0]


def test_a_mutated_shipped_table_fails_the_full_check(tmp_path):
    """``verify_shipped_table`` is what regenerating checks; it must catch a flipped step."""
    path = tmp_path / "small.npz"
    power.write_shipped_table(path, n=250_000, every=100_000)
    with np.load(path) as f:
        arrays = {k: f[k].copy() for k in f.files}
    assert arrays["checkpoints"][:, 0].tolist() == [100_000, 200_000]
    assert power.verify_shipped_table(path)
    arrays["steps"][20_000] ^= 1  # the bits of sizes 160,001..160,008
    np.savez_compressed(path, **arrays)
    assert not power.verify_shipped_table(path)


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
