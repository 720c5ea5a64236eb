"""Simultaneous coverage and width of the board's rank intervals (AUDITS v5, docs/audits.md
"The board"; ``metrics/rank_intervals.py``).

Boards of M models (10, 100, 1,000) x N items x K configurations (1 and 26) are simulated with
known population scores: model m answers item i under configuration k right with probability
``p_m + u_i + v_ik`` (``u_i`` an item's difficulty shared by every model, so the comparison is
paired, ``v_ik`` the configuration's effect on the item; each within +-0.12 and ``p_m`` in
[0.3, 0.7], so no probability is clipped and the population score is ``p_m`` exactly). Two
kinds: **null** (every ``p_m`` = 0.5: every true rank is 1) and **spaced** (``p_m`` evenly
spaced over [0.35, 0.65]). A board covers when every model's rank interval holds its true rank
``1 + #{j: p_j > p_m}`` (simultaneous coverage). Width: the mean of ``worst - best + 1``;
beside it, for the same boards, the v4 rule's mean size of a model's "rank =" group (BH over
the harness-averaged sign tests).

Not a test and not timed: ``python benchmarks/bench_rank_intervals.py [--boards N]`` prints a
Markdown table.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def simulate(M: int, N: int, K: int, kind: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    p = np.full(M, 0.5) if kind == "null" else np.linspace(0.65, 0.35, M)
    u = rng.uniform(-0.12, 0.12, size=N)
    v = rng.uniform(-0.12, 0.12, size=(N, K)) if K > 1 else np.zeros((N, K))
    prob = p[:, None, None] + u[None, :, None] + v[None, :, :]
    return rng.random((M, N, K)) < prob, p


def v4_group_sizes(C: np.ndarray) -> float:
    from leaderboard_audit.metrics.averaged import averaged_order
    from leaderboard_audit.metrics.board import bh_edges, board_ranks

    M, N, _ = C.shape
    ao = averaged_order(C, models=[f"m{j}" for j in range(M)], alpha=0.05)
    rank = board_ranks(bh_edges(np.asarray(ao.only), N, 0.05, cells=ao.cells))
    _, inverse, counts = np.unique(rank, return_inverse=True, return_counts=True)
    return float(counts[inverse].mean())


def run(boards: int, sizes: list[tuple[int, int, int]]) -> str:
    from leaderboard_audit.metrics.rank_intervals import critical_value, item_scores, rank_intervals, score_sds

    out = [
        "| models x items x configs | board | boards | simultaneous coverage | mean rank-interval width | "
        "v4: mean size of a model's rank= group | s per board (intervals) |",
        "|---|---|---|---|---|---|---|",
    ]
    for M, N, K in sizes:
        for kind in ("null", "spaced"):
            rng = np.random.default_rng([M, N, K, kind == "null"])
            covered, widths, groups, secs = 0, [], [], []
            for b in range(boards):
                C, p = simulate(M, N, K, kind, rng)
                t = time.perf_counter()
                a = item_scores(C)
                c = critical_value(a, 0.05, seed=b)
                best, worst = rank_intervals(a.mean(axis=1), score_sds(a), c)
                secs.append(time.perf_counter() - t)
                true = 1 + (p[None, :] > p[:, None]).sum(axis=1)
                covered += bool(((best <= true) & (true <= worst)).all())
                widths.append(float((worst - best + 1).mean()))
                groups.append(v4_group_sizes(C))
            out.append(
                f"| {M:,} x {N:,} x {K} | {kind} | {boards} | {covered / boards:.1%} | {np.mean(widths):.1f} | "
                f"{np.mean(groups):.1f} | {np.median(secs):.2f} |"
            )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", type=int, default=200, help="boards per row (default 200)")
    ap.add_argument("--big-boards", type=int, default=40, help="boards per 1,000-model row (default 40)")
    a = ap.parse_args()
    t = time.perf_counter()
    print(run(a.boards, [(10, 100, 1), (10, 100, 26), (100, 100, 1), (100, 100, 26)]))
    print(run(a.big_boards, [(1000, 100, 1), (1000, 100, 26)]).split("\n", 2)[2])
    print(f"\n({time.perf_counter() - t:.0f} s)")


if __name__ == "__main__":
    main()
