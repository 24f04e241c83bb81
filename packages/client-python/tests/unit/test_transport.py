"""The real `http.client` transport against scripted servers on 127.0.0.1."""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable, Iterator, List, Tuple

import pytest

import platform_api

from .fakes import STUDENT

Handler = Callable[[BaseHTTPRequestHandler, int], None]


class ScriptedServer:
    """Calls `script(handler, index)` for the index-th request; records each request's
    client port (one port = one TCP connection) and path."""

    def __init__(self, script: Handler) -> None:
        self.seen: List[Tuple[int, str, str]] = []
        server = self

        class RequestHandler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive

            def log_message(self, format: str, *args: object) -> None:
                pass

            def handle_one(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                if length:
                    self.rfile.read(length)
                index = len(server.seen)
                server.seen.append((self.client_address[1], self.command, self.path))
                script(self, index)

            do_GET = do_POST = do_PATCH = do_DELETE = handle_one

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), RequestHandler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def send_json(handler: BaseHTTPRequestHandler, status: int, body: object, headers: dict[str, str] | None = None) -> None:
    data = json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(data)


@pytest.fixture
def serve() -> Iterator[Callable[[Handler], ScriptedServer]]:
    servers: List[ScriptedServer] = []

    def start(script: Handler) -> ScriptedServer:
        server = ScriptedServer(script)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


def client_for(server: ScriptedServer, **options: object) -> platform_api.PlatformClient:
    return platform_api.PlatformClient(token="pat_test", base_url=server.url, **options)  # type: ignore[arg-type]


def test_requests_reuse_one_kept_alive_connection(serve: Callable[[Handler], ScriptedServer]) -> None:
    server = serve(lambda h, i: send_json(h, 200, STUDENT))
    with client_for(server) as client:
        for _ in range(3):
            assert client.students.retrieve("stu_1").id == "stu_1"
    ports = {port for port, _, _ in server.seen}
    assert len(server.seen) == 3 and len(ports) == 1


def test_a_connection_the_server_closed_while_idle_is_replaced_transparently(
    serve: Callable[[Handler], ScriptedServer],
) -> None:
    def script(handler: BaseHTTPRequestHandler, index: int) -> None:
        send_json(handler, 200, STUDENT)
        handler.close_connection = True  # closes without saying so, like an idle timeout

    server = serve(script)
    with client_for(server, max_retries=0) as client:
        client.students.retrieve("stu_1")
        time.sleep(0.05)
        client.students.retrieve("stu_1")  # the stale socket fails; a new one is opened at once
    assert len(server.seen) == 2
    assert len({port for port, _, _ in server.seen}) == 2


def test_a_stale_connection_is_not_replayed_for_a_post_without_idempotency_key(
    serve: Callable[[Handler], ScriptedServer],
) -> None:
    def script(handler: BaseHTTPRequestHandler, index: int) -> None:
        send_json(handler, 201, STUDENT)
        handler.close_connection = True

    server = serve(script)
    with client_for(server, idempotency_keys=False) as client:
        client.students.create(student_number="S-1", first_name="A", last_name="B")
        time.sleep(0.05)
        with pytest.raises(platform_api.APIConnectionError):
            client.students.create(student_number="S-2", first_name="A", last_name="B")
    assert len(server.seen) == 1


def test_gzip_bodies_are_decompressed(serve: Callable[[Handler], ScriptedServer]) -> None:
    accepted: List[str] = []

    def script(handler: BaseHTTPRequestHandler, index: int) -> None:
        accepted.append(handler.headers.get("accept-encoding", ""))
        data = gzip.compress(json.dumps(STUDENT).encode())
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Encoding", "gzip")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    server = serve(script)
    with client_for(server) as client:
        assert client.students.retrieve("stu_1").first_name == "Ada"
    assert accepted == ["gzip"]


def test_the_timeout_bounds_the_whole_attempt_even_when_bytes_keep_trickling(
    serve: Callable[[Handler], ScriptedServer],
) -> None:
    def script(handler: BaseHTTPRequestHandler, index: int) -> None:
        data = json.dumps(STUDENT).encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        try:
            for byte in data:  # one byte every 50 ms: no single read ever waits 0.4 s
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
                time.sleep(0.05)
        except OSError:
            pass

    server = serve(script)
    started = time.monotonic()
    with client_for(server, timeout=0.4, max_retries=0) as client:
        with pytest.raises(platform_api.APITimeoutError) as caught:
            client.students.retrieve("stu_1")
    assert time.monotonic() - started < 2.0
    assert "within 0.4 s" in str(caught.value)


def test_a_server_that_never_answers_times_out_and_is_retried(serve: Callable[[Handler], ScriptedServer]) -> None:
    def script(handler: BaseHTTPRequestHandler, index: int) -> None:
        if index == 0:
            time.sleep(0.5)
            handler.close_connection = True
            return
        send_json(handler, 200, STUDENT)

    server = serve(script)
    sleeps: List[float] = []
    with client_for(server, timeout=0.2, sleep=sleeps.append) as client:
        assert client.students.retrieve("stu_1").id == "stu_1"
    assert len(server.seen) == 2 and len(sleeps) == 1


def test_a_refused_connection_is_a_connection_error() -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now
    client = platform_api.PlatformClient(token="pat_x", base_url=f"http://127.0.0.1:{port}", max_retries=0)
    with pytest.raises(platform_api.APIConnectionError) as caught:
        client.students.retrieve("stu_1")
    assert not isinstance(caught.value, platform_api.APITimeoutError)
    assert "could not reach the API" in str(caught.value)


def test_redirects_are_not_followed(serve: Callable[[Handler], ScriptedServer]) -> None:
    def script(handler: BaseHTTPRequestHandler, index: int) -> None:
        handler.send_response(302)
        handler.send_header("Location", "http://127.0.0.1:1/elsewhere")
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    server = serve(script)
    with client_for(server) as client:
        with pytest.raises(platform_api.APIStatusError) as caught:
            client.students.retrieve("stu_1")
    assert caught.value.status_code == 302 and len(server.seen) == 1


def test_a_real_exchange_carries_the_sdk_headers_and_json_body(serve: Callable[[Handler], ScriptedServer]) -> None:
    received: List[Tuple[dict[str, str], bytes]] = []

    def script(handler: BaseHTTPRequestHandler, index: int) -> None:
        received.append((dict(handler.headers.items()), b""))
        send_json(handler, 201, STUDENT, {"Idempotent-Replayed": "false"})

    server = serve(script)
    with client_for(server, app_info="unit/1") as client:
        raw = client.students.with_raw_response.create(student_number="S-1", first_name="Ä", last_name="B")
    headers = {k.lower(): v for k, v in received[0][0].items()}
    assert raw.status_code == 201
    assert headers["authorization"] == "Bearer pat_test"
    assert headers["content-type"] == "application/json"
    assert headers["user-agent"].startswith("unit/1 platform-api-python/")
    assert len(headers["idempotency-key"]) == 36
    assert server.seen[0][1:] == ("POST", "/v1/students")


EXPORT_FILE = b'{"id":"stu_1","first_name":"Ana"}\n' * 2000


def test_an_export_download_is_retried_after_a_503_and_streamed_decompressed(
    serve: Callable[[Handler], ScriptedServer], tmp_path: Path
) -> None:
    authorizations: List[str] = []

    def script(handler: BaseHTTPRequestHandler, index: int) -> None:
        authorizations.append(handler.headers.get("authorization", ""))
        if index == 0:
            send_json(handler, 503, {"status": 503}, {"Retry-After": "0"})
            return
        data = gzip.compress(EXPORT_FILE)
        handler.send_response(200)
        handler.send_header("Content-Type", "application/x-ndjson")
        handler.send_header("Content-Encoding", "gzip")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    server = serve(script)
    target = tmp_path / "students.ndjson"
    sleeps: List[float] = []
    with client_for(server, sleep=sleeps.append) as client:
        assert client.exports.download_to("exp_1", target) == len(EXPORT_FILE)
    # Once, decompressed, nothing of the 503.
    assert target.read_bytes() == EXPORT_FILE
    assert [path for _, _, path in server.seen] == ["/v1/exports/exp_1/file"] * 2
    assert authorizations == ["Bearer pat_test"] * 2 and len(sleeps) == 1


def test_an_expired_export_download_is_a_conflict_error_and_writes_no_file(
    serve: Callable[[Handler], ScriptedServer], tmp_path: Path
) -> None:
    problem = {
        "type": "https://example.com/problems/conflict",
        "title": "Conflict",
        "status": 409,
        "detail": "Export exp_1 is expired: it has no file",
        "code": "conflict",
    }
    server = serve(lambda h, i: send_json(h, 409, problem))
    target = tmp_path / "students.ndjson"
    with client_for(server) as client:
        with pytest.raises(platform_api.ConflictError) as raised:
            client.exports.download_to("exp_1", str(target))
    assert raised.value.status_code == 409
    assert raised.value.detail == "Export exp_1 is expired: it has no file"
    assert not target.exists()


def test_a_download_cut_off_mid_body_is_not_sent_again(
    serve: Callable[[Handler], ScriptedServer], tmp_path: Path
) -> None:
    def script(handler: BaseHTTPRequestHandler, index: int) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/x-ndjson")
        handler.send_header("Content-Length", str(len(EXPORT_FILE)))
        handler.end_headers()
        handler.wfile.write(EXPORT_FILE[:1000])
        handler.wfile.flush()
        handler.close_connection = True

    server = serve(script)
    sleeps: List[float] = []
    with client_for(server, max_retries=2, sleep=sleeps.append) as client:
        with pytest.raises(platform_api.APIConnectionError):
            client.exports.download_to("exp_1", tmp_path / "students.ndjson")
    # Part of the file was already written: a retry would have repeated it.
    assert len(server.seen) == 1 and sleeps == []
