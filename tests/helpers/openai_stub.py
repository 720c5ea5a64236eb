"""An OpenAI-compatible HTTP server on 127.0.0.1 (stdlib, in a thread) over the deterministic
fake engine, with scripted faults: shared by the engine's tests and the budgeted collection's."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from leaderboard_audit.collect.engines.fake import ByteTokenizer, FakeEngine


class StubServer:
    """An OpenAI-compatible server over the fake engine, with a queue of scripted faults."""

    def __init__(self, models: tuple[str, ...] = ("fake-m",), logprobs: bool = True) -> None:
        self.engine = FakeEngine("fake-m")
        self.tok = ByteTokenizer()
        self.models, self.logprobs = models, logprobs
        self.faults: deque[tuple[int, dict[str, str], bytes, float]] = deque()
        self.seen: list[dict[str, Any]] = []
        self.auth: list[str | None] = []
        self.inflight = self.max_inflight = 0
        self.delay = 0.0
        self.lock = threading.Lock()
        stub = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def _send(self, code: int, body: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(code)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self) -> None:
                self._send(200, json.dumps({"data": [{"id": m} for m in stub.models]}).encode())

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with stub.lock:
                    stub.seen.append(body)
                    stub.auth.append(self.headers.get("Authorization"))
                    fault = stub.faults.popleft() if stub.faults else None
                    stub.inflight += 1
                    stub.max_inflight = max(stub.max_inflight, stub.inflight)
                # A request stops counting as in flight before its response is written: once the
                # client has read it, it may send the next request at once.
                if fault is not None:
                    code, headers, payload, sleep = fault
                    time.sleep(sleep)
                else:
                    time.sleep(stub.delay)
                    code, headers, payload = 200, None, json.dumps(stub.answer(self.path, body)).encode()
                with stub.lock:
                    stub.inflight -= 1
                if headers is None:
                    self._send(code, payload)
                else:
                    self._send(code, payload, headers)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def _ids(self, p: Any) -> list[int]:
        return list(p) if isinstance(p, list) else self.tok.encode(p)

    def answer(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        if path.endswith("/chat/completions"):
            ids = self.tok.encode(body["messages"][0]["content"])
            out = self.engine.generate([ids], body["max_tokens"])[0]
            return {"choices": [{"index": 0, "message": {"role": "assistant", "content": self.tok.decode(out)}}]}
        prompts = body["prompt"]
        if isinstance(prompts, str) or (prompts and isinstance(prompts[0], int)):
            prompts = [prompts]
        ids = [self._ids(p) for p in prompts]
        choices = []
        if body.get("prompt_logprobs") is not None or body.get("echo"):
            for i, p in enumerate(ids):
                lps = [None] + self.engine.score([(p, 1)])[0]
                c: dict[str, Any] = {"index": i, "text": ""}
                if self.logprobs and body.get("echo"):
                    c["logprobs"] = {"tokens": [str(t) for t in p], "token_logprobs": lps}
                elif self.logprobs:
                    c["prompt_logprobs"] = [None] + [
                        {str(t): {"logprob": x, "rank": 1}} for t, x in zip(p[1:], lps[1:])
                    ]
                choices.append(c)
            return {"choices": choices}
        outs = self.engine.generate(ids, body["max_tokens"])
        for i, o in enumerate(outs):
            c = {"index": i, "text": self.tok.decode(o)}
            if body.get("return_token_ids"):
                c["token_ids"] = o
            choices.append(c)
        return {"choices": choices[::-1]}  # out of order on purpose: the client sorts by index

    def fault(
        self,
        code: int,
        body: bytes = b'{"error": "x"}',
        headers: dict[str, str] | None = None,
        sleep: float = 0.0,
        times: int = 1,
    ) -> None:
        for _ in range(times):
            self.faults.append((code, headers or {}, body, sleep))

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
