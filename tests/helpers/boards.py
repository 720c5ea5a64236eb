"""Hand-built boards with a planted property."""

from __future__ import annotations

import numpy as np

from leaderboard_audit.records import Items, Records
from leaderboard_audit.records.grid import paper_grid


def carried_by_one_benchmark(c_ll: tuple[int, int] = (10, 40)) -> Records:
    """3 models x 3 benchmarks x 50 items. 'ace' wins every generation config everywhere
    (45 of 50 right per benchmark; 'bolt' 20, 'cove' 10); under both likelihood configs
    'bolt' wins the pooled set only because of benchmark 'c' (ll right counts per
    benchmark a, b, c: ace 30, 30, 10; bolt 28, 28, 40). ``c_ll``: ace's and bolt's ll right
    counts on 'c' (a larger gap plants a stronger champion claim)."""
    g = paper_grid()
    ll = [g.index("ll|cloze_plain"), g.index("ll|cloze_question")]
    gen = [k for k in range(len(g)) if k not in ll]
    n = 50
    C = np.zeros((3, 3 * n, len(g)), dtype=bool)
    for j, (ace, bolt) in enumerate([(30, 28), (30, 28), c_ll]):
        lo = j * n
        C[0, lo : lo + 45, gen] = True
        C[1, lo : lo + 20, gen] = True
        C[2, lo : lo + 10, :] = True
        C[0, lo : lo + ace, ll] = True
        C[1, lo : lo + bolt, ll] = True
    bench = np.array([b for b in "abc" for _ in range(n)], dtype=object)
    ids = np.array([f"{b}/{i}" for b in "abc" for i in range(n)], dtype=object)
    items = Items(bench, ids, [0] * 3 * n, [None] * 3 * n, [None] * 3 * n)
    return Records(C, ("ace", "bolt", "cove"), items, g)
