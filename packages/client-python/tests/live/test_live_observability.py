"""What a developer debugs an integration with, against the real server: an endpoint's 24-hour
stats, replaying its failed deliveries, the request log and the usage per hour."""

from __future__ import annotations

import datetime as dt
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import List

import platform_api

from .conftest import unique


class FailingThenOk:
    """A receiver on 127.0.0.1 that answers 500 to the first `failures` posts, then 204."""

    def __init__(self, failures: int) -> None:
        self.bodies: List[bytes] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                with receiver.lock:
                    receiver.bodies.append(body)
                    status = 500 if len(receiver.bodies) <= failures else 204
                self.send_response(status)
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/hooks"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_stats_and_replay_of_an_endpoint_that_failed(client: platform_api.PlatformClient) -> None:
    # The first attempt and its three retries (the live server retries after 1 s, 2 s and 5 s)
    # fail, so the delivery ends failed; the replay's attempt then gets a 204.
    receiver = FailingThenOk(failures=4)
    try:
        since = dt.datetime.now(dt.timezone.utc) - dt.timedelta(minutes=1)
        endpoint = client.webhook_endpoints.create(url=receiver.url, events=["student.created"])
        student = client.students.create(student_number=unique("S-"), first_name="Ob", last_name="Served")
        deadline = time.monotonic() + 30
        statuses: List[str] = []
        while time.monotonic() < deadline:
            statuses = [d.status for d in client.webhook_endpoints.deliveries(endpoint.id)]
            if statuses == ["failed"]:
                break
            time.sleep(0.2)
        assert statuses == ["failed"]
        stats = client.webhook_endpoints.stats(endpoint.id)
        assert (stats.endpoint_id, stats.attempts, stats.succeeded, stats.failed) == (endpoint.id, 4, 0, 4)
        assert stats.success_rate == 0

        replay = client.webhook_endpoints.replay_failed(endpoint.id, since=since)
        assert (replay.object, replay.queued) == ("webhook_replay", 1)
        deadline = time.monotonic() + 20
        delivered: List[bytes] = []
        while time.monotonic() < deadline:
            with receiver.lock:
                delivered = [b for b in receiver.bodies if student.id.encode() in b]
            if len(delivered) == 5:
                break
            time.sleep(0.1)
        assert len(delivered) == 5
        client.webhook_endpoints.delete(endpoint.id)
    finally:
        receiver.close()


def test_the_request_log_and_usage_show_the_calls_just_made(client: platform_api.PlatformClient) -> None:
    student = client.students.create(student_number=unique("S-"), first_name="Log", last_name="Ged")
    client.students.retrieve(student.id)
    # Entries are written in batches about a second after their response.
    deadline = time.monotonic() + 10
    found = None
    while found is None and time.monotonic() < deadline:
        found = next(iter(client.request_logs.list(route="/v1/students/:id", method="GET")), None)
        if found is None:
            time.sleep(0.2)
    assert found is not None
    assert found.status == 200
    assert student.id not in found.route
    assert client.request_logs.retrieve(found.id) == found

    usage = client.usage.retrieve()
    assert usage.object == "usage"
    assert len(usage.requests) == 168
    assert len(usage.webhook_deliveries) == 168
