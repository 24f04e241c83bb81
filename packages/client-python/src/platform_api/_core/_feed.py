"""Following a change feed: every change after a cursor, resumable, long-polling when caught up."""

from __future__ import annotations

from typing import Any, AsyncIterator, Awaitable, Callable, Generic, Iterator, TypeVar

__all__ = ["SyncFeedFollower", "AsyncFeedFollower"]

_T = TypeVar("_T")


def _position_of(change: Any) -> Any:
    return getattr(change, "position", None)


def _wait(wait: Any, until_caught_up: bool) -> Any:
    # Caught up is known from one read that does not wait; a live follower waits.
    if isinstance(wait, str):
        return wait
    return "0s" if until_caught_up else "30s"


class SyncFeedFollower(Generic[_T]):
    """What `client.events.follow(after=…)` returns.

    Iterating yields the changes after the cursor, oldest first, page after page; once caught up
    each read waits (`wait`, 30 s by default) for the next change. `follower.cursor` is the place
    after the last change yielded: save it after applying a change, and `follow(after=cursor)`
    resumes there with nothing skipped or repeated. With `until_caught_up=True` iteration ends
    once a read finds nothing new; otherwise it runs until you `break`.
    """

    def __init__(
        self, read: Callable[[str], Any], *, after: str = "0", until_caught_up: bool = False
    ) -> None:
        self.cursor: str = after
        """Where the next change starts: the position of the last change yielded, or the start."""
        self.until_caught_up: bool = until_caught_up
        self._read = read

    def wait(self, wait: Any) -> Any:
        """The `wait` of each read: the one given, else 0 s until caught up, else 30 s."""
        return _wait(wait, self.until_caught_up)

    def __iter__(self) -> Iterator[_T]:
        while True:
            page = self._read(self.cursor)
            data = list(page.data)
            for index, change in enumerate(data):
                position = _position_of(change)
                if isinstance(position, int):
                    self.cursor = str(position)
                # The page's end may lie past its last change (types this token does not read).
                if index == len(data) - 1:
                    self.cursor = str(page.next_cursor)
                yield change
            if not data:
                self.cursor = str(page.next_cursor)
                if self.until_caught_up and not page.has_more:
                    return


class AsyncFeedFollower(Generic[_T]):
    """`SyncFeedFollower` for `AsyncPlatformClient`: iterate it with `async for`."""

    def __init__(
        self,
        read: Callable[[str], Awaitable[Any]],
        *,
        after: str = "0",
        until_caught_up: bool = False,
    ) -> None:
        self.cursor: str = after
        """Where the next change starts: the position of the last change yielded, or the start."""
        self.until_caught_up: bool = until_caught_up
        self._read = read

    def wait(self, wait: Any) -> Any:
        """The `wait` of each read: the one given, else 0 s until caught up, else 30 s."""
        return _wait(wait, self.until_caught_up)

    async def __aiter__(self) -> AsyncIterator[_T]:
        while True:
            page = await self._read(self.cursor)
            data = list(page.data)
            for index, change in enumerate(data):
                position = _position_of(change)
                if isinstance(position, int):
                    self.cursor = str(position)
                if index == len(data) - 1:
                    self.cursor = str(page.next_cursor)
                yield change
            if not data:
                self.cursor = str(page.next_cursor)
                if self.until_caught_up and not page.has_more:
                    return
