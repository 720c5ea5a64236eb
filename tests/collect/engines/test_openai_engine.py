"""The OpenAI-compatible engine against a local HTTP server on 127.0.0.1 (stdlib, in a thread).

The server serves the deterministic fake engine (tests/ has no real model), so
records collected through HTTP must equal the in-process fake engine's byte for
byte; scripted faults (429, 500, time-outs, malformed JSON, 400) exercise the
retry paths. Every test is bounded: short time-outs, small backoffs, few retries.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from leaderboard_audit.collect.engines.fake import ByteTokenizer, FakeEngine
from leaderboard_audit.collect.engines.openai_engine import APIError, OpenAIEngine, retry_after_seconds
from leaderboard_audit.collect.run import collect
from helpers.collect import arc_lines
from helpers.openai_stub import StubServer

KEY = "sk-test-0123456789abcdef"


@pytest.fixture
def server():
    s = StubServer()
    yield s
    s.close()


def _engine(server: StubServer, **kw: Any) -> OpenAIEngine:
    opts: dict[str, Any] = {
        "base_url": server.url,
        "tokenizer": ByteTokenizer(),
        "backoff_s": 0.01,
        "max_backoff_s": 0.05,
        "timeout_s": 5.0,
        "max_retries": 3,
    }
    opts.update(kw)
    return OpenAIEngine("unused", **opts)


PROMPTS = [ByteTokenizer().encode(f"Question {i}: pick one\nAnswer:") for i in range(7)]
REQS = [(ByteTokenizer().encode(f"Stem {i} option {j}"), 8) for i in range(3) for j in range(4)]


@pytest.mark.parametrize("dialect", ["vllm", "openai"])
@pytest.mark.parametrize("per_request", [1, 3, 0])
def test_results_equal_the_engine_behind_the_server(server, dialect, per_request):
    eng = _engine(server, dialect=dialect, prompts_per_request=per_request, concurrency=3)
    assert eng.model == "fake-m"  # the one served model, found at /v1/models
    ref = FakeEngine("fake-m")
    assert eng.generate(PROMPTS, 8) == ref.generate(PROMPTS, 8)
    assert eng.score(REQS) == ref.score(REQS)
    gen = [b for b in server.seen if "max_tokens" in b and b["max_tokens"] == 8]
    assert all(b["temperature"] == 0.0 and b["top_p"] == 1.0 and b["seed"] == 1234 for b in gen)
    if dialect == "vllm":
        assert all(b["stop_token_ids"] == [0] and b["ignore_eos"] and isinstance(b["prompt"][0], list) for b in gen)
    else:
        assert all("stop_token_ids" not in b and "echo" not in b for b in gen)
        assert all(b["echo"] and b["max_tokens"] == 0 for b in server.seen if b.get("logprobs") == 0)
    n_req = {1: 7, 3: 3, 0: 1}[per_request]
    assert len(gen) == n_req


def test_chat_generation_and_its_refusal_to_score(server):
    eng = _engine(server, api="chat", concurrency=2)
    ref = FakeEngine("fake-m")
    # the chat path sends text; the stub re-encodes it with BOS, as the collector's tokenizer does
    assert eng.generate(PROMPTS, 8) == ref.generate(PROMPTS, 8)
    assert all("messages" in b for b in server.seen)
    with pytest.raises(APIError, match="chat.*cannot score"):
        eng.score(REQS)


def test_concurrency_limit_is_respected(server):
    server.delay = 0.3  # long enough that two requests overlap even on a loaded machine
    eng = _engine(server, concurrency=2, prompts_per_request=1)
    eng.generate(PROMPTS, 8)
    assert server.max_inflight == 2


def test_429_waits_for_retry_after(server):
    eng = _engine(server)
    server.fault(429, headers={"Retry-After": "0.3"})
    t = time.monotonic()
    assert eng.generate(PROMPTS[:1], 8) == FakeEngine("fake-m").generate(PROMPTS[:1], 8)
    assert time.monotonic() - t >= 0.3 and eng.retries == 1


def test_retry_after_forms():
    assert retry_after_seconds("2") == 2.0
    assert retry_after_seconds(None) is None and retry_after_seconds("soon") is None
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412490.0) == 0.0


def test_500_is_retried_then_gives_up_with_the_last_error(server):
    eng = _engine(server)
    server.fault(500, times=2)
    assert eng.generate(PROMPTS[:1], 8) == FakeEngine("fake-m").generate(PROMPTS[:1], 8)
    assert eng.retries == 2
    server.fault(503, body=b"overloaded", times=10)
    t = time.monotonic()
    with pytest.raises(APIError, match=r"gave up after 4 attempts; last: HTTP 503 overloaded"):
        eng.generate(PROMPTS[:1], 8)
    assert time.monotonic() - t < 2.0


def test_timeouts_are_retried_and_bounded(server):
    eng = _engine(server, timeout_s=0.2, max_retries=2)
    server.fault(200, sleep=0.6)  # answers too late once
    assert eng.generate(PROMPTS[:1], 8) == FakeEngine("fake-m").generate(PROMPTS[:1], 8)
    server.fault(200, sleep=0.6, times=3)
    t = time.monotonic()
    with pytest.raises(APIError, match="gave up after 3 attempts; last: .*timed out"):
        eng.generate(PROMPTS[:1], 8)
    assert time.monotonic() - t < 2.5


def test_malformed_json_and_wrong_shapes_are_retried(server):
    eng = _engine(server)
    server.fault(200, body=b'{"choices": [')
    server.fault(200, body=b'{"choices": []}')
    assert eng.score(REQS[:1]) == FakeEngine("fake-m").score(REQS[:1])
    assert eng.retries == 2
    server.fault(200, body=b"<html>proxy error</html>", times=4)
    with pytest.raises(APIError, match="malformed JSON"):
        eng.score(REQS[:1])


def test_client_errors_fail_at_once_with_the_server_message(server):
    eng = _engine(server)
    server.fault(400, body=b'{"error": {"message": "max_tokens too large"}}')
    with pytest.raises(APIError, match="HTTP 400.*max_tokens too large"):
        eng.generate(PROMPTS[:1], 8)
    assert eng.retries == 0


def test_a_server_without_logprobs_gets_a_clear_error():
    s = StubServer(logprobs=False)
    try:
        for dialect, what in (("vllm", "no prompt_logprobs"), ("openai", "no logprobs with echo")):
            eng = _engine(s, dialect=dialect)
            with pytest.raises(APIError, match=what):
                eng.score(REQS[:2])
    finally:
        s.close()


def test_several_served_models_need_a_name():
    s = StubServer(models=("a", "b"))
    try:
        with pytest.raises(APIError, match="serves 2 models"):
            _engine(s)
        assert _engine(s, model="b").model == "b"
    finally:
        s.close()


def test_bad_options_are_refused(server, monkeypatch):
    with pytest.raises(ValueError, match="never put a key"):
        _engine(server, api_key="sk-x")
    with pytest.raises(ValueError, match="unknown openai engine options: bogus"):
        _engine(server, bogus=1)
    with pytest.raises(ValueError, match="base_url"):
        OpenAIEngine("x", tokenizer=ByteTokenizer())
    monkeypatch.delenv("LA_TEST_KEY", raising=False)
    with pytest.raises(ValueError, match="LA_TEST_KEY.*unset"):
        _engine(server, api_key_env="LA_TEST_KEY")


def _bench(tmp: Path) -> str:
    arc = tmp / "arc.jsonl"
    arc.write_text(arc_lines(16))
    return str(arc)


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != "grid.json" and not p.name.endswith((".fingerprint", ".manifest.json"))
    }


def test_collect_through_the_api_equals_the_in_process_engine_and_keeps_the_key_out(server, tmp_path, monkeypatch):
    monkeypatch.setenv("LA_TEST_KEY", KEY)
    arc = _bench(tmp_path)
    base = {
        "n_items": 10,
        "chunk_items": 4,
        "benchmarks": ["arc"],
        "benchmark_files": {"arc": arc},
        "models": [{"name": "m", "path": "fake-m"}],
    }
    ref = collect(dict(base, output=str(tmp_path / "ref"), engine="fake"), progress=False)
    opts = {
        "base_url": server.url,
        "api_key_env": "LA_TEST_KEY",
        "prompts_per_request": 0,
        "concurrency": 2,
        "backoff_s": 0.01,
    }
    spec = dict(base, output=str(tmp_path / "api"), engine="openai", engine_options=opts)

    def factory(m):
        return OpenAIEngine(m.path, tokenizer=ByteTokenizer(), **opts)

    server.fault(429, headers={"Retry-After": "0"})  # a rate limit mid-run changes nothing
    got = collect(spec, progress=False, engine_factory=factory)
    assert _tree(got) == _tree(ref)
    assert set(server.auth) == {"Bearer " + KEY}
    for p in got.rglob("*"):
        if p.is_file():
            assert KEY.encode() not in p.read_bytes(), p
    grid = json.loads((got / "grid.json").read_text())
    assert grid["collector"]["engine_options"]["api_key_env"] == "LA_TEST_KEY"
    # 3 chunks x (1 generation + 1 scoring) requests, one retried 429
    assert len(server.seen) == 7
