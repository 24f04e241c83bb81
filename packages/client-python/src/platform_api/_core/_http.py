"""The transport: one HTTP exchange, on the standard library's `http.client`.

`http.client` rather than `urllib.request`: urllib opens a new connection (and TLS handshake)
for every request, while this keeps one connection per host and thread alive. It reads proxy
settings from the environment itself (`http.client` does not), follows no redirects, and
decompresses gzip.
"""

from __future__ import annotations

import gzip
import http.client
import socket
import ssl
import threading
import time
import urllib.parse
import urllib.request
import zlib
from base64 import b64encode
from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional, Protocol, Tuple

from .._exceptions import APIConnectionError, APITimeoutError
from ._headers import Headers

__all__ = [
    "Headers",
    "HTTPRequest",
    "HTTPResponse",
    "Transport",
    "HTTPClientTransport",
    "REPLAYABLE_METHODS",
]

#: Methods a repeated request cannot change the outcome of (RFC 9110 §9.2.2).
REPLAYABLE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})

@dataclass(frozen=True)
class HTTPRequest:
    method: str
    url: str
    headers: Mapping[str, str]
    body: Optional[bytes] = None
    #: When set, a 2xx response's body is handed to it in chunks as it arrives instead of being
    #: kept in `HTTPResponse.body` (which stays empty); other statuses are buffered as usual. A
    #: transport that ignores it returns the body, and the client hands that over in one piece.
    sink: Optional[Callable[[bytes], object]] = None


@dataclass(frozen=True)
class HTTPResponse:
    status: int
    headers: Headers
    body: bytes = b""
    reason: str = ""


class Transport(Protocol):
    """Sends one request and returns the complete response, whatever its status (a 2xx body
    goes to `request.sink` instead when one is set and the transport streams).

    Raise `APITimeoutError` when `timeout` runs out and `APIConnectionError` when no response
    arrives (a plain `OSError` or `TimeoutError` is mapped to those too). Replace the default
    with `PlatformClient(transport=...)`, e.g. to record traffic in tests. Must be thread-safe
    if the client is shared between threads.
    """

    def send(self, request: HTTPRequest, *, timeout: float, connect_timeout: float) -> HTTPResponse: ...

    def close(self) -> None: ...


_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})


class _Pool:
    def __init__(self) -> None:
        self.connections: Dict[Tuple[str, str, int], http.client.HTTPConnection] = {}


class HTTPClientTransport:
    """The default transport: `http.client`, one kept-alive connection per host and thread."""

    def __init__(
        self,
        *,
        ssl_context: Optional[ssl.SSLContext] = None,
        proxies: Optional[Mapping[str, str]] = None,
    ) -> None:
        # The system trust store, never a bundled CA file that goes stale.
        self._ssl_context = ssl_context or ssl.create_default_context()
        self._proxies: Mapping[str, str] = (
            proxies if proxies is not None else urllib.request.getproxies()
        )
        self._local = threading.local()
        self._all: List[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def send(self, request: HTTPRequest, *, timeout: float, connect_timeout: float) -> HTTPResponse:
        deadline = time.monotonic() + timeout
        url = urllib.parse.urlsplit(request.url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise APIConnectionError(
                f"{request.method} {request.url}: not an http(s) URL", request.method, request.url
            )
        headers = {name.lower(): value for name, value in request.headers.items()}
        headers.setdefault("accept-encoding", "gzip")
        replayable = (
            request.method.upper() in REPLAYABLE_METHODS or "idempotency-key" in headers
        )
        try:
            for reused_attempt in (True, False):
                conn, reused = self._connection(url, connect_timeout, deadline, fresh=not reused_attempt)
                try:
                    return self._exchange(conn, url, request, headers, deadline)
                except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
                        ConnectionAbortedError):
                    self._discard(url)
                    # A kept-alive connection the server had already closed: the request never
                    # reached it, so one more try on a new connection is safe when replaying is.
                    if not (reused and replayable and reused_attempt):
                        raise
                except BaseException:
                    self._discard(url)
                    raise
            raise AssertionError("unreachable")  # pragma: no cover
        except APIConnectionError:
            raise
        except (socket.timeout, TimeoutError) as error:
            raise APITimeoutError(
                f"{request.method} {request.url} got no complete response within {timeout:g} s",
                request.method,
                request.url,
            ) from error
        except (OSError, http.client.HTTPException, zlib.error, EOFError) as error:
            raise APIConnectionError(
                f"{request.method} {request.url} could not reach the API: {_describe(error)}",
                request.method,
                request.url,
            ) from error

    def close(self) -> None:
        with self._lock:
            connections, self._all = self._all, []
        for conn in connections:
            conn.close()

    # --- internals -------------------------------------------------------------------------

    def _pool(self) -> _Pool:
        pool: Optional[_Pool] = getattr(self._local, "pool", None)
        if pool is None:
            pool = _Pool()
            self._local.pool = pool
        return pool

    @staticmethod
    def _key(url: urllib.parse.SplitResult) -> Tuple[str, str, int]:
        port = url.port or (443 if url.scheme == "https" else 80)
        return (url.scheme, url.hostname or "", port)

    def _discard(self, url: urllib.parse.SplitResult) -> None:
        conn = self._pool().connections.pop(self._key(url), None)
        if conn is not None:
            conn.close()
            with self._lock:
                if conn in self._all:
                    self._all.remove(conn)

    def _connection(
        self,
        url: urllib.parse.SplitResult,
        connect_timeout: float,
        deadline: float,
        *,
        fresh: bool,
    ) -> Tuple[http.client.HTTPConnection, bool]:
        key = self._key(url)
        pool = self._pool()
        conn = None if fresh else pool.connections.get(key)
        if conn is not None and conn.sock is not None:
            return conn, True
        if conn is not None:
            self._discard(url)
        scheme, host, port = key
        timeout = max(0.001, min(connect_timeout, deadline - time.monotonic()))
        proxy = self._proxy_for(scheme, host)
        if proxy is None:
            conn = (
                http.client.HTTPSConnection(host, port, timeout=timeout, context=self._ssl_context)
                if scheme == "https"
                else http.client.HTTPConnection(host, port, timeout=timeout)
            )
        else:
            proxy_url = urllib.parse.urlsplit(proxy)
            proxy_port = proxy_url.port or (443 if proxy_url.scheme == "https" else 80)
            proxy_headers: Dict[str, str] = {}
            if proxy_url.username is not None:
                credentials = f"{urllib.parse.unquote(proxy_url.username)}:{urllib.parse.unquote(proxy_url.password or '')}"
                proxy_headers["Proxy-Authorization"] = "Basic " + b64encode(credentials.encode()).decode()
            if scheme == "https":
                conn = http.client.HTTPSConnection(
                    proxy_url.hostname or "", proxy_port, timeout=timeout, context=self._ssl_context
                )
                conn.set_tunnel(host, port, headers=proxy_headers)
            else:
                conn = _HTTPProxyConnection(proxy_url.hostname or "", proxy_port, timeout=timeout)
                conn.proxy_headers = proxy_headers
        conn.connect()
        pool.connections[key] = conn
        with self._lock:
            self._all.append(conn)
        return conn, False

    def _proxy_for(self, scheme: str, host: str) -> Optional[str]:
        # Loopback never goes through a proxy (a local test server, a sidecar).
        if host in _LOOPBACK or host.startswith("127."):
            return None
        proxy = self._proxies.get(scheme)
        if not proxy:
            return None
        no_proxy = self._proxies.get("no")
        if no_proxy is not None and _bypass(host, no_proxy):
            return None
        return proxy

    def _exchange(
        self,
        conn: http.client.HTTPConnection,
        url: urllib.parse.SplitResult,
        request: HTTPRequest,
        headers: Dict[str, str],
        deadline: float,
    ) -> HTTPResponse:
        target = url.path or "/"
        if url.query:
            target += "?" + url.query
        if isinstance(conn, _HTTPProxyConnection):
            target = urllib.parse.urlunsplit((url.scheme, url.netloc, target, "", ""))
            for name, value in conn.proxy_headers.items():
                headers.setdefault(name.lower(), value)
        _set_timeout(conn, deadline)
        conn.putrequest(request.method.upper(), target, skip_accept_encoding=True)
        for name, value in headers.items():
            conn.putheader(name, value)
        if request.body is not None:
            conn.putheader("content-length", str(len(request.body)))
        conn.endheaders(request.body)
        response = conn.getresponse()
        gzipped = response.getheader("content-encoding", "").lower() == "gzip"
        sink = request.sink if 200 <= response.status < 300 else None
        # Streamed: each chunk goes to the sink (decompressed as it comes), so memory stays bounded.
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS) if sink is not None and gzipped else None
        chunks: List[bytes] = []
        while True:
            # Re-armed per read, so the whole attempt (not each read) is bounded by `timeout`.
            _set_timeout(conn, deadline)
            # read1: at most one socket read per call, so the deadline is checked between reads.
            chunk = response.read1(65536)
            if not chunk:
                break
            if sink is None:
                chunks.append(chunk)
            elif inflate is not None:
                data = inflate.decompress(chunk)
                if data:
                    sink(data)
            else:
                sink(chunk)
        if response.length:
            # read1 ends quietly when the connection closes early: a cut-off body is an error,
            # not a shorter file.
            raise http.client.IncompleteRead(b"", response.length)
        if inflate is not None and sink is not None:
            tail = inflate.flush()
            if tail:
                sink(tail)
        # Marks the response finished, which lets the connection send the next request.
        response.close()
        body = b"".join(chunks)
        if gzipped and body:
            body = gzip.decompress(body)
        if response.will_close:
            self._discard(url)
        return HTTPResponse(
            status=response.status,
            headers=Headers(response.getheaders()),
            body=body,
            reason=response.reason,
        )


class _HTTPProxyConnection(http.client.HTTPConnection):
    """A connection to a plain-http proxy: requests carry the absolute URL as their target."""

    proxy_headers: Dict[str, str] = {}


def _set_timeout(conn: http.client.HTTPConnection, deadline: float) -> None:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise socket.timeout("timed out")
    if conn.sock is not None:
        conn.sock.settimeout(remaining)


def _bypass(host: str, no_proxy: str) -> bool:
    host = host.lower()
    for entry in no_proxy.replace(" ", "").split(","):
        entry = entry.lower().lstrip(".")
        if entry == "*" or (entry and (host == entry or host.endswith("." + entry))):
            return True
    return False


def _describe(error: BaseException) -> str:
    text = str(error) or type(error).__name__
    return f"{type(error).__name__}: {text}" if text != type(error).__name__ else text
