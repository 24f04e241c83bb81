"""`AsyncPlatformClient.changes.follow` (httpx) against the change feed served on 127.0.0.1 that
`test_follow.py` uses: the same retries, errors and cursor rules, with `async for`."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable, List, Optional, Tuple

import pytest

import platform_api
from platform_api import APIConnectionError, PlatformError, RateLimitError, ServerError

from . import test_transport
from .feed_server import cursor, drop, feed, problem, query_of
from .test_transport import Handler, ScriptedServer

serve = test_transport.serve

Retries = List[Tuple[PlatformError, int, float]]


def async_client_for(server: ScriptedServer, sleeps: Optional[List[float]], **options: Any) -> platform_api.AsyncPlatformClient:
    async def record(seconds: float) -> None:
        assert sleeps is not None
        sleeps.append(seconds)

    options.setdefault("max_retries", 0)
    if sleeps is not None:
        options["sleep"] = record
    return platform_api.AsyncPlatformClient(token="pat_test", base_url=server.url, **options)


def afters(server: ScriptedServer) -> List[str]:
    return [query_of(path).get("after", "") for _, _, path in server.seen]


def test_async_follow_retries_every_retryable_failure_from_the_same_cursor(
    serve: Callable[[Handler], ScriptedServer],
) -> None:
    failures = {
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

    async def run() -> Tuple[List[Optional[int]], str]:
        async with async_client_for(server, sleeps) as client:
            follower = client.changes.follow(
                after=0, until_caught_up=True, on_retry=lambda e, n, d: retries.append((e, n, d))
            )
            return [event.position async for event in follower], follower.cursor

    positions, last = asyncio.run(run())
    assert positions == [1, 2, 3, 4, 5] and last == cursor(5)
    # httpx may or may not send again on a fresh connection itself: what matters is the cursor.
    assert set(afters(server)[1:-3]) == {cursor(2)} and afters(server)[-3:] == [cursor(4), cursor(4), cursor(5)]
    kinds = [type(e) for e, _, _ in retries]
    assert kinds[-4:] == [ServerError, RateLimitError, ServerError, ServerError]
    assert set(kinds[:-4]) == {APIConnectionError}
    assert [n for _, n, _ in retries][-2:] == [len(retries) - 1, 1]
    delays = [d for _, _, d in retries]
    assert delays[-3] == 3.0 and delays[-2] == 60.0 and 0.25 <= delays[-1] <= 0.5
    assert sleeps == delays


def test_async_give_up_after_raises_the_last_error(serve: Callable[[Handler], ScriptedServer]) -> None:
    server = serve(lambda handler, index: problem(503, "service_unavailable")(handler))
    retries: Retries = []

    async def run() -> None:
        async with async_client_for(server, None) as client:
            follower = client.changes.follow(
                after="oldest", give_up_after=0.4, max_retry_delay=0.1, on_retry=lambda e, n, d: retries.append((e, n, d))
            )
            async for _ in follower:
                pass

    began = time.monotonic()
    with pytest.raises(ServerError):
        asyncio.run(run())
    assert 0.4 <= time.monotonic() - began < 10  # gives up: not forever (loose for a busy machine)
    assert len(retries) >= 3 and afters(server)[0] == "oldest"


def test_async_a_410_cursor_expired_ends_the_follower(serve: Callable[[Handler], ScriptedServer]) -> None:
    server = serve(feed(5, {1: problem(410, "cursor_expired")}))
    sleeps: List[float] = []
    seen: List[Optional[int]] = []

    async def run() -> None:
        async with async_client_for(server, sleeps) as client:
            async for change in client.changes.follow(after="0"):
                seen.append(change.position)

    with pytest.raises(platform_api.CursorExpiredError, match=r"POST /v1/exports"):
        asyncio.run(run())
    assert seen == [1, 2] and sleeps == []


def test_async_cursor_types_and_the_required_start(serve: Callable[[Handler], ScriptedServer]) -> None:
    server = serve(feed(0))
    issued = cursor(0)

    async def run() -> None:
        async with async_client_for(server, []) as client:
            await client.changes.list(after=issued)
            async for _ in client.changes.follow(after=issued, until_caught_up=True):
                pass
            await client.changes.list(after=0, until="0")
            await client.changes.list(after="oldest")
            with pytest.raises(TypeError, match=r"follow\(\) needs after="):
                client.changes.follow()
            with pytest.raises(ValueError, match="^after must be"):
                client.changes.follow(after="-1")
            with pytest.raises(ValueError, match="^after must be"):
                await client.changes.list(after="abc")
            # A position is not a cursor: refused before sending, naming the parameter.
            with pytest.raises(TypeError, match="^after must be a cursor, not a position: cursors are opaque strings"):
                client.changes.follow(after=7)
            with pytest.raises(TypeError, match="^after must be a cursor, not a position"):
                await client.changes.list(after=2300)
            with pytest.raises(ValueError, match="^until must be a cursor, not a position"):
                await client.changes.list(until="42")
            with pytest.raises(ValueError, match="^until must be a cursor, not a position"):
                client.changes.follow(after="0", until="42")

    asyncio.run(run())
    assert afters(server) == [issued, issued, "0", "oldest"]


def test_async_follower_cursor_is_each_changes_cursor_and_resumes_there(
    serve: Callable[[Handler], ScriptedServer],
) -> None:
    server = serve(feed(5))

    async def run() -> Tuple[List[Tuple[Optional[int], str]], List[Optional[int]], str]:
        async with async_client_for(server, []) as client:
            follower = client.changes.follow(after=0, until_caught_up=True)
            seen: List[Tuple[Optional[int], str]] = []
            async for change in follower:
                assert follower.cursor == change.cursor  # not str(change.position)
                seen.append((change.position, follower.cursor))
                if len(seen) == 3:
                    break
            rest = client.changes.follow(after=follower.cursor, until=cursor(5))
            return seen, [change.position async for change in rest], rest.cursor

    seen, resumed, last = asyncio.run(run())
    assert seen == [(1, cursor(1)), (2, cursor(2)), (3, cursor(3))]
    assert resumed == [4, 5] and last == cursor(5)
