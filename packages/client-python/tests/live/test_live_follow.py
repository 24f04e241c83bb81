"""`client.changes.follow` against the real server: it follows across the server stopped for
10 s and started again with nothing lost or repeated, takes the cursors the feed returns, and
needs a start."""

from __future__ import annotations

import threading
import time
from typing import List, Tuple

import pytest

import platform_api
from platform_api import PlatformError
from platform_api.types import Event

from .conftest import LIVE, position_of, unique
from .restart import stop_for, wait_until_up


def _head(client: platform_api.PlatformClient) -> str:
    follower = client.changes.follow(after=0, until_caught_up=True, limit=1000)
    for _ in follower:
        pass
    return follower.cursor


def _wait_for(condition: "threading.Event", what: str, seconds: float = 60.0) -> None:
    if not condition.wait(seconds):
        raise AssertionError(f"timed out waiting for {what}")


def test_follow_survives_the_server_stopped_for_10_seconds(client: platform_api.PlatformClient) -> None:
    start = _head(client)
    codes = [unique("RST-") for _ in range(6)]
    cursors: List[str] = []
    seen: List[Event] = []
    retries: List[Tuple[PlatformError, int, float]] = []
    errors: List[BaseException] = []
    got_three, got_six = threading.Event(), threading.Event()

    def follow() -> None:
        with platform_api.PlatformClient(base_url=LIVE.base_url, token=LIVE.token) as own:
            follower = own.changes.follow(
                after=start, wait="5s", max_retry_delay=2.0, on_retry=lambda e, n, d: retries.append((e, n, d))
            )
            try:
                for event in follower:
                    seen.append(event)
                    cursors.append(follower.cursor)
                    if len(seen) == 3:
                        got_three.set()
                    if len(seen) == 6:
                        got_six.set()
                        return
            except BaseException as error:  # reported by the test below
                errors.append(error)
                got_three.set()
                got_six.set()

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    for code in codes[:3]:
        client.courses.create(code=code, title="Restart")
    _wait_for(got_three, "the changes before the restart")
    time.sleep(0.5)  # the follower is long-polling again
    stop_for(10)
    wait_until_up()
    for code in codes[3:]:
        client.courses.create(code=code, title="Restart")
    _wait_for(got_six, "the changes after the restart")
    thread.join(10)
    assert errors == []
    assert retries, "on_retry was never called: the follower did not see the outage"
    assert all(isinstance(e, (platform_api.APIConnectionError, platform_api.ServerError)) for e, _, _ in retries)
    base = position_of(start)
    assert [e.position for e in seen] == list(range(base + 1, base + 7))
    assert cursors == [e.cursor for e in seen]
    assert len({e.id for e in seen}) == 6
    assert [e.data.code for e in seen] == codes  # type: ignore[union-attr]


def test_follow_and_changes_take_the_cursors_the_feed_returns(client: platform_api.PlatformClient) -> None:
    start = _head(client)
    base = position_of(start)
    for _ in range(3):
        client.courses.create(code=unique("CUR-"), title="Cursor")
    page = client.changes.list(after=start)
    assert [e.position for e in page.data] == [base + 1, base + 2, base + 3]
    # An event's cursor is where to resume after it: following from it yields what comes next.
    first = page.data[0].cursor
    assert first is not None
    follower = client.changes.follow(after=first, until_caught_up=True)
    assert [e.position for e in follower] == [base + 2, base + 3]
    assert follower.cursor == page.data[2].cursor == page.next_cursor
    # '0' (or 0) is the start of the feed; 'oldest': nothing on the live server is older than
    # kept, so it is the start of the feed too.
    by_str = client.changes.list(after="0", limit=1)
    by_int = client.changes.list(after=0, limit=1)
    oldest = client.changes.list(after="oldest", limit=1)
    assert [e.position for e in oldest.data] == [e.position for e in by_str.data] == [e.position for e in by_int.data] == [1]
    assert oldest.next_cursor == by_str.next_cursor == oldest.data[0].cursor


def test_follow_needs_a_start_and_a_cursor_it_can_send(client: platform_api.PlatformClient) -> None:
    head = _head(client)
    with pytest.raises(TypeError, match=r"follow\(\) needs after=.*'oldest'"):
        client.changes.follow()
    # A position is not a cursor (the server would answer 400): refused before any request.
    with pytest.raises(TypeError, match="^after must be a cursor, not a position: cursors are opaque strings"):
        client.changes.follow(after=position_of(head))
    with pytest.raises(ValueError, match="^after must be a cursor, not a position"):
        client.changes.list(after=str(position_of(head)))
    with pytest.raises(ValueError, match="^until must be a cursor, not a position"):
        client.changes.list(until=head.split(".")[0])
    with pytest.raises(ValueError, match="^after must be a cursor the API returned"):
        client.changes.follow(after=head + "x")
    with pytest.raises(TypeError, match="^after must be"):
        client.changes.list(after=1.5)  # type: ignore[arg-type]
