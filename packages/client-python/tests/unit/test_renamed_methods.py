"""The names that follow the routes, and the old names kept as deprecated aliases: the change
feed as `client.changes.list/follow` (`events.changes/follow` still work), the export helpers
as `client.exports.wait/download_to` (the module functions still work, with a
`DeprecationWarning`), and `exports.download` answering the file's text."""

from __future__ import annotations

import io
import warnings
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest

import platform_api

from . import test_transport
from .feed_server import cursor, feed, query_of
from .test_async_download import EXPORT, send_file
from .test_transport import EXPORT_FILE, Handler, ScriptedServer, send_json

serve = test_transport.serve


def client_for(server: ScriptedServer) -> platform_api.PlatformClient:
    sleeps: List[float] = []
    return platform_api.PlatformClient(token="pat_test", base_url=server.url, sleep=sleeps.append, max_retries=0)


def export_then_file(statuses: List[str]) -> Handler:
    """Answers `GET /v1/exports/exp_1` with each status in turn, and the file after them."""

    def script(handler: BaseHTTPRequestHandler, index: int) -> None:
        if index < len(statuses):
            send_json(handler, 200, {**EXPORT, "status": statuses[index]})
        else:
            send_file(handler, EXPORT_FILE)

    return script


def test_changes_list_and_follow_read_the_feed_and_the_events_aliases_read_the_same(
    serve: Callable[[Handler], ScriptedServer],
) -> None:
    server = serve(feed(5))
    with client_for(server) as client:
        page = client.changes.list(after=cursor(1), limit=3)
        old_page = client.events.changes(after=cursor(1), limit=3)
        first = page.data[0].cursor
        assert first is not None
        follower = client.changes.follow(after=first, until_caught_up=True)
        positions = [event.position for event in follower]
        old_follower = client.events.follow(after=cursor(2), until_caught_up=True)
        old_positions = [event.position for event in old_follower]
    assert [event.position for event in page.data] == [2, 3, 4]
    assert [event.cursor for event in page.data] == [cursor(2), cursor(3), cursor(4)]
    assert page.next_cursor == cursor(4)
    assert old_page.to_dict() == page.to_dict()
    assert positions == old_positions == [3, 4, 5]
    assert follower.cursor == old_follower.cursor == cursor(5)
    paths = [path.split("?")[0] for _, _, path in server.seen]
    assert set(paths) == {"/v1/changes"}
    assert query_of(server.seen[0][2]) == {"after": cursor(1), "limit": "3"}


def test_exports_wait_polls_until_succeeded_and_download_answers_the_file_as_text(
    serve: Callable[[Handler], ScriptedServer],
) -> None:
    server = serve(export_then_file(["queued", "running", "succeeded"]))
    with client_for(server) as client:
        done = client.exports.wait("exp_1", interval=0.001, timeout=5)
        text = client.exports.download("exp_1")
    assert done.status == "succeeded" and done.id == "exp_1"
    assert text == EXPORT_FILE.decode()
    assert [path for _, _, path in server.seen] == ["/v1/exports/exp_1"] * 3 + ["/v1/exports/exp_1/file"]


def test_exports_wait_raises_for_a_failed_export(serve: Callable[[Handler], ScriptedServer]) -> None:
    failed: Dict[str, Any] = {**EXPORT, "status": "failed", "error": "disk full"}
    server = serve(lambda handler, _: send_json(handler, 200, failed))
    with client_for(server) as client, pytest.raises(platform_api.PlatformError, match="exp_1 failed: disk full"):
        client.exports.wait("exp_1", interval=0.001)


def test_exports_download_to_streams_into_a_path_or_an_open_file(
    serve: Callable[[Handler], ScriptedServer], tmp_path: Path
) -> None:
    server = serve(export_then_file([]))
    target = tmp_path / "students.ndjson"
    buffer = io.BytesIO()
    with client_for(server) as client:
        assert client.exports.download_to("exp_1", target) == len(EXPORT_FILE)
        assert client.exports.download_to("exp_1", buffer) == len(EXPORT_FILE)
    assert target.read_bytes() == buffer.getvalue() == EXPORT_FILE


def test_the_module_helpers_still_work_and_warn_that_they_are_deprecated(
    serve: Callable[[Handler], ScriptedServer],
) -> None:
    server = serve(export_then_file(["running", "succeeded"]))
    buffer = io.BytesIO()
    with client_for(server) as client, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        done = platform_api.wait_for_export(client, "exp_1", interval=0.001)
        size = platform_api.download_export(client, "exp_1", buffer)
    assert done.status == "succeeded"
    assert size == len(EXPORT_FILE) and buffer.getvalue() == EXPORT_FILE
    assert [(w.category, str(w.message)) for w in caught] == [
        (DeprecationWarning, "platform_api.wait_for_export(client, id) is deprecated: use client.exports.wait(id)"),
        (
            DeprecationWarning,
            "platform_api.download_export(client, id, destination) is deprecated: "
            "use client.exports.download_to(id, destination)",
        ),
    ]
    # The warning points at the caller's line, not at the SDK.
    assert all(w.filename == __file__ for w in caught)
