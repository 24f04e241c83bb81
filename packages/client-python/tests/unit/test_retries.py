"""Which failures are retried, how long the client waits, and that a POST keeps its key."""

from __future__ import annotations

import datetime as dt
from email.utils import format_datetime

import pytest

import platform_api
from platform_api._core._http import Headers
from platform_api._core._retry import RetryPolicy, backoff_delay, retry_delay

from .conftest import ClientFactory
from .fakes import STUDENT, FakeTransport, Sleeps, problem, response, student


def test_backoff_doubles_from_half_a_second_up_to_eight_with_jitter_between_half_and_full() -> None:
    policy = RetryPolicy()
    assert [backoff_delay(n, policy, rand=lambda: 1.0) for n in range(6)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert [backoff_delay(n, policy, rand=lambda: 0.0) for n in range(6)] == [0.25, 0.5, 1.0, 2.0, 4.0, 4.0]
    # The first retry never waits 0 s (the `retryCount ** 2` bug of the Stainless PHP core).
    assert backoff_delay(0, policy, rand=lambda: 0.0) > 0


def test_retry_after_in_seconds_and_as_http_date_and_too_long() -> None:
    policy = RetryPolicy()
    now = 1_700_000_000.0

    def delay(status: int, headers: dict[str, str]) -> float | None:
        return retry_delay(status, Headers(headers), replayable=True, keyed=False, attempt=0, policy=policy, now=now)

    assert delay(429, {"Retry-After": "7"}) == 7.0
    date = format_datetime(dt.datetime.fromtimestamp(now + 30, dt.timezone.utc), usegmt=True)
    # An HTTP date in the future is a positive wait (the PHP core's inverted sign made it 0).
    assert abs((delay(429, {"Retry-After": date}) or 0) - 30.0) < 1e-6
    assert delay(429, {"Retry-After": "61"}) is None
    assert delay(429, {"Retry-After": "60"}) == 60.0
    # Unparseable: backoff instead.
    assert 0.25 <= (delay(429, {"Retry-After": "soon"}) or 0) <= 0.5


def test_status_matrix() -> None:
    policy = RetryPolicy()

    def retried(status: int, *, replayable: bool = True, keyed: bool = False, headers: dict[str, str] | None = None) -> bool:
        return (
            retry_delay(status, Headers(headers or {}), replayable=replayable, keyed=keyed, attempt=0, policy=policy)
            is not None
        )

    for status in (408, 500, 502, 503, 504):
        assert retried(status), status
        assert not retried(status, replayable=False), status
    for status in (400, 401, 403, 404, 409, 422, 501, 505):
        assert not retried(status), status
    assert retried(429, replayable=False)  # not processed at all
    assert retried(409, keyed=True, headers={"Retry-After": "1"})  # same key still in progress
    assert not retried(409, keyed=True)
    assert retried(400, headers={"X-Should-Retry": "true"})
    assert not retried(503, headers={"X-Should-Retry": "false"})


def test_429_is_retried_after_retry_after_then_succeeds(make_client: ClientFactory, sleeps: Sleeps) -> None:
    transport = FakeTransport(
        problem(429, "rate_limited", headers={"Retry-After": "3"}),
        response(200, STUDENT),
    )
    stu = make_client(transport).students.retrieve("stu_1")
    assert stu.id == "stu_1"
    assert sleeps == [3.0]
    assert len(transport.requests) == 2


def test_429_with_too_long_retry_after_raises_at_once(make_client: ClientFactory, sleeps: Sleeps) -> None:
    transport = FakeTransport(problem(429, "rate_limited", headers={"Retry-After": "3600"}))
    with pytest.raises(platform_api.RateLimitError) as caught:
        make_client(transport).students.retrieve("stu_1")
    assert caught.value.retry_after == 3600
    assert sleeps == []
    assert len(transport.requests) == 1


def test_rate_limit_error_raised_once_retries_are_used_up(make_client: ClientFactory, sleeps: Sleeps) -> None:
    transport = FakeTransport(*[problem(429, "rate_limited", headers={"Retry-After": "1"}) for _ in range(3)])
    with pytest.raises(platform_api.RateLimitError):
        make_client(transport).students.retrieve("stu_1")
    assert len(transport.requests) == 3  # 1 + max_retries (2)
    assert sleeps == [1.0, 1.0]


def test_503_connection_reset_and_timeout_are_retried_for_a_get(make_client: ClientFactory, sleeps: Sleeps) -> None:
    transport = FakeTransport(
        problem(503, "service_unavailable"),
        ConnectionResetError("reset by peer"),
        response(200, STUDENT),
    )
    make_client(transport, max_retries=3).students.retrieve("stu_1")
    assert len(transport.requests) == 3
    assert len(sleeps) == 2 and 0.25 <= sleeps[0] <= 0.5 and 0.5 <= sleeps[1] <= 1.0

    transport = FakeTransport(platform_api.APITimeoutError("slow", "GET", "u"), response(200, STUDENT))
    make_client(transport).students.retrieve("stu_1")
    assert len(transport.requests) == 2


def test_errors_that_cannot_change_are_not_retried(make_client: ClientFactory, sleeps: Sleeps) -> None:
    for status, code, kind in (
        (400, "validation_error", platform_api.ValidationError),
        (401, "unauthorized", platform_api.AuthenticationError),
        (403, "insufficient_scope", platform_api.PermissionDeniedError),
        (404, "not_found", platform_api.NotFoundError),
        (409, "conflict", platform_api.ConflictError),
    ):
        transport = FakeTransport(problem(status, code))
        with pytest.raises(kind):
            make_client(transport).students.retrieve("stu_1")
        assert len(transport.requests) == 1, status
    assert sleeps == []


def test_max_retries_zero_on_the_client_and_per_request(make_client: ClientFactory) -> None:
    transport = FakeTransport(problem(503, "service_unavailable"))
    with pytest.raises(platform_api.ServerError):
        make_client(transport, max_retries=0).students.retrieve("stu_1")
    assert len(transport.requests) == 1

    transport = FakeTransport(problem(503, "service_unavailable"))
    with pytest.raises(platform_api.ServerError):
        make_client(transport).students.retrieve("stu_1", request_options={"max_retries": 0})
    assert len(transport.requests) == 1

    transport = FakeTransport(problem(503, "service_unavailable"), problem(503, "service_unavailable"), response(200, STUDENT))
    make_client(transport).with_options(max_retries=5).students.retrieve("stu_1")
    assert len(transport.requests) == 3


def test_a_post_sends_one_generated_idempotency_key_on_every_attempt(make_client: ClientFactory) -> None:
    transport = FakeTransport(
        problem(503, "service_unavailable"),
        ConnectionResetError("reset"),
        response(201, student()),
    )
    make_client(transport).students.create(student_number="S-1", first_name="Ada", last_name="Lovelace")
    keys = [request.headers["idempotency-key"] for request in transport.requests]
    assert len(keys) == 3 and len(set(keys)) == 1
    assert len(keys[0]) == 36  # a UUID

    # Another call gets another key.
    transport.add(response(201, student()))
    make_client(transport).students.create(student_number="S-2", first_name="B", last_name="C")
    assert transport.requests[-1].headers["idempotency-key"] != keys[0]


def test_the_callers_idempotency_key_wins(make_client: ClientFactory) -> None:
    transport = FakeTransport(problem(502, "internal_error"), response(201, student()))
    make_client(transport).students.create(
        student_number="S-1",
        first_name="Ada",
        last_name="Lovelace",
        request_options={"idempotency_key": "order-42"},
    )
    assert [r.headers["idempotency-key"] for r in transport.requests] == ["order-42", "order-42"]

    transport = FakeTransport(response(201, student()))
    make_client(transport).students.create(
        student_number="S-1",
        first_name="Ada",
        last_name="Lovelace",
        request_options={"extra_headers": {"Idempotency-Key": "from-header"}},
    )
    assert transport.requests[0].headers["idempotency-key"] == "from-header"


def test_a_patch_without_a_key_is_not_retried_on_a_5xx_nor_a_connection_error(make_client: ClientFactory) -> None:
    transport = FakeTransport(problem(503, "service_unavailable"))
    with pytest.raises(platform_api.ServerError):
        make_client(transport).students.update("stu_1", first_name="Ada")
    assert len(transport.requests) == 1
    assert "idempotency-key" not in transport.requests[0].headers

    transport = FakeTransport(ConnectionResetError("reset"))
    with pytest.raises(platform_api.APIConnectionError):
        make_client(transport).students.update("stu_1", first_name="Ada")
    assert len(transport.requests) == 1


def test_post_without_generated_keys_is_not_retried_on_a_5xx(make_client: ClientFactory) -> None:
    transport = FakeTransport(problem(503, "service_unavailable"))
    with pytest.raises(platform_api.ServerError):
        make_client(transport, idempotency_keys=False).students.create(
            student_number="S-1", first_name="Ada", last_name="Lovelace"
        )
    assert len(transport.requests) == 1


def test_a_409_in_progress_for_the_same_key_is_waited_for(make_client: ClientFactory, sleeps: Sleeps) -> None:
    transport = FakeTransport(
        problem(409, "conflict", headers={"Retry-After": "1"}),
        response(201, student(), {"Idempotent-Replayed": "true"}),
    )
    raw = make_client(transport).students.with_raw_response.create(
        student_number="S-1", first_name="Ada", last_name="Lovelace"
    )
    assert raw.headers["idempotent-replayed"] == "true"
    assert raw.retries_taken == 1
    assert sleeps == [1.0]


def test_the_timeout_is_passed_per_attempt_and_per_request(make_client: ClientFactory) -> None:
    transport = FakeTransport(response(200, STUDENT), response(200, STUDENT), response(200, STUDENT))
    client = make_client(transport, timeout=12.0)
    client.students.retrieve("stu_1")
    client.students.retrieve("stu_1", request_options={"timeout": 2.5})
    client.with_options(timeout=4.0).students.retrieve("stu_1")
    assert transport.timeouts == [12.0, 2.5, 4.0]
