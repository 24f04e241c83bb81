"""Following a change feed: every change after a cursor, resumable, long-polling when caught up,
retrying what can be retried for as long as the caller wants."""

from __future__ import annotations

import asyncio
import math
import random
import re
import time
from typing import (
    Any,
    AsyncIterator,
    Awaitable,
    Callable,
    Generic,
    Iterator,
    List,
    Optional,
    TypeVar,
    Union,
)

from .._exceptions import APIConnectionError, APIStatusError, PlatformError, parse_retry_after
from .._types import Omit

__all__ = [
    "Cursor",
    "OnRetry",
    "SyncFeedFollower",
    "AsyncFeedFollower",
    "feed_cursor",
    "feed_cursor_param",
    "follow_start",
]

_T = TypeVar("_T")

Cursor = Union[str, int]
"""A place in a change feed, as the API returns it: a `next_cursor`, an export's `cursor` or an
event's `cursor`, an opaque str bound to its organization (`'42.Xk3aB9_-q1'`: the number before
the dot is the position); `'0'` (or the int `0`) for the start of the feed; or `'oldest'`. A
position (`event.position`, an int, or its digits as a str) is not a cursor."""

OnRetry = Callable[[PlatformError, int, float], object]
"""`on_retry(error, attempt, delay_seconds)`: called before each wait of a follower's retry;
`attempt` counts 1, 2, 3, … from the last successful read."""

_MAX_RETRY_AFTER = 60.0
# The feed's cursors (as the server checks them): `0`, or a position without leading zeros (at
# most 18 digits), a dot and the organization's 10-character base64url tag.
_CURSOR = re.compile(r"\A(0|(0|[1-9][0-9]{0,17})\.[A-Za-z0-9_-]{10})\Z")
_DIGITS = re.compile(r"\A[0-9]+\Z")
_CURSOR_HINT = (
    "a cursor the API returned (a `next_cursor`, an export's `cursor`, an event's `cursor`, "
    "a saved follower.cursor), '0' for the start of the feed, or 'oldest'"
)
_NOT_A_POSITION = (
    "cursors are opaque strings bound to their organization: pass a `next_cursor`, "
    "an export's `cursor` or an event's `cursor`, not its `position` ('0' for the start of the "
    "feed, 'oldest' for the oldest change still kept)"
)


def feed_cursor(name: str, value: Any) -> str:
    """The cursor as sent on the wire; a `TypeError`/`ValueError` naming `name` when it is none.

    Only what the feed hands out is taken: a cursor str (`'42.Xk3aB9_-q1'`), `'0'` (or the int
    `0`) and `'oldest'`. A position, as an int or as its digits, is refused: the feed answers it
    with a 400."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(f"{name} must be {_CURSOR_HINT}; got {type(value).__name__} {value!r}")
    if isinstance(value, int):
        if value == 0:
            return "0"
        raise TypeError(f"{name} must be a cursor, not a position: {_NOT_A_POSITION}; got int {value}")
    if value == "oldest" or _CURSOR.match(value):
        return value
    if _DIGITS.match(value):
        raise ValueError(f"{name} must be a cursor, not a position: {_NOT_A_POSITION}; got {value!r}")
    raise ValueError(f"{name} must be {_CURSOR_HINT}; got {value!r}")


def feed_cursor_param(name: str, value: Union[Cursor, Omit]) -> Union[str, Omit]:
    """`feed_cursor` for an optional query parameter: `omit` stays omitted."""
    return value if isinstance(value, Omit) else feed_cursor(name, value)


def follow_start(value: Union[Cursor, Omit]) -> str:
    """`follow(after=…)`: required, since following from an implicit start would skip or repeat."""
    if isinstance(value, Omit):
        raise TypeError(
            "follow() needs after=: the cursor to start from, "
            f"{_CURSOR_HINT} for the oldest change still kept"
        )
    return feed_cursor("after", value)


def _position(cursor: str) -> Optional[int]:
    """The position a cursor names (the number before its dot; `'0'` is 0), or None (`'oldest'`)."""
    head = cursor.split(".", 1)[0]
    return int(head) if _DIGITS.match(head) else None


def _reached(cursor: str, until: str) -> bool:
    # The feed answers `until` with that cursor; `'0'` comes back as the organization's `0.<tag>`.
    if cursor == until:
        return True
    at, end = _position(cursor), _position(until)
    return at is not None and end is not None and at >= end


def _wait(wait: Any, until_caught_up: bool) -> Any:
    # Caught up is known from one read that does not wait; a live follower waits.
    if isinstance(wait, str):
        return wait
    return "0s" if until_caught_up else "30s"


def _retryable(error: PlatformError) -> bool:
    if isinstance(error, APIConnectionError):
        return True
    return isinstance(error, APIStatusError) and (
        error.status_code >= 500 or error.status_code == 429
    )


class _Backoff:
    """Capped exponential backoff with jitter, reset by a successful read; gives up (None) after
    `give_up_after` seconds of continuous failure."""

    def __init__(
        self,
        max_retry_delay: float,
        give_up_after: Optional[float],
        on_retry: Optional[OnRetry],
        rand: Callable[[], float] = random.random,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if isinstance(max_retry_delay, bool) or not isinstance(max_retry_delay, (int, float)):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f"max_retry_delay must be a number of seconds; got {max_retry_delay!r}")
        if not max_retry_delay > 0 or math.isinf(max_retry_delay):
            raise ValueError(f"max_retry_delay must be a positive number of seconds; got {max_retry_delay!r}")
        if give_up_after is not None and (
            isinstance(give_up_after, bool)
            or not isinstance(give_up_after, (int, float))  # pyright: ignore[reportUnnecessaryIsInstance]
            or not give_up_after >= 0
        ):
            raise ValueError(f"give_up_after must be None or seconds (>= 0); got {give_up_after!r}")
        if on_retry is not None and not callable(on_retry):
            raise TypeError(f"on_retry must be callable(error, attempt, delay_seconds); got {on_retry!r}")
        self.max_retry_delay = float(max_retry_delay)
        self.give_up_after = give_up_after
        self.on_retry = on_retry
        self._rand = rand
        self._clock = clock
        self.attempt = 0
        self._failing_since: Optional[float] = None

    def succeeded(self) -> None:
        self.attempt = 0
        self._failing_since = None

    def delay(self, error: PlatformError) -> Optional[float]:
        """Seconds to wait before reading again after `error`, or None: raise it."""
        if not _retryable(error):
            return None
        now = self._clock()
        if self._failing_since is None:
            self._failing_since = now
        failing = now - self._failing_since
        if self.give_up_after is not None and failing >= self.give_up_after:
            return None
        delay = self._retry_after(error)
        if delay is None:
            cap = min(self.max_retry_delay, 0.5 * 2.0 ** min(self.attempt, 60))
            delay = cap / 2 + self._rand() * cap / 2
        if self.give_up_after is not None:
            # The last read lands on the give-up time rather than after it.
            delay = min(delay, self.give_up_after - failing)
        self.attempt += 1
        if self.on_retry is not None:
            self.on_retry(error, self.attempt, delay)
        return delay

    @staticmethod
    def _retry_after(error: PlatformError) -> Optional[float]:
        if not isinstance(error, APIStatusError):
            return None
        seconds = parse_retry_after(error.headers.get("retry-after"))
        return None if seconds is None else min(seconds, _MAX_RETRY_AFTER)


class _Follower:
    def __init__(
        self,
        *,
        after: str,
        until: Optional[str],
        until_caught_up: bool,
        max_retry_delay: float,
        give_up_after: Optional[float],
        on_retry: Optional[OnRetry],
    ) -> None:
        self.cursor: str = after
        """Where the next change starts: the `cursor` of the last change yielded (or the page's
        `next_cursor` past it), else the start. Opaque: save it and pass it back as `after`."""
        self.until: Optional[str] = until
        """The cursor at which iteration ends (`follow(until=…)`), if any."""
        self.until_caught_up: bool = until_caught_up
        self._backoff = _Backoff(max_retry_delay, give_up_after, on_retry)

    def wait(self, wait: Any) -> Any:
        """The `wait` of each read: the one given, else 0 s until caught up, else 30 s."""
        return _wait(wait, self.until_caught_up)

    def _changes(self, page: Any) -> List[Any]:
        self._backoff.succeeded()
        data = list(page.data)
        if not data:
            self.cursor = str(page.next_cursor)
        return data

    def _advance(self, page: Any, data: List[Any], index: int) -> None:
        cursor = getattr(data[index], "cursor", None)
        if isinstance(cursor, str) and cursor:
            self.cursor = cursor
        # The page's end may lie past its last change (types this token does not read).
        if index == len(data) - 1:
            self.cursor = str(page.next_cursor)

    def _done(self, page: Any) -> bool:
        if self.until is not None and _reached(self.cursor, self.until):
            return True
        return self.until_caught_up and not page.has_more


class SyncFeedFollower(_Follower, Generic[_T]):
    """What `client.events.follow(after=…)` returns.

    Iterating yields the changes after the cursor, oldest first, page after page; once caught up
    each read waits (`wait`, 30 s by default) for the next change. `follower.cursor` is the place
    after the last change yielded, that change's `cursor` (an opaque str bound to the
    organization, not its `position`): save it after applying a change, and
    `follow(after=cursor)` resumes there with nothing skipped or repeated. With
    `until_caught_up=True` iteration ends once a read finds nothing new; with `until=<cursor>`
    once the follower's cursor reaches that one; otherwise it runs until you `break`.

    A read that fails for a reason that may pass (no connection, a timeout, 5xx, 429) is retried
    from the same cursor, after a backoff (`Retry-After` when the server sent one), for as long
    as it takes, or until `give_up_after` seconds of continuous failure. Any other error ends
    the iteration.
    """

    def __init__(
        self,
        read: Callable[[str], Any],
        *,
        after: str,
        until: Optional[str] = None,
        until_caught_up: bool = False,
        max_retry_delay: float = 10.0,
        give_up_after: Optional[float] = None,
        on_retry: Optional[OnRetry] = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(
            after=after,
            until=until,
            until_caught_up=until_caught_up,
            max_retry_delay=max_retry_delay,
            give_up_after=give_up_after,
            on_retry=on_retry,
        )
        self._read = read
        self._sleep = sleep

    def _read_retrying(self) -> Any:
        while True:
            try:
                return self._read(self.cursor)
            except PlatformError as error:
                delay = self._backoff.delay(error)
                if delay is None:
                    raise
            self._sleep(delay)

    def __iter__(self) -> Iterator[_T]:
        while True:
            page = self._read_retrying()
            data = self._changes(page)
            for index, change in enumerate(data):
                self._advance(page, data, index)
                yield change
            if not data and self._done(page):
                return


class AsyncFeedFollower(_Follower, Generic[_T]):
    """`SyncFeedFollower` for `AsyncPlatformClient`: iterate it with `async for`."""

    def __init__(
        self,
        read: Callable[[str], Awaitable[Any]],
        *,
        after: str,
        until: Optional[str] = None,
        until_caught_up: bool = False,
        max_retry_delay: float = 10.0,
        give_up_after: Optional[float] = None,
        on_retry: Optional[OnRetry] = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        super().__init__(
            after=after,
            until=until,
            until_caught_up=until_caught_up,
            max_retry_delay=max_retry_delay,
            give_up_after=give_up_after,
            on_retry=on_retry,
        )
        self._read = read
        self._sleep = sleep

    async def _read_retrying(self) -> Any:
        while True:
            try:
                return await self._read(self.cursor)
            except PlatformError as error:
                delay = self._backoff.delay(error)
                if delay is None:
                    raise
            await self._sleep(delay)

    async def __aiter__(self) -> AsyncIterator[_T]:
        while True:
            page = await self._read_retrying()
            data = self._changes(page)
            for index, change in enumerate(data):
                self._advance(page, data, index)
                yield change
            if not data and self._done(page):
                return
