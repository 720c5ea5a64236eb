"""Collector throughput, side by side: ours vs raw vLLM vs lm-evaluation-harness (same model, items, machine).

    .venv-collect/bin/python benchmarks/bench_collect.py --items 4 --benchmarks arc,mmlu \
        --lmeval-python .venv-lmeval/bin/python --json bench.jsonl

One process per engine, run one after the other on the same items (the paper's 26 configurations):

* **ours**: the collector's own path (``run_chunk``: prompt building, one batched vLLM call for the
  24 generation configs and one for the 8 option scorings per item, parsing, records lines), once with
  a batch of ``--chunk`` items per engine call (what ``chunk_items`` gave before ``batch_items``) and once
  with every item of a benchmark in one call (``batch_items``), and once with generation and scoring in
  a single vLLM call (``combined``). Bits, predictions and generated texts of the variants are compared
  (``flips``): a nonzero count means vLLM's numerics depend on the batch.
* **raw vLLM**: the same token-id prompts, one ``LLM.generate`` call per kind and benchmark (the
  batches of the "all items" variant; no prompt building, parsing or records): the engine's ceiling.
* **lm-eval**: lm-evaluation-harness 0.4.13's HF backend (``HFLM``, batch size 16, same dtype) on the
  same prompt texts through its own ``generate_until`` (8 new tokens, greedy) and ``loglikelihood``
  requests, in the ``lmeval`` extra's environment (``--lmeval-python``).

Reported: generations/s, scored options/s, and item-configurations/s of the whole grid (for raw vLLM
and lm-eval: 26 / (24 / generations per s + 8 / scored options per s) per item). The machine's load
average is printed before and after: on a shared machine only same-run ratios mean anything.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

N_GEN, N_SCORED = 24, 8  # per item under the paper's grid


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def _items(benchmarks: list[str], n: int, bench_dir: str) -> dict[str, list[Any]]:
    from leaderboard_audit.collect.benchmarks import load_items, local_file

    return {b: load_items(b, n, files=str(local_file(b, bench_dir))) for b in benchmarks}


def _grid_rate(gen_per_s: float, opt_per_s: float) -> float:
    return 26 / (N_GEN / gen_per_s + N_SCORED / opt_per_s)


class Timed:
    """Wraps an engine: times generate/score (or the combined run) separately."""

    def __init__(self, e: Any, combined: bool) -> None:
        self.e, self.tokenizer, self.name = e, e.tokenizer, e.name
        self.gen_s = self.score_s = self.run_s = 0.0
        self.n_gen = self.n_opt = 0
        if combined:
            self.run = self._run

    def generate(self, prompts, max_tokens, *, seed=1234):
        t = time.perf_counter()
        out = self.e.generate(prompts, max_tokens, seed=seed)
        self.gen_s += time.perf_counter() - t
        self.n_gen += len(prompts)
        return out

    def score(self, reqs):
        t = time.perf_counter()
        out = self.e.score(reqs)
        self.score_s += time.perf_counter() - t
        self.n_opt += len(reqs)
        return out

    def _run(self, prompts, max_tokens, reqs, *, seed=1234):
        t = time.perf_counter()
        out = self.e.run(prompts, max_tokens, reqs, seed=seed)
        self.run_s += time.perf_counter() - t
        self.n_gen += len(prompts)
        self.n_opt += len(reqs)
        return out


def run_ours(a: argparse.Namespace) -> list[dict[str, Any]]:
    from leaderboard_audit.collect.engines import make_engine
    from leaderboard_audit.collect.harness import paper_harness
    from leaderboard_audit.collect.models import resolve_model_path
    from leaderboard_audit.collect.cells import gen_prompt_ids, ll_requests, run_chunk

    h = paper_harness()
    items = _items(a.benchmarks.split(","), a.items, a.benchmarks_dir)
    t = time.perf_counter()
    eng = make_engine("vllm", resolve_model_path(a.model), dtype=a.dtype, options=json.loads(a.engine_options))
    load_s = time.perf_counter() - t
    results, outputs = [], {}
    variants = [
        (f"ours, batch = chunk of {a.chunk} items", a.chunk, False),
        (f"ours, batch = all {a.items} items of a benchmark", a.items, False),
        ("ours, one combined call per batch", a.items, True),
    ]
    for rep in range(a.repeats):
        for name, batch, combined in variants:
            te = Timed(eng, combined)
            lines = []
            t = time.perf_counter()
            la = _load()
            for b, its in items.items():
                for lo in range(0, len(its), batch):
                    cl, cr = run_chunk(
                        te, h, its[lo : lo + batch], benchmark=b, model="m", chat_template=False, combined=combined
                    )
                    lines += [(x, r) for x, r in zip(cl, cr)]
            dt = time.perf_counter() - t
            n = sum(len(v) for v in items.values())
            row = {
                "engine": name,
                "rep": rep,
                "items": n,
                "wall_s": round(dt, 1),
                "item_configs_per_s": round(n * 26 / dt, 2),
                "load_before": la,
                "load_after": _load(),
            }
            if not combined:
                row.update(
                    generations_per_s=round(te.n_gen / te.gen_s, 2),
                    scored_options_per_s=round(te.n_opt / te.score_s, 2),
                )
            results.append(row)
            outputs.setdefault(name, lines)
    # bits / predictions / texts that differ between the variants (0 = batch-invariant here)
    base = outputs[variants[0][0]]
    for name, _, _ in variants[1:]:
        other = outputs[name]
        bits = preds = texts = margins = 0
        for (x, r), (y, s) in zip(base, other):
            for k in x["correct"]:
                bits += x["correct"][k] != y["correct"][k]
                preds += x["pred"][k] != y["pred"][k]
            texts += sum(r["gen"][k] != s["gen"][k] for k in r["gen"])
            margins += sum(x["margin"][k] != y["margin"][k] for k in x["margin"])
        results.append(
            {
                "compare": f"{variants[0][0]} vs {name}",
                "bits_differ": bits,
                "preds_differ": preds,
                "texts_differ": texts,
                "margins_differ": margins,
                "item_configs": len(base) * 26,
            }
        )
    # raw vLLM: the same prompts, one call per kind and benchmark (the batches of "all items of a
    # benchmark"), nothing around them
    tok = eng.tokenizer
    per_b = [
        (
            [gen_prompt_ids(tok, c, it, False) for it in its for c in h.gen_configs],
            [r for it in its for c in h.ll_configs for r in ll_requests(tok, c, it, " ")],
        )
        for its in items.values()
    ]
    for rep in range(a.repeats):
        la = _load()
        tg = ts = 0.0
        for prompts, reqs in per_b:
            t = time.perf_counter()
            eng.generate(prompts, 8)
            tg += time.perf_counter() - t
            t = time.perf_counter()
            eng.score(reqs)
            ts += time.perf_counter() - t
        g, o = sum(len(p) for p, _ in per_b) / tg, sum(len(r) for _, r in per_b) / ts
        results.append(
            {
                "engine": "raw vLLM (one call per kind and benchmark)",
                "rep": rep,
                "generations_per_s": round(g, 2),
                "scored_options_per_s": round(o, 2),
                "item_configs_per_s": round(_grid_rate(g, o), 2),
                "load_before": la,
                "load_after": _load(),
            }
        )
    eng.close()
    for r in results:
        r.update(model=a.model, dtype=a.dtype, load_s=round(load_s, 1))
    return results


def run_lmeval(a: argparse.Namespace) -> list[dict[str, Any]]:
    """lm-evaluation-harness's HF backend on the same prompt texts (runs in the lmeval environment)."""
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    from leaderboard_audit.collect.harness import paper_harness
    from leaderboard_audit.collect.models import resolve_model_path

    h = paper_harness()
    items = _items(a.benchmarks.split(","), a.items, a.benchmarks_dir)
    gen_texts, ll = [], []
    for its in items.values():
        for it in its:
            for c in h.gen_configs:
                gen_texts.append(c.template.render_gen(it.question, it.options, c.permutation))
            for c in h.ll_configs:
                stem = c.template.render_stem(it.question)
                ll += [(stem, " " + o) for o in it.options]
    t = time.perf_counter()
    dtype = a.lmeval_dtype or a.dtype
    lm = HFLM(pretrained=resolve_model_path(a.model), dtype=dtype, batch_size=a.lmeval_batch, device="cpu")
    load_s = time.perf_counter() - t
    out = []
    for rep in range(a.repeats):
        la = _load()
        gi = [
            Instance("generate_until", {}, (x, {"until": [], "max_gen_toks": 8, "do_sample": False}), i)
            for i, x in enumerate(gen_texts)
        ]
        t = time.perf_counter()
        lm.generate_until(gi, disable_tqdm=True)
        tg = time.perf_counter() - t
        li = [Instance("loglikelihood", {}, x, i) for i, x in enumerate(ll)]
        t = time.perf_counter()
        lm.loglikelihood(li, disable_tqdm=True)
        ts = time.perf_counter() - t
        g, o = len(gi) / tg, len(li) / ts
        out.append(
            {
                "engine": f"lm-eval 0.4.13 HF backend ({dtype}, batch {a.lmeval_batch})",
                "rep": rep,
                "generations_per_s": round(g, 2),
                "scored_options_per_s": round(o, 2),
                "item_configs_per_s": round(_grid_rate(g, o), 2),
                "load_before": la,
                "load_after": _load(),
                "model": a.model,
                "dtype": dtype,
                "load_s": round(load_s, 1),
            }
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="gguf:smollm2-135m-instruct")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--items", type=int, default=4, help="items per benchmark")
    ap.add_argument("--chunk", type=int, default=2, help="the small batch (items per engine call)")
    ap.add_argument("--benchmarks", default="arc,mmlu")
    ap.add_argument("--benchmarks-dir", default=str(Path(__file__).resolve().parents[2] / "shared" / "benchmarks"))
    ap.add_argument("--engine-options", default="{}", help="JSON, passed to the vLLM engine")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--lmeval-python", default=None, help="python of the lmeval environment (skip lm-eval if unset)")
    ap.add_argument("--lmeval-batch", type=int, default=16)
    ap.add_argument("--lmeval-dtype", default=None, help="lm-eval's dtype (default: --dtype)")
    ap.add_argument("--only", choices=["ours", "lmeval"], default=None, help=argparse.SUPPRESS)
    ap.add_argument("--json", default=None, help="append result rows (JSON lines) here")
    a = ap.parse_args()
    if a.only == "lmeval":
        rows = run_lmeval(a)
    elif a.only == "ours":
        rows = run_ours(a)
    else:
        print(f"load average before: {_load()} on {os.cpu_count()} CPUs", file=sys.stderr, flush=True)
        rows = []
        args = list(sys.argv[1:])
        rows += _sub(sys.executable, args + ["--only", "ours"])
        if a.lmeval_python:
            rows += _sub(a.lmeval_python, args + ["--only", "lmeval"])
        print(f"load average after: {_load()}", file=sys.stderr, flush=True)
        _table(rows)
    for r in rows:
        print(json.dumps(r), flush=True)
    if a.json and a.only is None:
        with open(a.json, "a") as fh:
            for r in rows:
                fh.write(json.dumps(r) + "\n")


def _sub(python: str, args: list[str]) -> list[dict[str, Any]]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    r = subprocess.run([python, __file__, *args], capture_output=True, text=True, env=env, check=False)
    if r.returncode != 0:
        sys.stderr.write(r.stderr[-3000:])
        raise SystemExit(f"{python} failed ({r.returncode})")
    return [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]


def _table(rows: list[dict[str, Any]]) -> None:
    print("| engine | generations/s | scored options/s | item-configs/s (26-config grid) | load avg |", file=sys.stderr)
    print("|---|---|---|---|---|", file=sys.stderr)
    for r in rows:
        if "engine" in r:
            print(
                f"| {r['engine']} | {r.get('generations_per_s', '-')} | {r.get('scored_options_per_s', '-')} | "
                f"{r['item_configs_per_s']} | {r['load_before']} -> {r['load_after']} |",
                file=sys.stderr,
            )
    for r in rows:
        if "compare" in r:
            print(
                f"{r['compare']}: {r['bits_differ']} bits, {r['preds_differ']} preds, {r['texts_differ']} texts, "
                f"{r['margins_differ']} margins differ of {r['item_configs']} item-configs",
                file=sys.stderr,
            )


if __name__ == "__main__":
    main()
