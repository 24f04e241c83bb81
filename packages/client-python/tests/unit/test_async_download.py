"""`AsyncPlatformClient.stream` and `exports.download_to` (httpx) against the scripted servers
on 127.0.0.1 that the sync transport's tests use: the same download rules, asynchronously."""

from __future__ import annotations

import asyncio
import gzip
import tracemalloc
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest

import platform_api

from . import test_transport
from .test_transport import EXPORT_FILE, Handler, ScriptedServer, send_json

# The sync transport's scripted-server fixture.
serve = test_transport.serve

EXPORT: Dict[str, Any] = {
    "id": "exp_1",
    "object": "export",
    "collection": "students",
    "format": "ndjson",
    "filters": {},
    "row_count": 2000,
    "size_bytes": len(EXPORT_FILE),
    "cursor": "1.Xk3aB9_-q1",
    "error": None,
    "created_at": "2026-11-28T10:00:00.000Z",
    "completed_at": None,
    "expires_at": None,
}


def async_client_for(server: ScriptedServer, **options: Any) -> platform_api.AsyncPlatformClient:
    async def no_sleep(seconds: float) -> None:
        sleeps.append(seconds)

    sleeps: List[float] = options.pop("sleeps", [])
    return platform_api.AsyncPlatformClient(token="pat_test", base_url=server.url, sleep=no_sleep, **options)


def send_file(handler: BaseHTTPRequestHandler, data: bytes, *, gzipped: bool = False) -> None:
    body = gzip.compress(data) if gzipped else data
    handler.send_response(200)
    handler.send_header("Content-Type", "application/x-ndjson")
    if gzipped:
        handler.send_header("Content-Encoding", "gzip")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def test_an_export_download_is_retried_after_a_503_and_streamed_decompressed(
    serve: Callable[[Handler], ScriptedServer], tmp_path: Path
) -> None:
    authorizations: List[str] = []

    def script(handler: BaseHTTPRequestHandler, index: int) -> None:
        authorizations.append(handler.headers.get("authorization", ""))
        if index == 0:
            send_json(handler, 503, {"status": 503}, {"Retry-After": "0"})
            return
        send_file(handler, EXPORT_FILE, gzipped=True)

    server = serve(script)
    target = tmp_path / "students.ndjson"
    sleeps: List[float] = []

    async def run() -> int:
        async with async_client_for(server, sleeps=sleeps) as client:
            return await client.exports.download_to("exp_1", target)

    assert asyncio.run(run()) == len(EXPORT_FILE)
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

    async def run() -> None:
        async with async_client_for(server) as client:
            await client.exports.download_to("exp_1", str(target))

    with pytest.raises(platform_api.ConflictError) as raised:
        asyncio.run(run())
    assert raised.value.status_code == 409
    assert raised.value.detail == "Export exp_1 is expired: it has no file"
    assert not target.exists()


def test_a_download_cut_off_mid_body_is_refused_and_not_sent_again(
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

    async def run() -> None:
        async with async_client_for(server, max_retries=2, sleeps=sleeps) as client:
            await client.exports.download_to("exp_1", tmp_path / "students.ndjson")

    with pytest.raises(platform_api.APIConnectionError) as raised:
        asyncio.run(run())
    assert "cut short" in str(raised.value)
    # Part of the file was already written: a retry would have repeated it.
    assert len(server.seen) == 1 and sleeps == []


def test_a_large_download_streams_to_a_file_with_bounded_memory(
    serve: Callable[[Handler], ScriptedServer], tmp_path: Path
) -> None:
    big = EXPORT_FILE * 120  # about 8 MB
    server = serve(lambda h, i: send_file(h, big))
    target = tmp_path / "students.ndjson"

    async def run() -> int:
        async with async_client_for(server) as client:
            return await client.exports.download_to("exp_1", target)

    tracemalloc.start()
    try:
        size = asyncio.run(run())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert size == len(big) and target.read_bytes() == big
    # Reading the body whole would need at least the file's size; streaming needs chunks.
    assert peak < len(big) // 4, f"peak memory {peak} B for a {len(big)} B file"


def test_stream_awaits_a_coroutine_sink_and_waits_for_the_export_first(
    serve: Callable[[Handler], ScriptedServer],
) -> None:
    def script(handler: BaseHTTPRequestHandler, index: int) -> None:
        if index == 0:
            send_json(handler, 200, {**EXPORT, "status": "running"})
        elif index == 1:
            send_json(handler, 200, {**EXPORT, "status": "succeeded"})
        else:
            send_file(handler, EXPORT_FILE)

    server = serve(script)
    chunks: List[bytes] = []

    async def sink(chunk: bytes) -> None:
        await asyncio.sleep(0)
        chunks.append(chunk)

    async def run() -> Any:
        async with async_client_for(server) as client:
            done = await client.exports.wait("exp_1", interval=0.01, timeout=5)
            response = await client.stream(f"/v1/exports/{done.id}/file", sink)
            return done, response

    done, response = asyncio.run(run())
    assert done.status == "succeeded"
    assert response.status_code == 200 and response.content == b""
    assert b"".join(chunks) == EXPORT_FILE and len(chunks) > 1
