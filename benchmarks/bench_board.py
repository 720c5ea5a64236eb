"""The published board at leaderboard scale (issue 42's target): a simulated 4,000-model,
100-item, one-configuration board built end to end (band, pairs, both orders, the board)
and rendered, with the top rank's size under the board's rule (AUDITS v5: simultaneous rank intervals) and under Holm
over all pairs (the identified order's family, the board's rule before v4).

    python benchmarks/bench_board.py [models] [items]
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from leaderboard_audit.engine import audit_scope_computed
from leaderboard_audit.records.grid import Config, Grid
from leaderboard_audit.records.model import Items, Records
from leaderboard_audit.reports.leaderboard import render_csv


def main(M: int = 4000, N: int = 100, seed: int = 1) -> dict:
    grid = Grid((Config("gen|letter_plain|p0", "gen", "letter_plain", "p0", None),), "gen|letter_plain|p0")
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 1.2, M)
    b = rng.normal(0, 1, N)
    C = (rng.random((M, N)) < 1 / (1 + np.exp(-(theta[:, None] - b))))[:, :, None]
    items = Items(
        np.array(["b"] * N, dtype=object),
        np.array([f"b/{i}" for i in range(N)], dtype=object),
        [0] * N,
        [None] * N,
        [None] * N,
    )
    rec = Records(correct=C, models=tuple(f"m{j:04d}" for j in range(M)), items=items, grid=grid, source="sim")
    t0 = time.perf_counter()
    s, _ = audit_scope_computed(rec, "pooled", n_boot=100, only={"band", "manufactured", "averaged", "ranking"})
    csv = render_csv({"scopes": {"pooled": s}})
    built = time.perf_counter() - t0
    rows = s["averaged"]["board"]["rows"]
    top = [r for r in rows if r["rank"] == 1]
    holm_top = len(s["identified"]["tiers"][0])
    return {
        "models": M,
        "items": N,
        "seconds": round(built, 2),
        "top_rank_board": len(top),
        "top_rank_holm_tier1": holm_top,
        "distinct_ranks_board": len({r["rank"] for r in rows}),
        "tiers_holm": len(s["identified"]["tiers"]),
        "top_rank_score_range": [round(min(r["averaged"] for r in top), 3), round(max(r["averaged"] for r in top), 3)],
        "csv_rows": csv.count("\n") - 1,
    }


if __name__ == "__main__":
    print(json.dumps(main(*[int(a) for a in sys.argv[1:3]])))
