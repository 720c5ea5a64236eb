"""Throughput of the collector's engine: batched calls vs a one-prompt-at-a-time loop.

    .venv-collect/bin/python benchmarks/bench_collect.py --model gguf:smollm2-135m-instruct \
        --engine vllm --dtype float32 --items 5 --benchmarks mmlu --loop-items 1

Prints item-configurations per second for both paths (same prompts, same engine).
"""
from __future__ import annotations

import argparse
import json
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="gguf:smollm2-135m-instruct")
    ap.add_argument("--engine", default="vllm")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--items", type=int, default=5)
    ap.add_argument("--loop-items", type=int, default=1, help="items for the one-at-a-time loop")
    ap.add_argument("--benchmarks", default="arc,hellaswag,mmlu,truthfulqa")
    ap.add_argument("--benchmarks-dir", default="../shared/benchmarks")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()

    from leaderboard_audit.collect.benchmarks import load_items, local_file
    from leaderboard_audit.collect.engines import make_engine
    from leaderboard_audit.collect.harness import paper_harness
    from leaderboard_audit.collect.models import resolve_model_path
    from leaderboard_audit.collect.run import run_chunk

    h = paper_harness()
    items = []
    for b in a.benchmarks.split(","):
        items += [(b, it) for it in load_items(b, a.items, files=str(local_file(b, a.benchmarks_dir)))]
    t = time.perf_counter()
    eng = make_engine(a.engine, resolve_model_path(a.model, dtype=a.dtype), dtype=a.dtype)
    load_s = time.perf_counter() - t

    class OneAtATime:
        """Wraps the engine so every prompt is its own call."""
        def __init__(self, e):
            self.e, self.tokenizer, self.name = e, e.tokenizer, e.name + "-loop"
        def generate(self, prompts, max_tokens, *, seed=1234):
            return [self.e.generate([p], max_tokens, seed=seed)[0] for p in prompts]
        def score(self, reqs):
            return [self.e.score([r])[0] for r in reqs]

    res = {"model": a.model, "engine": a.engine, "dtype": a.dtype, "load_s": round(load_s, 1),
           "configs": len(h.configs)}
    by_b: dict[str, list] = {}
    for b, it in items:
        by_b.setdefault(b, []).append(it)
    t = time.perf_counter()
    n = 0
    for b, its in by_b.items():
        run_chunk(eng, h, its, benchmark=b, model="m", chat_template=False)
        n += len(its)
    dt = time.perf_counter() - t
    res.update(batched_items=n, batched_s=round(dt, 2), batched_item_configs_per_s=round(n * len(h.configs) / dt, 2))
    loop = OneAtATime(eng)
    t = time.perf_counter()
    m = 0
    for b, its in by_b.items():
        run_chunk(loop, h, its[:a.loop_items], benchmark=b, model="m", chat_template=False)
        m += len(its[:a.loop_items])
    dt = time.perf_counter() - t
    res.update(loop_items=m, loop_s=round(dt, 2), loop_item_configs_per_s=round(m * len(h.configs) / dt, 2))
    print(json.dumps(res))
    if a.json:
        with open(a.json, "a") as fh:
            fh.write(json.dumps(res) + "\n")
    eng.close()


if __name__ == "__main__":
    main()
