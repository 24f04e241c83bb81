"""`AsyncPlatformClient.changes.follow` (httpx) against the real server: it follows across the
server stopped for 10 s and started again with nothing lost or repeated, and takes the cursors
the feed returns."""

from __future__ import annotations

import asyncio
from typing import List, Tuple

import pytest

import platform_api
from platform_api import PlatformError
from platform_api.types import Event

from .conftest import LIVE, position_of, unique
from .restart import stop_for, wait_until_up


def _client() -> platform_api.AsyncPlatformClient:
    return platform_api.AsyncPlatformClient(base_url=LIVE.base_url, token=LIVE.token)


async def _head(client: platform_api.AsyncPlatformClient) -> str:
    follower = client.changes.follow(after=0, until_caught_up=True, limit=1000)
    async for _ in follower:
        pass
    return follower.cursor


async def _until(condition: "asyncio.Event", what: str) -> None:
    try:
        await asyncio.wait_for(condition.wait(), 60)
    except asyncio.TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None


def test_async_follow_survives_the_server_stopped_for_10_seconds() -> None:
    codes = [unique("ARST-") for _ in range(6)]
    seen: List[Event] = []
    cursors: List[str] = []
    retries: List[Tuple[PlatformError, int, float]] = []

    async def run() -> str:
        async with _client() as client, _client() as writer:
            start = await _head(client)
            got_three, got_six = asyncio.Event(), asyncio.Event()

            async def follow() -> None:
                follower = client.changes.follow(
                    after=start, wait="5s", max_retry_delay=2.0, on_retry=lambda e, n, d: retries.append((e, n, d))
                )
                async for event in follower:
                    seen.append(event)
                    cursors.append(follower.cursor)
                    if len(seen) == 3:
                        got_three.set()
                    if len(seen) == 6:
                        got_six.set()
                        return

            task = asyncio.ensure_future(follow())
            for code in codes[:3]:
                await writer.courses.create(code=code, title="Restart")
            await _until(got_three, "the changes before the restart")
            await asyncio.sleep(0.5)  # the follower is long-polling again
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(None, stop_for, 10)
            await loop.run_in_executor(None, wait_until_up)
            for code in codes[3:]:
                await writer.courses.create(code=code, title="Restart")
            await asyncio.wait_for(task, 60)  # raises what the follower raised
            assert got_six.is_set()
            return start

    start = asyncio.run(run())
    assert retries, "on_retry was never called: the follower did not see the outage"
    assert all(isinstance(e, (platform_api.APIConnectionError, platform_api.ServerError)) for e, _, _ in retries)
    base = position_of(start)
    assert [e.position for e in seen] == list(range(base + 1, base + 7))
    assert cursors == [e.cursor for e in seen]
    assert len({e.id for e in seen}) == 6
    assert [e.data.code for e in seen] == codes  # type: ignore[union-attr]


def test_async_follow_and_changes_take_the_cursors_the_feed_returns() -> None:
    async def run() -> None:
        async with _client() as client:
            start = await _head(client)
            base = position_of(start)
            for _ in range(2):
                await client.courses.create(code=unique("ACUR-"), title="Cursor")
            page = await client.changes.list(after=start)
            assert [e.position for e in page.data] == [base + 1, base + 2]
            first = page.data[0].cursor
            assert first is not None
            follower = client.changes.follow(after=first, until_caught_up=True)
            assert [e.position async for e in follower] == [base + 2]
            assert follower.cursor == page.data[1].cursor == page.next_cursor
            with pytest.raises(TypeError, match=r"follow\(\) needs after="):
                client.changes.follow()
            with pytest.raises(TypeError, match="^after must be a cursor, not a position"):
                client.changes.follow(after=base + 1)
            with pytest.raises(ValueError, match="^after must be a cursor, not a position"):
                await client.changes.list(after=str(base + 1))
            # Well formed but no organization's: the server's 400 names the parameter.
            with pytest.raises(platform_api.ValidationError) as caught:
                await client.changes.list(after=start[:-1] + ("A" if start[-1] != "A" else "B"))
            assert [e.path for e in caught.value.errors] == ["query.after"]

    asyncio.run(run())
