"""The API engine against hostile servers: no redirects (no key leak), a total deadline per
request, bounded bodies (issue 25: B06, B10, B12)."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from leaderboard_audit.collect.engines.fake import ByteTokenizer
from leaderboard_audit.collect.engines.openai_engine import APIError, OpenAIEngine

KEY = "sk-secret-do-not-leak"


def _serve(host: str, handler: type) -> ThreadingHTTPServer:
    srv = ThreadingHTTPServer((host, 0), handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


class Other(BaseHTTPRequestHandler):
    """The other host: records what it was sent and answers like an API would."""

    seen: list[tuple[str, str, str | None]] = []

    def log_message(self, *a: Any) -> None:
        pass

    def do_GET(self) -> None:
        Other.seen.append((self.command, self.path, self.headers.get("Authorization")))
        body = json.dumps({"data": [{"id": "m"}], "choices": [{"index": 0, "text": "A", "token_ids": [65]}]}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET


def _hostile(mode: str, other_url: str = "") -> type:
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a: Any) -> None:
            pass

        def do_GET(self) -> None:
            self.answer()

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.answer()

        def answer(self) -> None:
            try:
                if mode == "redirect":
                    self.send_response(302)
                    self.send_header("Location", other_url + self.path)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                elif mode == "slowloris":
                    self.send_response(200)
                    self.send_header("Content-Length", "100000")
                    self.end_headers()
                    for _ in range(200):
                        self.wfile.write(b" ")
                        self.wfile.flush()
                        time.sleep(0.1)
                elif mode in ("huge", "huge500", "huge_chunked"):
                    self.send_response(500 if mode == "huge500" else 200)
                    n = 64 * 2**20
                    if mode == "huge_chunked":
                        self.send_header("Transfer-Encoding", "chunked")
                    else:
                        self.send_header("Content-Length", str(n))
                    self.end_headers()
                    chunk = b"A" * 2**20
                    for _ in range(64):
                        if mode == "huge_chunked":
                            self.wfile.write(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
                        else:
                            self.wfile.write(chunk)
            except OSError:
                pass

    return H


def _engine(url: str, **kw: Any) -> OpenAIEngine:
    opts = dict(base_url=url + "/v1", tokenizer=ByteTokenizer(), timeout_s=1.0, max_retries=0, concurrency=1)
    opts.update(kw)
    return OpenAIEngine("unused", api_key_env="HOSTILE_KEY", **opts)


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("HOSTILE_KEY", KEY)


def _other_host() -> str:
    try:
        socket.create_server(("127.0.0.2", 0)).close()
    except OSError:
        pytest.skip("127.0.0.2 is not available here")
    return "127.0.0.2"


@pytest.mark.parametrize("call", ["models", "completions"])
def test_a_redirect_to_another_host_is_refused_and_the_key_stays_home(call):
    other = _serve(_other_host(), Other)
    Other.seen = []
    srv = _serve("127.0.0.1", _hostile("redirect", f"http://127.0.0.2:{other.server_address[1]}"))
    url = f"http://127.0.0.1:{srv.server_address[1]}"
    with pytest.raises(APIError, match="redirect.*127.0.0.2.*never followed"):
        eng = _engine(url) if call == "models" else _engine(url, model="m")
        eng.generate([[65, 66]], 4)
    assert Other.seen == []


def test_a_trickling_server_hits_the_total_deadline():
    srv = _serve("127.0.0.1", _hostile("slowloris"))
    eng = _engine(f"http://127.0.0.1:{srv.server_address[1]}", model="m", timeout_s=1.0)
    t = time.monotonic()
    with pytest.raises(APIError, match="timed out"):
        eng.generate([[65, 66]], 4)
    assert time.monotonic() - t < 4


@pytest.mark.parametrize("mode", ["huge", "huge_chunked"])
def test_a_huge_body_is_refused_at_the_limit(mode):
    srv = _serve("127.0.0.1", _hostile(mode))
    eng = _engine(f"http://127.0.0.1:{srv.server_address[1]}", model="m", max_response_mb=1)
    with pytest.raises(APIError, match="over|bytes"):
        eng.generate([[65, 66]], 4)


def test_a_huge_error_body_is_read_only_as_far_as_the_message_needs():
    from leaderboard_audit.collect.engines import http_client

    srv = _serve("127.0.0.1", _hostile("huge500"))
    with pytest.raises(http_client.HTTPStatus) as e:
        http_client.request(
            "GET",
            f"http://127.0.0.1:{srv.server_address[1]}/v1/models",
            headers={},
            body=None,
            timeout_s=5,
            deadline_s=5,
            max_bytes=1 << 30,
        )
    assert e.value.code == 500 and len(e.value.text) == http_client.ERROR_BYTES


def test_max_response_mb_must_be_positive():
    with pytest.raises(ValueError, match="max_response_mb"):
        _engine("http://127.0.0.1:9", model="m", max_response_mb=0)


class _Fixed(BaseHTTPRequestHandler):
    body = b""

    def log_message(self, *a: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)


@pytest.mark.parametrize(
    ("body", "call", "match"),
    [
        (
            b'{"choices":[{"index":0,"text":"","prompt_logprobs":[null,{"66":{"logprob":NaN}}]}]}',
            "score",
            "log-probability nan",
        ),
        (
            b'{"choices":[{"index":0,"text":"","prompt_logprobs":[null,{"66":{"logprob":Infinity}}]}]}',
            "score",
            "log-probability inf",
        ),
        (b'{"choices":[{"index":0,"text":"","token_ids":[1000000000000000000000000000000]}]}', "gen", "token_ids"),
    ],
)
def test_nonfinite_logprobs_and_huge_token_ids_are_named_errors(body, call, match):
    handler = type("H", (_Fixed,), {"body": body})
    srv = _serve("127.0.0.1", handler)
    eng = _engine(f"http://127.0.0.1:{srv.server_address[1]}", model="m")
    with pytest.raises(APIError, match=match):
        eng.score([([65, 66], 1)]) if call == "score" else eng.generate([[65, 66]], 4)


@pytest.mark.parametrize("call", ["score", "gen"])
def test_a_deeply_nested_json_answer_is_malformed_json_not_a_traceback(call):
    """C12: ``[`` x 200,000 made json.loads raise RecursionError straight out of _call (d0b4150
    caught ValueError only): retried, then an APIError naming it."""
    handler = type("H", (_Fixed,), {"body": b"[" * 200_000 + b"]" * 200_000})
    srv = _serve("127.0.0.1", handler)
    eng = _engine(f"http://127.0.0.1:{srv.server_address[1]}", model="m", max_retries=1)
    with pytest.raises(APIError, match=r"gave up after 2 attempts.*malformed JSON \(nested too deeply\)"):
        eng.score([([65, 66], 1)]) if call == "score" else eng.generate([[65, 66]], 4)


def test_an_answer_of_too_many_json_values_is_refused_before_it_is_decoded():
    """48 MB of ``{},`` (under the 256 MiB body bound) would decode to ~1.2 GB of dicts."""
    from leaderboard_audit.records.safe_io import MAX_JSON_VALUES

    handler = type("H", (_Fixed,), {"body": b"[" + b"{}," * (MAX_JSON_VALUES // 2 + 1) + b"{}]"})
    srv = _serve("127.0.0.1", handler)
    eng = _engine(f"http://127.0.0.1:{srv.server_address[1]}", model="m", timeout_s=30.0)
    with pytest.raises(APIError, match=r"the response holds up to [\d,]+ JSON values"):
        eng.generate([[65, 66]], 4)


def test_a_missing_transformers_is_a_collect_error_with_the_install_hint(monkeypatch):
    import sys

    from leaderboard_audit.collect.engines.hf_tok import HFTokenizer
    from leaderboard_audit.collect.errors import CollectError

    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(CollectError, match=r"pip install 'leaderboard-audit\[collect\]'"):
        HFTokenizer("some/model")


def test_the_collect_cli_names_an_api_failure_without_a_traceback(monkeypatch, capsys):
    from leaderboard_audit.collect import cli

    def down(_a):
        raise APIError("POST http://127.0.0.1:9/v1/completions: gave up after 2 attempts; last: URLError")

    monkeypatch.setattr(cli, "_run", down)
    assert cli.main(["spec.toml"]) == 4
    err = capsys.readouterr().err
    assert "spec.toml" in err and "gave up after 2 attempts" in err and "Traceback" not in err
