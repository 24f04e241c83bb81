"""`client.changes.follow` and `changes.list` against a change feed served on 127.0.0.1: retried
failures resume from the same cursor with nothing lost or repeated, errors retrying cannot fix
end it, and the cursor is checked before any request."""

from __future__ import annotations

import time
from typing import Any, Callable, List, Tuple

import pytest

import platform_api
from platform_api import APIConnectionError, PlatformError, RateLimitError, ServerError

from . import test_transport
from .feed_server import drop, feed, problem, query_of
from .test_transport import Handler, ScriptedServer

serve = test_transport.serve

Retries = List[Tuple[PlatformError, int, float]]


def client_for(server: ScriptedServer, sleeps: List[float], **options: Any) -> platform_api.PlatformClient:
    # The client's own retries off: what is seen is the follower's.
    options.setdefault("max_retries", 0)
    return platform_api.PlatformClient(token="pat_test", base_url=server.url, sleep=sleeps.append, **options)


def afters(server: ScriptedServer) -> List[str]:
    return [query_of(path).get("after", "") for _, _, path in server.seen]


def test_follow_retries_every_retryable_failure_from_the_same_cursor(
    serve: Callable[[Handler], ScriptedServer],
) -> None:
    failures = {
        # Dropped twice: the transport sends once more itself on a fresh connection when a kept
        # alive one was closed; the second drop is the follower's to retry.
        1: drop,
        2: drop,
        3: problem(500, "internal_error"),
        4: problem(429, "rate_limited", {"Retry-After": "3"}),
        5: problem(503, "service_unavailable", {"Retry-After": "600"}),
        7: problem(502, "bad_gateway"),
    }
    server = serve(feed(5, failures))
    sleeps: List[float] = []
    retries: Retries = []
    with client_for(server, sleeps) as client:
        follower = client.changes.follow(
            after=0, until_caught_up=True, on_retry=lambda e, n, d: retries.append((e, n, d))
        )
        positions = [event.position for event in follower]
    assert positions == [1, 2, 3, 4, 5]
    assert follower.cursor == "5"
    assert afters(server) == ["0", "2", "2", "2", "2", "2", "2", "4", "4", "5"]
    assert [type(e) for e, _, _ in retries] == [APIConnectionError, ServerError, RateLimitError, ServerError, ServerError]
    # The attempt counts from 1 again after the successful read that came between.
    assert [n for _, n, _ in retries] == [1, 2, 3, 4, 1]
    delays = [d for _, _, d in retries]
    assert 0.25 <= delays[0] <= 0.5 and 0.5 <= delays[1] <= 1.0
    assert delays[2] == 3.0 and delays[3] == 60.0  # Retry-After, bounded to 60 s
    assert 0.25 <= delays[4] <= 0.5
    assert sleeps == delays


def test_the_backoff_is_capped_by_max_retry_delay(serve: Callable[[Handler], ScriptedServer]) -> None:
    server = serve(feed(1, {i: problem(503, "service_unavailable") for i in range(8)}))
    sleeps: List[float] = []
    with client_for(server, sleeps) as client:
        events = list(client.changes.follow(after="0", until_caught_up=True, max_retry_delay=1.5))
    assert [e.position for e in events] == [1]
    assert len(sleeps) == 8
    assert all(d <= 1.5 for d in sleeps) and all(0.75 <= d for d in sleeps[2:])


def test_give_up_after_raises_the_last_error_after_that_much_continuous_failure(
    serve: Callable[[Handler], ScriptedServer],
) -> None:
    server = serve(lambda handler, index: problem(503, "service_unavailable")(handler))
    retries: Retries = []
    began = time.monotonic()
    with platform_api.PlatformClient(token="pat_test", base_url=server.url, max_retries=0) as client:
        follower = client.changes.follow(
            after=0, give_up_after=0.4, max_retry_delay=0.1, on_retry=lambda e, n, d: retries.append((e, n, d))
        )
        with pytest.raises(ServerError) as raised:
            next(iter(follower))
    elapsed = time.monotonic() - began
    assert raised.value.status_code == 503
    assert 0.4 <= elapsed < 10  # gives up: not forever (loose for a busy machine)
    assert len(retries) >= 3 and len(server.seen) == len(retries) + 1


def test_give_up_after_zero_raises_the_first_failure(serve: Callable[[Handler], ScriptedServer]) -> None:
    server = serve(feed(1, {0: drop}))
    sleeps: List[float] = []
    with client_for(server, sleeps) as client:
        with pytest.raises(APIConnectionError):
            list(client.changes.follow(after=0, until_caught_up=True, give_up_after=0))
    assert sleeps == []


@pytest.mark.parametrize(
    ("status", "code", "error"),
    [
        (400, "validation_error", platform_api.ValidationError),
        (401, "unauthorized", platform_api.AuthenticationError),
        (403, "insufficient_scope", platform_api.PermissionDeniedError),
        (404, "not_found", platform_api.NotFoundError),
        (410, "cursor_expired", platform_api.CursorExpiredError),
    ],
)
def test_errors_retrying_cannot_fix_end_the_follower_at_once(
    serve: Callable[[Handler], ScriptedServer], status: int, code: str, error: "type[platform_api.APIStatusError]"
) -> None:
    server = serve(feed(5, {1: problem(status, code)}))
    sleeps: List[float] = []
    retries: Retries = []
    with client_for(server, sleeps) as client:
        follower = client.changes.follow(after=0, on_retry=lambda e, n, d: retries.append((e, n, d)))
        seen: List[Any] = []
        with pytest.raises(error) as raised:
            for change in follower:
                seen.append(change.position)
    assert seen == [1, 2] and follower.cursor == "2"
    assert raised.value.status_code == status and raised.value.code == code
    assert retries == [] and sleeps == [] and len(server.seen) == 2


def test_a_410_cursor_expired_is_a_cursor_expired_error_on_any_request(
    serve: Callable[[Handler], ScriptedServer],
) -> None:
    server = serve(lambda handler, index: problem(410, "cursor_expired")(handler))
    with client_for(server, []) as client:
        with pytest.raises(platform_api.CursorExpiredError) as on_changes:
            client.changes.list(after=3)
        with pytest.raises(platform_api.CursorExpiredError) as on_other:
            client.students.list()
    for raised in (on_changes, on_other):
        assert isinstance(raised.value, platform_api.APIStatusError)
        assert "start again from an export (POST /v1/exports) and follow from its cursor" in str(raised.value)
        assert raised.value.detail == "cursor_expired here"


def test_a_410_of_another_code_stays_an_api_status_error(serve: Callable[[Handler], ScriptedServer]) -> None:
    server = serve(lambda handler, index: problem(410, "gone")(handler))
    with client_for(server, []) as client:
        with pytest.raises(platform_api.APIStatusError) as raised:
            client.changes.list(after=3)
    assert not isinstance(raised.value, platform_api.CursorExpiredError)


@pytest.mark.parametrize(("cursor", "sent"), [(7, "7"), ("7", "7"), (0, "0"), ("oldest", "oldest"), (10**17, str(10**17))])
def test_follow_and_changes_send_every_cursor_the_feed_returns(
    serve: Callable[[Handler], ScriptedServer], cursor: Any, sent: str
) -> None:
    server = serve(feed(0))
    with client_for(server, []) as client:
        client.changes.list(after=cursor)
        list(client.changes.follow(after=cursor, until_caught_up=True))
    assert afters(server) == [sent, sent]


@pytest.mark.parametrize("cursor", [-1, 1.5, True, None, "", "abc", "-3", "1.0", " 1", "Oldest", "١", "007", 10**18, "1" * 19])
def test_a_bad_cursor_is_refused_before_any_request(
    serve: Callable[[Handler], ScriptedServer], cursor: Any
) -> None:
    server = serve(feed(0))
    with client_for(server, []) as client:
        with pytest.raises((TypeError, ValueError), match="^after must be .*'oldest'"):
            client.changes.follow(after=cursor)
        with pytest.raises((TypeError, ValueError), match="^after must be"):
            client.changes.list(after=cursor)
    assert server.seen == []


def test_follow_without_a_cursor_says_to_pass_one(serve: Callable[[Handler], ScriptedServer]) -> None:
    server = serve(feed(0))
    with client_for(server, []) as client:
        with pytest.raises(TypeError, match=r"follow\(\) needs after=.*export.*'oldest'"):
            client.changes.follow()
    assert server.seen == []


@pytest.mark.parametrize(
    "options",
    [{"max_retry_delay": 0}, {"max_retry_delay": -1.0}, {"give_up_after": -1}, {"on_retry": 3}],
)
def test_bad_retry_options_are_refused(serve: Callable[[Handler], ScriptedServer], options: Any) -> None:
    server = serve(feed(0))
    with client_for(server, []) as client:
        with pytest.raises((TypeError, ValueError), match=next(iter(options))):
            client.changes.follow(after=0, **options)


def test_follow_until_a_cursor_ends_there_without_reading_on(serve: Callable[[Handler], ScriptedServer]) -> None:
    server = serve(feed(9))
    with client_for(server, []) as client:
        follower = client.changes.follow(after=0, until=5)
        positions = [event.position for event in follower]
    assert positions == [1, 2, 3, 4, 5]
    assert follower.cursor == "5"
    # Three pages to reach 5, then one read that finds the end: never a loop of reads at until.
    assert afters(server) == ["0", "2", "4", "5"]


def test_follow_retries_by_itself_even_on_a_client_that_retries(
    serve: Callable[[Handler], ScriptedServer],
) -> None:
    server = serve(feed(2, {0: problem(503, "service_unavailable"), 1: problem(503, "service_unavailable")}))
    sleeps: List[float] = []
    retries: Retries = []
    with platform_api.PlatformClient(token="pat_test", base_url=server.url, sleep=sleeps.append) as client:
        follower = client.changes.follow(
            after=0, until_caught_up=True, on_retry=lambda e, n, d: retries.append((e, n, d))
        )
        assert [event.position for event in follower] == [1, 2]
    # Each failed read is one request and one retry of the follower's, counted 1, 2.
    assert [n for _, n, _ in retries] == [1, 2]
    assert afters(server) == ["0", "0", "0", "2"]
