"""A POST keeps its Idempotency-Key across retries, and the server replays the first answer."""

from __future__ import annotations

from typing import List

import platform_api
from platform_api import HTTPRequest, HTTPResponse

from .conftest import TRANSPORT, make_client, unique


def test_the_same_key_twice_is_replayed(client: platform_api.PlatformClient) -> None:
    key = unique("import-row-")
    number = unique("S-")
    first = client.students.with_raw_response.create(
        student_number=number, first_name="A", last_name="B", request_options={"idempotency_key": key}
    )
    again = client.students.with_raw_response.create(
        student_number=number, first_name="A", last_name="B", request_options={"idempotency_key": key}
    )
    assert first.status_code == again.status_code == 201
    assert again.headers.get("idempotent-replayed") == "true"
    assert again.parse().id == first.parse().id


class LoseFirstResponse:
    """Delivers each request to the server, but drops the first response on the way back, as a
    timeout after the server did the work would."""

    def __init__(self) -> None:
        self.sent: List[HTTPRequest] = []

    def send(self, request: HTTPRequest, *, timeout: float, connect_timeout: float) -> HTTPResponse:
        self.sent.append(request)
        response = TRANSPORT.send(request, timeout=timeout, connect_timeout=connect_timeout)
        if len(self.sent) == 1:
            raise platform_api.APITimeoutError("response lost", request.method, request.url)
        return response

    def close(self) -> None:
        pass


def test_a_retried_post_keeps_its_generated_key_and_is_not_applied_twice(client: platform_api.PlatformClient) -> None:
    transport = LoseFirstResponse()
    waits: List[float] = []
    retrying = make_client(transport=transport, sleep=waits.append)
    marker = unique("Retry")
    raw = retrying.students.with_raw_response.create(student_number=unique("S-"), first_name="A", last_name=marker)
    keys = [request.headers["idempotency-key"] for request in transport.sent]
    assert len(keys) == 2 and keys[0] == keys[1]
    assert raw.retries_taken == 1
    assert raw.headers.get("idempotent-replayed") == "true"
    assert [s.id for s in client.students.list(q=marker)] == [raw.parse().id]  # created once
