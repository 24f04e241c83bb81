"""`client.changes.follow()` against the real server: every change after the cursor once, in
feed order, resuming from the saved cursor (the `cursor` of the last change yielded), a live
follower woken by a new change, and the feed's cursors bound to their organization."""

from __future__ import annotations

import threading
import time
from typing import List, Optional, Tuple

import pytest

import platform_api

from .conftest import FEED_CURSOR, position_of, tampered, unique


def _head(client: platform_api.PlatformClient) -> str:
    follower = client.changes.follow(after=0, until_caught_up=True, limit=1000)
    for _ in follower:
        pass
    return follower.cursor


def test_follow_reads_in_order_and_resumes_from_the_cursor(client: platform_api.PlatformClient) -> None:
    start = _head(client)
    assert FEED_CURSOR.match(start)
    codes = [unique("FOL-") for _ in range(5)]
    for code in codes:
        client.courses.create(code=code, title="Follow")
    gone = client.courses.create(code=unique("FOL-"), title="Gone soon")
    client.courses.delete(gone.id)

    seen: List[Tuple[Optional[int], str]] = []
    first = client.changes.follow(after=start, limit=2, until_caught_up=True)
    for event in first:
        seen.append((event.position, event.type))
        # After each change the follower's cursor is that change's `cursor`, not its position.
        assert event.cursor is not None and first.cursor == event.cursor
        assert position_of(event.cursor) == event.position
        if len(seen) == 3:
            break
    base = position_of(start)
    assert position_of(first.cursor) == base + 3
    rest = client.changes.follow(after=first.cursor, limit=2, until_caught_up=True)
    last: Optional[str] = None
    for event in rest:
        seen.append((event.position, event.type))
        last = event.cursor
    # Resumed from the saved cursor: nothing skipped, nothing repeated.
    assert seen == [(base + n, "course.created") for n in range(1, 7)] + [(base + 7, "course.deleted")]
    assert rest.cursor == last and position_of(rest.cursor) == base + 7


def test_a_live_follower_wakes_on_a_new_change(client: platform_api.PlatformClient) -> None:
    start = _head(client)
    code = unique("FOL-LIVE-")
    timer = threading.Timer(0.3, lambda: client.courses.create(code=code, title="Live"))
    timer.start()
    began = time.monotonic()
    follower = client.changes.follow(after=start, wait="10s")
    event = next(iter(follower))
    timer.join()
    assert event.type == "course.created" and event.data.code == code  # type: ignore[union-attr]
    assert time.monotonic() - began < 3
    assert follower.cursor == event.cursor and position_of(follower.cursor) == position_of(start) + 1


def test_events_carry_their_cursor_everywhere_and_until_stops_at_one(client: platform_api.PlatformClient) -> None:
    start = _head(client)
    for _ in range(3):
        client.courses.create(code=unique("EVC-"), title="Cursor")
    page = client.changes.list(after=start)
    assert [position_of(e.cursor) for e in page.data] == [e.position for e in page.data]
    assert page.next_cursor == page.data[-1].cursor and not page.has_more
    # The same event read through GET /v1/events carries the same cursor.
    assert client.events.retrieve(page.data[1].id).cursor == page.data[1].cursor
    second = page.data[1].cursor
    assert second is not None
    upto = client.changes.list(after=start, until=second)
    assert [e.id for e in upto.data] == [e.id for e in page.data[:2]]
    assert upto.next_cursor == page.data[1].cursor and not upto.has_more


def test_a_tampered_cursor_is_a_400_naming_the_parameter(client: platform_api.PlatformClient) -> None:
    # Well formed (so the SDK sends it) but its tag is no organization's: the server refuses it.
    head = _head(client)
    with pytest.raises(platform_api.ValidationError) as caught:
        client.changes.list(after=tampered(head))
    assert caught.value.status_code == 400
    assert [e.path for e in caught.value.errors] == ["query.after"]
    with pytest.raises(platform_api.ValidationError) as caught:
        client.changes.list(after="0", until=tampered(head))
    assert [e.path for e in caught.value.errors] == ["query.until"]
