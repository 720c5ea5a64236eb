"""Cut the vendored test data under tests/data/ (committed output; see the READMEs there).

    python tests/data/make_slices.py [--shared ../shared]

1. ``benchmarks/``: ``ROWS_PER_FILE`` rows of each Parquet file in ``<shared>/benchmarks``, taken at
   evenly spaced row positions (so MMLU spans many subjects), plus the first ``EXTRA_FILTERED``
   rows that the item conversion rejects (ARC without exactly four choices, TruthfulQA with fewer
   than three mc1 distractors), in file order. Written with pyarrow from ``Table.take``: the
   schema, including its pandas metadata, is the source file's.
2. ``lm-eval-samples/SmolLM2-135M-Instruct/``: every file of the four runs copied byte for byte,
   except each ``samples_*.jsonl``, cut to its first ``LL_DOCS`` (likelihood runs) or ``GEN_DOCS``
   (generation runs) lines, byte for byte. The ``results_*.json`` files are the harness's own and
   describe the full 200/100-document runs.
3. ``lm-eval-samples/synthetic__metabench-format/``: *synthetic* logs in the layout of metabench's
   lm-eval logs (tasks ``metabench_{arc,mmlu}_{secondary,secondary_permute,permute}``), built from
   the vendored ARC and MMLU slices with made-up log-likelihoods; no model was run. The real
   metabench logs in ``<shared>/lm-eval-samples/EleutherAI__pythia-14m`` are CC BY-NC-SA 4.0 and are
   not copied: only their file layout and field names are reproduced (they are facts of the
   lm-evaluation-harness format). This part reads only the vendored slices.

Re-running with the same ``<shared>`` reproduces the committed bytes (the Parquet writer version aside).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROWS_PER_FILE = 40
EXTRA_FILTERED = 2
LL_DOCS = 40          # arc_challenge_local, arc_challenge_local_bare
GEN_DOCS = 20         # arc_challenge_local_gen, arc_challenge_local_gen_chat (a prefix of the LL docs)
BENCHMARK_FILES = ("ai2_arc/ARC-Challenge-test.parquet", "hellaswag/validation.parquet", "mmlu/test.parquet",
                   "truthful_qa/multiple_choice-validation.parquet")
SMOL = "SmolLM2-135M-Instruct"
SYNTH = "synthetic__metabench-format"
SYNTH_TS = {"permute": "2026-01-01T10-00-00.000000", "secondary": "2026-01-01T11-00-00.000000",
            "secondary_permute": "2026-01-01T12-00-00.000000"}
SYNTH_DOCS = {"arc": (12, 8), "mmlu": (10, 8)}     # (secondary docs, permute docs), disjoint


def _rejected(rel: str, row: dict) -> bool:
    if rel.startswith("ai2_arc"):
        return len(row["choices"]["text"]) != 4
    if rel.startswith("truthful_qa"):
        return sum(1 for x in row["mc1_targets"]["labels"] if x == 0) < 3
    return False


def slice_benchmarks(shared: Path, out: Path) -> None:
    import pyarrow.parquet as pq

    for rel in BENCHMARK_FILES:
        table = pq.read_table(shared / "benchmarks" / rel)
        n = table.num_rows
        keep = {round(i * (n - 1) / (ROWS_PER_FILE - 1)) for i in range(ROWS_PER_FILE)}
        rejected = [i for i, row in enumerate(table.to_pylist()) if _rejected(rel, row)]
        keep |= set(rejected[:EXTRA_FILTERED])
        dst = out / "benchmarks" / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table.take(sorted(keep)), dst, compression="zstd")


def slice_smollm2(shared: Path, out: Path) -> None:
    src = shared / "lm-eval-samples" / SMOL
    for run in sorted(p for p in src.iterdir() if p.is_dir()):
        dst = out / "lm-eval-samples" / SMOL / run.name
        dst.mkdir(parents=True, exist_ok=True)
        for f in sorted(run.iterdir()):
            if f.name.startswith("samples_") and f.suffix == ".jsonl":
                keep = GEN_DOCS if "_gen" in run.name else LL_DOCS
                with open(f, "rb") as fh:
                    lines = fh.readlines()[:keep]
                (dst / f.name).write_bytes(b"".join(lines))
            else:
                shutil.copyfile(f, dst / f.name)


# ------------------------------------------------------------------ synthetic metabench-format logs
def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _loglik(option: str, run: str, doc_id: int, j: int) -> float:
    """Made-up log-likelihood: longer options are less likely, plus a small run-dependent jitter
    (bf16 values shift with batch composition), rounded to bf16-like steps."""
    jitter = int(_sha(f"{run}|{doc_id}|{j}|{option}")[:8], 16) / 0xFFFFFFFF
    base = -1.5 * len(option.split()) - 4.0 * (int(_sha(option)[:8], 16) / 0xFFFFFFFF)
    return round((base - 0.5 * jitter) * 64) / 64


def _permutation(key: str) -> list[int]:
    order = sorted(range(4), key=lambda j: _sha(f"{key}|{j}"))
    return order if order != [0, 1, 2, 3] else [1, 2, 3, 0]


def _arc_doc(row: dict, idx: int, order: list[int] | None) -> dict:
    texts = list(row["choices"]["text"])
    gold = list(row["choices"]["label"]).index(row["answerKey"])
    if order is not None:
        texts, gold = [texts[j] for j in order], order.index(gold)
    return {"id": row["id"], "question": row["question"], "choices": {"label": ["A", "B", "C", "D"], "text": texts},
            "answerKey": "ABCD"[gold], "metabench_idx": idx, "original_hash": _sha(json.dumps(row, sort_keys=True))}


def _mmlu_doc(row: dict, idx: int, order: list[int] | None) -> dict:
    choices, gold = list(row["choices"]), int(row["answer"])
    if order is not None:
        choices, gold = [choices[j] for j in order], order.index(gold)
    return {"question": row["question"], "subject": row["subject"], "choices": choices, "answer": gold,
            "metabench_idx": idx, "mb_sub_idx": f"{row['subject']}.{idx}", "__index_level_0__": idx,
            "original_hash": _sha(json.dumps(row, sort_keys=True))}


def _sample(bench: str, run: str, doc_id: int, doc: dict) -> dict:
    if bench == "arc":
        prompt = f"Question: {doc['question']}\nAnswer:"
        conts = [" " + t for t in doc["choices"]["text"]]
        options = doc["choices"]["text"]
        target = doc["choices"]["label"].index(doc["answerKey"])
    else:
        lettered = "".join(f"\n{'ABCD'[j]}. {c}" for j, c in enumerate(doc["choices"]))
        prompt = f"{doc['question']}{lettered}\nAnswer:"
        conts = [" A", " B", " C", " D"]
        options = doc["choices"]
        target = doc["answer"]
    lls = [_loglik(o, run, doc_id, j) for j, o in enumerate(options)]
    best = max(range(4), key=lambda j: lls[j])
    resps = [[[str(x), "False"]] for x in lls]
    s = {"doc_id": doc_id, "doc": doc, "target": str(target),
         "arguments": {f"gen_args_{j}": {"arg_0": prompt, "arg_1": c} for j, c in enumerate(conts)},
         "resps": resps, "filtered_resps": [r[0] for r in resps],
         "doc_hash": _sha(json.dumps(doc, indent=2, ensure_ascii=False)), "prompt_hash": _sha(prompt),
         "target_hash": _sha(str(target)), "acc": float(best == target)}
    if bench == "arc":
        norm = [x / len(c) for x, c in zip(lls, conts)]
        s["acc_norm"] = float(max(range(4), key=lambda j: norm[j]) == target)
    return s


def synthetic_metabench(out: Path) -> None:
    import pyarrow.parquet as pq

    from leaderboard_audit.collect.benchmarks import arc_item  # the four-choice filter
    arc = [r for i, r in enumerate(pq.read_table(out / "benchmarks" / BENCHMARK_FILES[0]).to_pylist())
           if arc_item(i, r) is not None]
    mmlu = pq.read_table(out / "benchmarks" / BENCHMARK_FILES[2]).to_pylist()
    dst = out / "lm-eval-samples" / SYNTH
    dst.mkdir(parents=True, exist_ok=True)
    for bench, rows, make in (("arc", arc, _arc_doc), ("mmlu", mmlu, _mmlu_doc)):
        n_sec, n_perm = SYNTH_DOCS[bench]
        sec_rows, perm_rows = rows[:n_sec], rows[n_sec:n_sec + n_perm]
        runs = {"secondary": [make(r, i, None) for i, r in enumerate(sec_rows)],
                "secondary_permute": [make(r, i, _permutation(f"{bench}|{i}")) for i, r in enumerate(sec_rows)],
                "permute": [make(r, n_sec + i, _permutation(f"{bench}|p{i}")) for i, r in enumerate(perm_rows)]}
        for variant, docs in runs.items():
            task = f"metabench_{bench}_{variant}"
            lines = [json.dumps(_sample(bench, task, i, d), ensure_ascii=False) + "\n" for i, d in enumerate(docs)]
            (dst / f"samples_{task}_{SYNTH_TS[variant]}.jsonl").write_text("".join(lines), encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=HERE.parents[2] / "shared",
                    help="the workspace's shared folder (default: ../shared beside the checkout)")
    args = ap.parse_args(argv)
    for sub in ("benchmarks", "lm-eval-samples"):
        if not (args.shared / sub).is_dir():
            raise SystemExit(f"{args.shared / sub}: not found; pass --shared PATH")
    slice_benchmarks(args.shared, HERE)
    slice_smollm2(args.shared, HERE)
    synthetic_metabench(HERE)


if __name__ == "__main__":
    main()
