"""One HTTP request with a total deadline, a byte limit and no redirects (the API engine's client).

``urllib`` follows redirects to any host with every header (the API key included), its
time-out limits each socket read (a server trickling one byte a second never times out)
and ``read()`` takes the whole body whatever its size. This client, on ``http.client``:

* never follows a redirect: a 3xx answer is an :class:`HTTPStatus` like any other status;
* ends every request at ``deadline_s`` after it started, however the server trickles
  (a watchdog shuts the socket down), with ``timeout_s`` as the per-read limit;
* reads at most ``max_bytes`` of a body (a larger ``Content-Length`` is refused before
  reading), and at most ``ERROR_BYTES`` of an error body.

Proxies from the environment (``https_proxy``/``http_proxy``, ``no_proxy``) are honoured
for non-loopback hosts, as urllib did.
"""

from __future__ import annotations

import http.client
import socket
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass

ERROR_BYTES = 600
CHUNK = 1 << 16
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class DeadlineExceeded(TimeoutError):
    """The request did not finish within its total deadline."""


class BodyTooLarge(ValueError):
    """The response body is larger than the limit."""


@dataclass
class HTTPStatus(Exception):
    """A non-2xx answer: its status, headers and the first ``ERROR_BYTES`` of its body."""

    code: int
    headers: http.client.HTTPMessage
    text: str

    def __str__(self) -> str:
        return f"HTTP {self.code} {self.text}"


def _connection(url: urllib.parse.SplitResult, timeout_s: float) -> tuple[http.client.HTTPConnection, str]:
    """The connection to open and the request target (a full URL through an http proxy)."""
    host, port = url.hostname or "", url.port
    target = (url.path or "/") + (f"?{url.query}" if url.query else "")
    proxy = None
    if host not in LOOPBACK and not urllib.request.proxy_bypass(host):
        proxy = urllib.request.getproxies().get(url.scheme)
    cls = http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
    if proxy:
        p = urllib.parse.urlsplit(proxy if "://" in proxy else "http://" + proxy)
        if url.scheme == "https":
            conn = http.client.HTTPSConnection(p.hostname or "", p.port, timeout=timeout_s)
            conn.set_tunnel(host, port)
            return conn, target
        return http.client.HTTPConnection(p.hostname or "", p.port, timeout=timeout_s), url.geturl()
    return cls(host, port, timeout=timeout_s), target


def _read_body(resp: http.client.HTTPResponse, limit: int, deadline: float, truncate: bool) -> bytes:
    length = resp.getheader("Content-Length")
    if not truncate and length is not None and length.strip().isdigit() and int(length) > limit:
        raise BodyTooLarge(f"the response body is {int(length):,} bytes (limit {limit:,})")
    buf = bytearray()
    while len(buf) <= limit:
        if time.monotonic() > deadline:
            raise DeadlineExceeded("timed out: the response body did not arrive within the deadline")
        chunk = resp.read1(min(CHUNK, limit + 1 - len(buf)))
        if not chunk:
            if resp.length:  # cut short (by the server, or by the watchdog at the deadline)
                raise http.client.IncompleteRead(bytes(buf), resp.length)
            return bytes(buf)
        buf += chunk
    if truncate:
        return bytes(buf[:limit])
    raise BodyTooLarge(f"the response body is over {limit:,} bytes (the limit)")


def request(
    method: str,
    url: str,
    *,
    headers: dict[str, str],
    body: bytes | None,
    timeout_s: float,
    deadline_s: float,
    max_bytes: int,
) -> bytes:
    """The body of a 2xx answer. Raises :class:`HTTPStatus` (any other status, redirects
    included), :class:`DeadlineExceeded`, :class:`BodyTooLarge`, or ``OSError`` /
    ``http.client.HTTPException`` for transport failures."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"unsupported URL scheme {parts.scheme!r} in {url!r}")
    start = time.monotonic()
    deadline = start + deadline_s
    conn, target = _connection(parts, min(timeout_s, deadline_s))
    expired = threading.Event()

    def cut() -> None:  # the watchdog: whatever the server does, the request ends at the deadline
        expired.set()
        sock = conn.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    watchdog = threading.Timer(deadline_s, cut)
    watchdog.daemon = True
    watchdog.start()
    try:
        conn.request(method, target, body=body, headers=headers)
        resp = conn.getresponse()
        if not 200 <= resp.status < 300:
            text = _read_body(resp, ERROR_BYTES, deadline, truncate=True).decode("utf-8", "replace")
            raise HTTPStatus(resp.status, resp.headers, text)
        return _read_body(resp, max_bytes, deadline, truncate=False)
    except (OSError, http.client.HTTPException) as exc:
        if expired.is_set() or time.monotonic() > deadline:
            raise DeadlineExceeded(f"timed out: no complete answer within {deadline_s:g} s") from exc
        raise
    finally:
        watchdog.cancel()
        conn.close()


__all__ = ["BodyTooLarge", "DeadlineExceeded", "HTTPStatus", "request"]
