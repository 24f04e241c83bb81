"""`client.changes.follow` and `changes.list` against a change feed served on 127.0.0.1: retried
failures resume from the same cursor with nothing lost or repeated, errors retrying cannot fix
end it, `follower.cursor` is the `cursor` of the last change yielded, and the cursor is checked
before any request: what the feed hands out is sent, a position (int or digits) is refused."""

from __future__ import annotations

import time
from http.server import BaseHTTPRequestHandler
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest

import platform_api
from platform_api import APIConnectionError, PlatformError, RateLimitError, ServerError

from . import test_transport
from .feed_server import cursor, drop, event, feed, problem, query_of
from .test_transport import Handler, ScriptedServer, send_json

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
    assert follower.cursor == cursor(5)
    c2, c4, c5 = cursor(2), cursor(4), cursor(5)
    assert afters(server) == ["0", c2, c2, c2, c2, c2, c2, c4, c4, c5]
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
    assert seen == [1, 2] and follower.cursor == cursor(2)
    assert raised.value.status_code == status and raised.value.code == code
    assert retries == [] and sleeps == [] and len(server.seen) == 2


def test_a_410_cursor_expired_is_a_cursor_expired_error_on_any_request(
    serve: Callable[[Handler], ScriptedServer],
) -> None:
    server = serve(lambda handler, index: problem(410, "cursor_expired")(handler))
    with client_for(server, []) as client:
        with pytest.raises(platform_api.CursorExpiredError) as on_changes:
            client.changes.list(after=cursor(3))
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
            client.changes.list(after=cursor(3))
    assert not isinstance(raised.value, platform_api.CursorExpiredError)


# What the feed hands out: cursors (`<position>.<10 base64url chars>`, any position up to 18
# digits, `0.` included), `'0'` for the start (the int 0 as well) and `'oldest'`.
ISSUED = ["42.Xk3aB9_-q1", "0.AAAAAAAAAA", "123456789012345678.zzzzzzzzzz", "7.-_-_-_-_-_"]


def echo_feed(handler: BaseHTTPRequestHandler, index: int) -> None:
    """An empty page whose `next_cursor` is the `after` it was asked with."""
    after = query_of(handler.path).get("after", "0")
    send_json(handler, 200, {"data": [], "next_cursor": after, "has_more": False})


@pytest.mark.parametrize(("given", "sent"), [(c, c) for c in ISSUED] + [("0", "0"), (0, "0"), ("oldest", "oldest")])
def test_the_cursor_check_accepts_what_the_feed_returns_and_sends_it_as_is(
    serve: Callable[[Handler], ScriptedServer], given: Any, sent: str
) -> None:
    server = serve(echo_feed)
    with client_for(server, []) as client:
        client.changes.list(after=given, until=given)
        follower = client.changes.follow(after=given, until_caught_up=True)
        list(follower)
        client.events.changes(after=given)
    assert afters(server) == [sent, sent, sent]
    assert query_of(server.seen[0][2])["until"] == sent
    assert follower.cursor == sent


@pytest.mark.parametrize("position", [42, 2300, 1, 10**17, "42", "2300", "1", "007", "1" * 19])
@pytest.mark.parametrize("name", ["after", "until"])
def test_a_position_is_refused_as_a_cursor_naming_the_parameter(
    serve: Callable[[Handler], ScriptedServer], position: Any, name: str
) -> None:
    server = serve(feed(3))
    error = TypeError if isinstance(position, int) else ValueError
    message = (
        f"^{name} must be a cursor, not a position: cursors are opaque strings .*"
        r"`next_cursor`.*an export's `cursor`.*an event's `cursor`, not its `position`"
    )
    given: Dict[str, Any] = {name: position}
    with client_for(server, []) as client:
        with pytest.raises(error, match=message):
            client.changes.list(**given)
        with pytest.raises(error, match=message):
            client.events.changes(**given)
        with pytest.raises(error, match=message):
            if name == "after":
                client.changes.follow(after=position)
            else:
                client.changes.follow(after="0", until=position)
    assert server.seen == []


BAD = [
    -1, 1.5, True, None, b"42.Xk3aB9_-q1", "", "abc", "-3", "1.0", " 1", "Oldest", "oldest ", "١", 10**18,
    "42.", "42.Xk3aB9_-q", "42.Xk3aB9_-q12", "42.Xk3aB9+/q1", "42.Xk3aB9_-q1\n", " 42.Xk3aB9_-q1",
    "042.Xk3aB9_-q1", "-1.Xk3aB9_-q1", "1" * 19 + ".Xk3aB9_-q1", "oldest.Xk3aB9_-q1", ".Xk3aB9_-q1",
    "42:Xk3aB9_-q1", "42.Xk3aB9_-q1.1", "0.", "00",
]


@pytest.mark.parametrize("cursor", BAD)
def test_a_bad_cursor_is_refused_before_any_request_naming_the_parameter(
    serve: Callable[[Handler], ScriptedServer], cursor: Any
) -> None:
    server = serve(feed(0))
    with client_for(server, []) as client:
        with pytest.raises((TypeError, ValueError), match="^after must be .*'oldest'"):
            client.changes.follow(after=cursor)
        with pytest.raises((TypeError, ValueError), match="^after must be"):
            client.changes.list(after=cursor)
        with pytest.raises((TypeError, ValueError), match="^until must be"):
            client.changes.list(until=cursor)
        with pytest.raises((TypeError, ValueError), match="^until must be"):
            client.changes.follow(after="0", until=cursor)
    assert server.seen == []


def test_the_cursor_check_on_its_own() -> None:
    from platform_api._core._feed import feed_cursor

    for issued in ISSUED + ["0", "oldest"]:
        assert feed_cursor("after", issued) == issued
    assert feed_cursor("after", 0) == "0"
    with pytest.raises(TypeError, match="^after must be a cursor, not a position: cursors are opaque strings"):
        feed_cursor("after", 2300)
    with pytest.raises(ValueError, match="^until must be a cursor, not a position: cursors are opaque strings"):
        feed_cursor("until", "42")
    with pytest.raises(ValueError, match="^after must be a cursor the API returned .*'0' .*'oldest'; got 'garbage'$"):
        feed_cursor("after", "garbage")


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
        follower = client.changes.follow(after=0, until=cursor(5))
        positions = [event.position for event in follower]
    assert positions == [1, 2, 3, 4, 5]
    assert follower.cursor == cursor(5)
    # Three pages to reach 5, then one read that finds the end: never a loop of reads at until.
    assert afters(server) == ["0", cursor(2), cursor(4), cursor(5)]
    assert {query_of(path)["until"] for _, _, path in server.seen} == {cursor(5)}


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
    assert afters(server) == ["0", "0", "0", cursor(2)]


def test_follower_cursor_is_the_cursor_of_each_change_and_resumes_with_nothing_skipped_or_repeated(
    serve: Callable[[Handler], ScriptedServer],
) -> None:
    server = serve(feed(5))
    with client_for(server, []) as client:
        follower = client.changes.follow(after=0, until_caught_up=True)
        seen: List[Tuple[Optional[int], str]] = []
        for change in follower:
            assert follower.cursor == change.cursor  # not str(change.position)
            seen.append((change.position, follower.cursor))
            if len(seen) == 3:
                break
        rest = client.changes.follow(after=follower.cursor, until_caught_up=True)
        resumed = [change.position for change in rest]
    assert seen == [(1, cursor(1)), (2, cursor(2)), (3, cursor(3))]
    assert resumed == [4, 5] and rest.cursor == cursor(5)
    # The page read before the break held 3 and 4: the resume reads after 3, not after the page.
    assert afters(server) == ["0", cursor(2), cursor(3), cursor(5)]


def test_follower_cursor_moves_to_the_pages_end_past_changes_the_token_does_not_read(
    serve: Callable[[Handler], ScriptedServer],
) -> None:
    def sparse(handler: BaseHTTPRequestHandler, index: int) -> None:
        # Positions 2, 4, 5 are of types this token does not read: the page ends past them.
        after = query_of(handler.path).get("after", "0")
        if after == "0":
            send_json(handler, 200, {"data": [event(1), event(3)], "next_cursor": cursor(5), "has_more": True})
        else:
            send_json(handler, 200, {"data": [], "next_cursor": after, "has_more": False})

    server = serve(sparse)
    cursors: List[str] = []
    with client_for(server, []) as client:
        follower = client.changes.follow(after="0", until_caught_up=True)
        for _ in follower:
            cursors.append(follower.cursor)
    assert cursors == [cursor(1), cursor(5)]
    assert afters(server) == ["0", cursor(5)]


def test_a_cursor_the_feed_refuses_is_a_validation_error_naming_it(serve: Callable[[Handler], ScriptedServer]) -> None:
    # Well formed, so sent; the feed answers another feed's cursor with a 400 naming the parameter.
    server = serve(feed(3))
    with client_for(server, []) as client:
        with pytest.raises(platform_api.ValidationError) as raised:
            list(client.changes.follow(after=cursor(1, feed="org_other"), until_caught_up=True))
    assert [e.path for e in raised.value.errors] == ["query.after"]
    assert len(server.seen) == 1


@pytest.mark.parametrize(("after", "until"), [("0", "0"), (0, "0"), (cursor(3), cursor(3)), ("oldest", "0")])
def test_follow_until_where_it_starts_ends_after_one_read(
    serve: Callable[[Handler], ScriptedServer], after: Any, until: str
) -> None:
    # The feed answers `until=0` with the organization's `0.<tag>`: reached all the same. A
    # second read (a follower that did not see it) is answered 400, which ends the test.
    server = serve(feed(5, {1: problem(400, "validation_error")}))
    with client_for(server, []) as client:
        follower = client.changes.follow(after=after, until=until)
        assert list(follower) == []
    assert len(server.seen) == 1
