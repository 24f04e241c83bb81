"""`client.changes.follow()` against the real server: every change after the cursor once, in
feed order, resuming from the saved cursor, and a live follower woken by a new change."""

from __future__ import annotations

import threading
import time
from typing import List, Optional, Tuple

import platform_api

from .conftest import unique


def _head(client: platform_api.PlatformClient) -> str:
    follower = client.changes.follow(after=0, until_caught_up=True, limit=1000)
    for _ in follower:
        pass
    return follower.cursor


def test_follow_reads_in_order_and_resumes_from_the_cursor(client: platform_api.PlatformClient) -> None:
    start = _head(client)
    codes = [unique("FOL-") for _ in range(5)]
    for code in codes:
        client.courses.create(code=code, title="Follow")
    gone = client.courses.create(code=unique("FOL-"), title="Gone soon")
    client.courses.delete(gone.id)

    seen: List[Tuple[Optional[int], str]] = []
    first = client.changes.follow(after=start, limit=2, until_caught_up=True)
    for event in first:
        seen.append((event.position, event.type))
        if len(seen) == 3:
            break
    assert first.cursor == str(int(start) + 3)
    rest = client.changes.follow(after=first.cursor, limit=2, until_caught_up=True)
    seen.extend((event.position, event.type) for event in rest)
    base = int(start)
    assert seen == [(base + n, "course.created") for n in range(1, 7)] + [(base + 7, "course.deleted")]
    assert rest.cursor == str(base + 7)


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
    assert follower.cursor == str(int(start) + 1)

