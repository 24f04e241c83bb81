"""Webhook endpoints and deliveries, with real deliveries verified by the SDK's verifier on a
receiver of our own (http.server on 127.0.0.1)."""

from __future__ import annotations

import threading
import time
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, List, Tuple

import platform_api
from platform_api import Webhook, types

from .conftest import position_of, unique

Delivery = Tuple[Message, bytes]  # (the handler's headers, the raw body)


class Receiver:
    def __init__(self) -> None:
        self.deliveries: List[Delivery] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                with receiver.lock:
                    # `self.headers` as http.server gives it: an email.message.Message.
                    receiver.deliveries.append((self.headers, body))
                self.send_response(204)
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/hooks/platform"

    def wait_for(self, matches: Callable[[Delivery], bool], timeout: float = 20.0) -> Delivery:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                found = [d for d in self.deliveries if matches(d)]
            if found:
                return found[-1]
            time.sleep(0.05)
        raise AssertionError("no matching delivery arrived")

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_live_deliveries_verify_and_the_endpoint_api(client: platform_api.PlatformClient) -> None:
    receiver = Receiver()
    try:
        endpoint = client.webhook_endpoints.create(url=receiver.url, events=["student.created"], description="python live")
        assert endpoint.secret.startswith("whsec_") and endpoint.enabled
        hook = Webhook(endpoint.secret)

        student = client.students.create(student_number=unique("S-"), first_name="Hook", last_name="Test")
        headers, body = receiver.wait_for(lambda d: student.id.encode() in d[1])
        event = hook.unwrap(body, headers)
        assert isinstance(event, types.StudentCreatedEvent)
        assert event.data.id == student.id and event.data.last_name == "Test"
        assert position_of(event.cursor) == event.position == int(str(headers["webhook-position"]))
        # The same check through the client, with the headers as a plain dict in another case.
        as_dict = {name.upper(): value for name, value in headers.items()}
        assert isinstance(client.webhooks.unwrap(body, as_dict, secret=endpoint.secret), types.StudentCreatedEvent)

        ping = client.webhook_endpoints.test(endpoint.id)
        assert isinstance(ping, types.WebhookDelivery) and ping.event_type == "ping"
        ping_headers, ping_body = receiver.wait_for(lambda d: d[0]["webhook-id"] == ping.id)
        ping_event = hook.unwrap(ping_body, ping_headers)
        assert isinstance(ping_event, types.PingEvent)
        assert ping_event.position is None and ping_event.cursor is None  # a ping is not a change

        deliveries = client.webhook_endpoints.deliveries(endpoint.id, event_type="ping")
        assert [d.id for d in deliveries] == [ping.id]
        deadline = time.monotonic() + 10
        while client.webhook_deliveries.retrieve(ping.id).status != "succeeded":
            assert time.monotonic() < deadline, "the ping delivery never succeeded"
            time.sleep(0.1)
        before = len(receiver.deliveries)
        retried = client.webhook_deliveries.retry(ping.id)
        assert retried.id == ping.id
        receiver.wait_for(lambda d: d[0]["webhook-id"] == ping.id and receiver.deliveries.index(d) >= before)

        # After a rotation each delivery carries two signatures: either secret verifies it.
        rotated = client.webhook_endpoints.rotate_secret(endpoint.id)
        assert rotated.secret != endpoint.secret
        second_ping = client.webhook_endpoints.test(endpoint.id)
        headers2, body2 = receiver.wait_for(lambda d: d[0]["webhook-id"] == second_ping.id)
        assert len(str(headers2["webhook-signature"]).split()) == 2
        Webhook(rotated.secret).verify(body2, headers2)
        Webhook(endpoint.secret).verify(body2, headers2)

        updated = client.webhook_endpoints.update(endpoint.id, description=None, events=["student.created", "student.updated"])
        assert updated.description is None and updated.events == ["student.created", "student.updated"]
        assert client.webhook_endpoints.retrieve(endpoint.id).events == updated.events
        assert endpoint.id in [e.id for e in client.webhook_endpoints.list(enabled="true")]
        assert client.webhook_endpoints.delete(endpoint.id).deleted is True
    finally:
        receiver.close()


def test_a_delivery_carries_its_cursor_and_a_gap_is_read_up_to_it(client: platform_api.PlatformClient) -> None:
    receiver = Receiver()
    endpoint = client.webhook_endpoints.create(url=receiver.url, events=["student.created"], description="python gap")
    try:
        hook = Webhook(endpoint.secret)

        def delivered(student_id: str) -> types.StudentCreatedEvent:
            headers, body = receiver.wait_for(lambda d: student_id.encode() in d[1])
            event = hook.unwrap(body, headers)
            assert isinstance(event, types.StudentCreatedEvent)
            return event

        first = client.students.create(student_number=unique("G-"), first_name="Gap", last_name="One")
        applied = delivered(first.id)
        assert applied.previous_position is None  # the first change of this endpoint's chain
        assert position_of(applied.cursor) == applied.position
        # A change of a type the endpoint does not subscribe to, then one we pretend was missed.
        client.courses.create(code=unique("GAP-"), title="Not subscribed")
        missed = client.students.create(student_number=unique("G-"), first_name="Gap", last_name="Missed")
        last = client.students.create(student_number=unique("G-"), first_name="Gap", last_name="Last")
        missed_event, event = delivered(missed.id), delivered(last.id)
        assert event.previous_position == missed_event.position != applied.position  # a gap
        assert applied.cursor is not None and event.cursor is not None
        # The recipe: after the cursor of the last change applied, until this delivery's cursor.
        gap = client.changes.list(after=applied.cursor, until=event.cursor, type="student.created")
        assert [e.data.id for e in gap.data] == [missed.id, last.id]  # type: ignore[union-attr]
        assert [e.cursor for e in gap.data] == [missed_event.cursor, event.cursor]
        assert gap.next_cursor == event.cursor and not gap.has_more
        # Following the same range ends at the delivery's cursor.
        follower = client.changes.follow(after=applied.cursor, until=event.cursor, type="student.created")
        assert [e.id for e in follower] == [missed_event.id, event.id]
        assert follower.cursor == event.cursor
    finally:
        client.webhook_endpoints.delete(endpoint.id)
        receiver.close()
