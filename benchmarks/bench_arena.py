"""Arena audit speed (issue 47). Not a test: the speed targets live here.

1. The shipped Chatbot Arena counts (leaderbot 0.4.3: 129 models, 3,460 pairs,
   1,670,250 battles), every rule and 1,000 bootstrap resamples: target < 30 s.
2. A simulated FastChat per-battle file, 2M battles x 250 models (each model meets
   about 30 opponents, as on the Arena; time stamps, ties and both-bad ties), read from
   JSON and audited with 1,000 resamples: target < 2 minutes.

Prints wall and CPU seconds per stage and the load average (the machine is shared).

    python benchmarks/bench_arena.py [--battles 2000000] [--models 250] [--boot 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

SHIPPED = Path(__file__).resolve().parents[1] / "tests" / "data" / "arena" / "chatbotarena_20240814.json"


def clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def since(t: tuple[float, float]) -> str:
    w, c = clock()
    return f"{w - t[0]:.1f} s wall, {c - t[1]:.1f} s CPU"


def simulated_battles(n: int, M: int, seed: int = 0, opponents: int = 30, style: bool = False) -> list[dict]:
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 1, M)
    # a sparse schedule: each model meets ~opponents others
    pairs = {
        tuple(sorted((a, int(b)))) for a in range(M) for b in rng.choice(M, opponents // 2, replace=False) if a != b
    }
    pairs = np.array(sorted(pairs))
    pick = pairs[rng.integers(0, len(pairs), n)]
    swap = rng.random(n) < 0.5
    a = np.where(swap, pick[:, 1], pick[:, 0])
    b = np.where(swap, pick[:, 0], pick[:, 1])
    p = 1 / (1 + np.exp(strength[b] - strength[a]))
    u = rng.random(n)
    win = rng.random(n) < p
    names = np.array(["model_a", "model_b", "tie", "tie (bothbad)"])
    code = np.where(u < 0.12, 2, np.where(u < 0.18, 3, np.where(win, 0, 1)))
    models = [f"model-{k:03d}" for k in range(M)]
    ts = 1.7e9 + np.sort(rng.random(n)) * 3e7
    rows = [
        {"model_a": models[x], "model_b": models[y], "winner": w, "tstamp": t, "anony": True}
        for x, y, w, t in zip(a.tolist(), b.tolist(), names[code].tolist(), ts.tolist())
    ]
    if style:  # FastChat's conv_metadata: the style control rule runs too
        tok = rng.integers(50, 2000, (n, 2)).tolist()
        md = rng.integers(0, 6, (n, 6)).tolist()
        for row, t, m in zip(rows, tok, md):
            row["conv_metadata"] = {
                "sum_assistant_a_tokens": t[0],
                "sum_assistant_b_tokens": t[1],
                "header_count_a": {"h1": m[0]},
                "header_count_b": {"h1": m[1]},
                "list_count_a": {"ordered": m[2]},
                "list_count_b": {"ordered": m[3]},
                "bold_count_a": {"**": m[4]},
                "bold_count_b": {"**": m[5]},
            }
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--battles", type=int, default=2_000_000)
    ap.add_argument("--models", type=int, default=250)
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--skip-simulated", action="store_true")
    ap.add_argument("--style", action="store_true", help="battles carry conv_metadata (style control runs)")
    args = ap.parse_args()
    from leaderboard_audit.arena.audit import audit_arena
    from leaderboard_audit.arena.data import read_battles, read_counts

    print(f"load average at start: {os.getloadavg()}")
    t = clock()
    pc = read_counts(SHIPPED)
    rep = audit_arena(pc, n_boot=args.boot)
    print(
        f"shipped counts ({pc.n_battles:,} battles, {len(pc.models)} models, {args.boot} resamples): {since(t)}; "
        f"stages { ({k: round(v, 1) for k, v in rep['timing_s'].items()}) }; "
        f"champions {sorted({m for ms in rep['champions'].values() for m in ms})}; {len(rep['identified']['tiers'])} tiers"
    )
    print(f"load average: {os.getloadavg()}")
    if args.skip_simulated:
        return
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "clean_battle_simulated.json"
        t = clock()
        path.write_text(json.dumps(simulated_battles(args.battles, args.models, style=args.style)))
        print(f"simulated file written ({path.stat().st_size / 1e6:.0f} MB): {since(t)}")
        t = clock()
        bt = read_battles(path)
        print(f"read {len(bt.a):,} battles x {len(bt.models)} models: {since(t)}")
        rep = audit_arena(bt.pair_counts(), bt, n_boot=args.boot)
        print(
            f"read + audit ({args.boot} resamples): {since(t)}; stages "
            f"{ ({k: round(v, 1) for k, v in rep['timing_s'].items()}) }; {rep['pairs']} pairs"
        )
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
