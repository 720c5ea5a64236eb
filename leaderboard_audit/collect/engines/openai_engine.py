"""An engine for models behind an OpenAI-compatible HTTP API (``vllm serve``, TGI, hosted APIs).

It plugs into the same runner as the in-process engines (same chunks, same
checkpoints, same resume): the collector tokenizes prompts with the model's
HF tokenizer (the spec's model ``path``) and this engine sends them.

Generation (``api = "completions"``): ``POST /v1/completions`` with greedy
decoding (temperature 0, top_p 1, seed 1234, ``max_tokens``). With
``dialect = "vllm"`` (default) prompts go as token ids, the engine asks for
``return_token_ids`` and sends the collector's EOS set as ``stop_token_ids``
with ``ignore_eos``, exactly as the in-process vLLM engine does; with
``dialect = "openai"`` only standard fields are sent, prompts as text (the
token ids decoded, special tokens dropped, so the server adds its own), and
the answer text is re-encoded. ``api = "chat"`` sends each prompt's text as
one user turn to ``/v1/chat/completions`` (the server's chat template applies).

Likelihood: ``dialect = "vllm"`` asks for ``prompt_logprobs = 0`` and reads
the logprob of each prompt token; ``dialect = "openai"`` uses ``echo = true``
with ``logprobs = 0`` and ``max_tokens = 0`` and reads
``logprobs.token_logprobs``. A server that returns neither gets a clear error
(chat endpoints cannot score at all).

Robustness: at most ``concurrency`` requests in flight; HTTP 429 waits for
``Retry-After`` (else exponential backoff), 408/5xx, time-outs, dropped
connections and malformed JSON are retried up to ``max_retries`` times with
backoff; other 4xx fail at once with the server's message. Requests go through
``http_client``: ``timeout_s`` is each request's total deadline (however slowly a server
trickles its answer), a body is read up to ``max_response_mb`` (default 256), an error
body up to 600 bytes, and a redirect is never followed (it would carry the key to
another host): it fails with the address it pointed to. The API key is read
from the environment variable named by ``api_key_env`` at each request and is
never stored in options, records or grid.json. See docs/collect.md ("Models
behind an API").
"""

from __future__ import annotations

import email.utils
import http.client
import json
import math
import os
import random
import threading
import time
import urllib.parse
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from . import http_client
from . import engine
from .base import cut_at_eos

OPTIONS = (
    "base_url",
    "model",
    "api",
    "dialect",
    "api_key_env",
    "concurrency",
    "prompts_per_request",
    "timeout_s",
    "max_response_mb",
    "max_retries",
    "backoff_s",
    "max_backoff_s",
    "tokenizer",
)
RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class APIError(RuntimeError):
    """A request that failed for good (or a server that cannot do what the grid needs)."""


class _Retryable(Exception):
    def __init__(self, why: str, wait: float | None = None) -> None:
        super().__init__(why)
        self.wait = wait


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """``Retry-After``: delta seconds or an HTTP date (RFC 9110, 10.2.3); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


MAX_TOKEN_ID = 2**31


def _finite_logprob(value: Any, position: int) -> float:
    """A log-probability from the server: a finite number at most 0 (else APIError)."""
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        x = math.nan
    if not (math.isfinite(x) and x <= 1e-6):
        raise APIError(f"the server returned the log-probability {str(value)[:40]} at prompt position {position}")
    return x


@engine("openai", "http", description="an OpenAI-compatible API", local_weights=False)
class OpenAIEngine:
    name = "openai"

    def __init__(
        self,
        model_path: str,
        *,
        dtype: str = "auto",
        base_url: str | None = None,
        model: str | None = None,
        api: str = "completions",
        dialect: str = "vllm",
        api_key_env: str | None = None,
        concurrency: int = 4,
        prompts_per_request: int = 1,
        timeout_s: float = 120.0,
        max_response_mb: float = 256.0,
        max_retries: int = 5,
        backoff_s: float = 1.0,
        max_backoff_s: float = 60.0,
        tokenizer: Any = None,
        **unknown: Any,
    ) -> None:
        if "api_key" in unknown:
            raise ValueError(
                "engine option api_key: never put a key in the spec (it would be written to "
                'grid.json); export it and name the variable: api_key_env = "MY_KEY_VAR"'
            )
        if unknown:
            raise ValueError(
                f"unknown openai engine options: {', '.join(sorted(unknown))}; known: {', '.join(OPTIONS)}"
            )
        if not base_url:
            raise ValueError('the openai engine needs engine_options.base_url, e.g. "http://127.0.0.1:8000/v1"')
        if api not in ("completions", "chat"):
            raise ValueError(f'api = {api!r}: choose "completions" or "chat"')
        if dialect not in ("vllm", "openai"):
            raise ValueError(
                f'dialect = {dialect!r}: choose "vllm" (token ids, prompt_logprobs) or "openai" (standard fields only)'
            )
        if api == "chat" and int(prompts_per_request) != 1:
            raise ValueError('api = "chat" sends one prompt per request; drop prompts_per_request')
        if api_key_env is not None and not os.environ.get(api_key_env):
            raise ValueError(f"api_key_env = {api_key_env!r} but that environment variable is unset or empty")
        self.base_url = base_url.rstrip("/")
        if not self.base_url.endswith("/v1"):
            self.base_url += "/v1"
        self.api, self.dialect, self.api_key_env = api, dialect, api_key_env
        self.concurrency = max(1, int(concurrency))
        self.per_request = int(prompts_per_request)  # 0: a whole engine call in one request
        self.timeout_s, self.max_retries = float(timeout_s), int(max_retries)
        self.backoff_s, self.max_backoff_s = float(backoff_s), float(max_backoff_s)
        if not float(max_response_mb) > 0:
            raise ValueError(f"max_response_mb = {max_response_mb!r}: must be a positive number of MiB")
        self.max_response_bytes = int(min(float(max_response_mb), 1 << 20) * 1024 * 1024)
        if tokenizer is None or isinstance(tokenizer, str):
            from .hf_tok import HFTokenizer

            tokenizer = HFTokenizer(tokenizer or model_path)
        self.tokenizer = tokenizer
        self.requests = self.retries = 0
        self._count = threading.Lock()
        self.model = model or self._only_served_model()

    # ------------------------------------------------------------------ HTTP

    def _headers(self) -> dict[str, str]:
        h = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key_env:
            h["Authorization"] = "Bearer " + os.environ.get(self.api_key_env, "")
        return h

    def _once(self, method: str, path: str, body: dict[str, Any] | None) -> Any:
        url = self.base_url + path
        data = None if body is None else json.dumps(body).encode()
        try:
            raw = http_client.request(
                method,
                url,
                headers=self._headers(),
                body=data,
                timeout_s=self.timeout_s,
                deadline_s=self.timeout_s,
                max_bytes=self.max_response_bytes,
            )
        except http_client.HTTPStatus as e:
            if 300 <= e.code < 400:
                where = urllib.parse.urlsplit(urllib.parse.urljoin(url, e.headers.get("Location") or ""))
                raise APIError(
                    f"{method} {url}: HTTP {e.code} redirects to {where.scheme}://{where.netloc}{where.path}; "
                    "redirects are never followed (the API key would go with them): set base_url to the "
                    "server's real address"
                ) from None
            if e.code in RETRY_STATUS:
                raise _Retryable(
                    str(e), retry_after_seconds(e.headers.get("Retry-After")) if e.code in (429, 503) else None
                ) from None
            raise APIError(f"{method} {url}: HTTP {e.code}: {e.text}") from None
        except http_client.BodyTooLarge as e:
            raise APIError(f"{method} {url}: {e}; raise engine_options.max_response_mb if that is expected") from None
        except (OSError, http.client.HTTPException) as e:  # refused, reset, deadline, cut bodies
            raise _Retryable(f"{type(e).__name__}: {getattr(e, 'reason', e)}") from e
        from ...records.safe_io import json_values_problem

        why = json_values_problem(raw)  # 256 MB of '{},' would decode to ~6 GB of objects
        if why is not None:
            raise APIError(f"{method} {url}: the response {why}")
        try:
            return json.loads(raw)
        except RecursionError:  # '[' x 200,000: json.loads recurses once per level (C12)
            raise _Retryable("malformed JSON (nested too deeply)") from None
        except ValueError as e:
            raise _Retryable(f"malformed JSON ({raw[:120]!r})") from e

    def _call(self, method: str, path: str, body: dict[str, Any] | None, check: Any = None) -> Any:
        """One request with retries; ``check(obj)`` raises ValueError on a response of the wrong shape."""
        last = ""
        for attempt in range(self.max_retries + 1):
            with self._count:
                self.requests += 1
                self.retries += bool(attempt)
            try:
                obj = self._once(method, path, body)
                if check is not None:
                    try:
                        check(obj)
                    except (ValueError, KeyError, TypeError, IndexError) as e:
                        raise _Retryable(f"unexpected response shape: {e}") from e
                return obj
            except _Retryable as r:
                last = str(r)
                if attempt == self.max_retries:
                    break
                if r.wait is not None:  # the server's Retry-After, honoured (up to 10 minutes)
                    time.sleep(min(r.wait, max(self.max_backoff_s, 600.0)))
                else:
                    time.sleep(min(self.max_backoff_s, self.backoff_s * 2**attempt * (1 + 0.25 * random.random())))
        raise APIError(f"{method} {self.base_url}{path}: gave up after {self.max_retries + 1} attempts; last: {last}")

    def _only_served_model(self) -> str:
        obj = self._call("GET", "/models", None, check=lambda o: o["data"][0]["id"])
        ids = [m["id"] for m in obj["data"]]
        if len(ids) != 1:
            raise APIError(
                f"{self.base_url}/models serves {len(ids)} models ({', '.join(ids[:8])}); "
                "name one with the model option"
            )
        return str(ids[0])

    def _batches(self, n: int) -> list[range]:
        size = n if self.per_request <= 0 else self.per_request
        return [range(lo, min(n, lo + size)) for lo in range(0, n, max(1, size))]

    def _map(self, fn: Any, batches: list[range]) -> list[Any]:
        if len(batches) == 1 or self.concurrency == 1:
            return [fn(b) for b in batches]
        with ThreadPoolExecutor(max_workers=self.concurrency) as ex:
            return list(ex.map(fn, batches))

    @staticmethod
    def _choices(obj: Any, n: int) -> list[dict[str, Any]]:
        ch = sorted(obj["choices"], key=lambda c: int(c["index"]))
        if [int(c["index"]) for c in ch] != list(range(n)):
            raise ValueError(f"{len(ch)} choices for {n} prompts")
        return ch

    def _prompt(self, ids: Sequence[int]) -> Any:
        return list(ids) if self.dialect == "vllm" else self.tokenizer.decode(ids)

    # ------------------------------------------------------------------ engine API

    def generate(self, prompts: Sequence[Sequence[int]], max_tokens: int, *, seed: int = 1234) -> list[list[int]]:
        eos = self.tokenizer.eos_ids
        common: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens,
            "temperature": 0.0,
            "top_p": 1.0,
            "seed": seed,
            "n": 1,
        }
        if self.dialect == "vllm":
            common.update(
                stop_token_ids=sorted(eos),
                ignore_eos=True,
                return_token_ids=True,
                repetition_penalty=1.0,
                skip_special_tokens=True,
            )

        def one(b: range) -> list[list[int]]:
            if self.api == "chat":
                (i,) = b
                body = dict(common, messages=[{"role": "user", "content": self.tokenizer.decode(prompts[i])}])
                obj = self._call(
                    "POST",
                    "/chat/completions",
                    body,
                    check=lambda o: str(self._choices(o, 1)[0]["message"]["content"] or ""),
                )
                return [self._reencode(self._choices(obj, 1)[0]["message"]["content"] or "")]
            ps = [self._prompt(prompts[i]) for i in b]
            body = dict(common, prompt=ps if len(ps) > 1 or self.dialect == "vllm" else ps[0])
            obj = self._call("POST", "/completions", body, check=lambda o: self._gen_ids(o, len(ps)))
            return self._gen_ids(obj, len(ps))

        out = [x for part in self._map(one, self._batches(len(prompts))) for x in part]
        return [cut_at_eos(o, eos)[:max_tokens] for o in out]

    def _gen_ids(self, obj: Any, n: int) -> list[list[int]]:
        res = []
        for c in self._choices(obj, n):
            ids = c.get("token_ids")
            if ids is not None:
                if not all(type(t) is int and 0 <= t < MAX_TOKEN_ID for t in ids):
                    raise ValueError(f"token_ids must be ids from 0 to {MAX_TOKEN_ID - 1}, got {str(ids)[:80]}")
                res.append(list(ids))
            else:
                res.append(self._reencode(str(c["text"])))
        return res

    def _reencode(self, text: str) -> list[int]:
        """An answer text as ids, without the special tokens ``encode`` puts in front (e.g. BOS)."""
        ids, pre = self.tokenizer.encode(text), self.tokenizer.encode("")
        return ids[len(pre) :] if ids[: len(pre)] == pre else ids

    def score(self, requests: Sequence[tuple[Sequence[int], int]]) -> list[list[float]]:
        if self.api == "chat":
            raise APIError(
                'api = "chat" cannot score the likelihood configurations (chat endpoints return '
                'no prompt log-probabilities); use api = "completions" or a grid without ll| configs'
            )
        reqs = list(requests)
        body: dict[str, Any] = {"model": self.model, "temperature": 0.0, "n": 1}
        if self.dialect == "vllm":
            body.update(max_tokens=1, prompt_logprobs=0, repetition_penalty=1.0)
        else:
            body.update(max_tokens=0, echo=True, logprobs=0)

        def one(b: range) -> list[list[float]]:
            sub = [reqs[i] for i in b]
            ps = [self._prompt(ids) for ids, _ in sub]
            q = dict(body, prompt=ps if len(ps) > 1 or self.dialect == "vllm" else ps[0])
            obj = self._call("POST", "/completions", q, check=lambda o: self._choices(o, len(ps)))
            return [self._prompt_logprobs(c, ids, start) for c, (ids, start) in zip(self._choices(obj, len(ps)), sub)]

        return [x for part in self._map(one, self._batches(len(reqs))) for x in part]

    def _prompt_logprobs(self, choice: dict[str, Any], ids: Sequence[int], start: int) -> list[float]:
        if self.dialect == "vllm":
            pl = choice.get("prompt_logprobs")
            if not pl or len(pl) < len(ids):
                raise APIError(
                    f"{self.base_url}/completions returned no prompt_logprobs: this server cannot "
                    'score likelihood configurations with dialect = "vllm"; try dialect = '
                    '"openai" (echo + logprobs), or a grid without ll| configs'
                )
            out = []
            for t in range(start, len(ids)):
                d = pl[t] or {}
                e = d.get(str(ids[t]), d.get(ids[t]))  # type: ignore[call-overload]
                if e is None:
                    raise APIError(f"prompt_logprobs at position {t} lacks the prompt token {ids[t]}")
                out.append(_finite_logprob(e["logprob"] if isinstance(e, dict) else e, t))
            return out
        lp = (choice.get("logprobs") or {}).get("token_logprobs")
        if not lp:
            raise APIError(
                f"{self.base_url}/completions returned no logprobs with echo = true: this server "
                "cannot score likelihood configurations (it must support echo with logprobs, as "
                "vllm serve does); use a grid without ll| configs"
            )
        # The text drops the prompt's special prefix (BOS), which the server may or may not add
        # back; the option tokens sit at the end either way, so align from the end.
        pre = len(self.tokenizer.encode(""))
        if len(lp) not in (len(ids), len(ids) - pre):
            raise APIError(
                f"echo returned {len(lp)} prompt tokens for {len(ids)}: the server tokenizes the "
                'text differently from the spec\'s tokenizer; use dialect = "vllm" (token ids)'
            )
        tail = lp[len(lp) - (len(ids) - start) :]
        return [_finite_logprob(x, len(lp) - len(tail) + j) for j, x in enumerate(tail)]

    def close(self) -> None:
        pass
