"""Pages of a list, and iteration over every item of every page.

Each next page is the keyset `cursor` that `links.next` carries (sent in place of `page`, every
other parameter kept), so records added or removed during a walk never make it skip or repeat one,
and the last page costs the same as the first. A server that sends no cursor is paged by number.
"""

from __future__ import annotations

import copy
from typing import (
    Any,
    AsyncIterator,
    Awaitable,
    Callable,
    Dict,
    Generic,
    Iterator,
    List,
    Mapping,
    Optional,
    TypeVar,
    Union,
)
from urllib.parse import parse_qs, urlsplit

__all__ = ["SyncPage", "AsyncPage"]

_T = TypeVar("_T")


class _PageData(Generic[_T]):
    """What a page knows about itself: its items, `meta` and `links`."""

    def __init__(self, *, data: List[_T], raw: Mapping[str, Any], follows_cursor: bool = False) -> None:
        self.data = data
        self._raw = dict(raw)
        self._follows_cursor = follows_cursor

    @property
    def meta(self) -> Dict[str, Any]:
        meta = self._raw.get("meta")
        return dict(meta) if isinstance(meta, dict) else {}  # pyright: ignore[reportUnknownArgumentType]

    @property
    def links(self) -> Dict[str, Any]:
        links = self._raw.get("links")
        return dict(links) if isinstance(links, dict) else {}  # pyright: ignore[reportUnknownArgumentType]

    @property
    def page(self) -> int:
        return _int(self.meta.get("page"), 1)

    @property
    def per_page(self) -> int:
        return _int(self.meta.get("per_page"), len(self.data))

    @property
    def total(self) -> int:
        """Items across every page (matching the filters when the list was requested)."""
        return _int(self.meta.get("total"), len(self.data))

    @property
    def total_pages(self) -> int:
        return _int(self.meta.get("total_pages"), self.page)

    def to_dict(self) -> Dict[str, Any]:
        """The page as the API sent it: `data`, `meta`, `links` and anything else."""
        return copy.deepcopy(self._raw)

    def has_next_page(self) -> bool:
        """Whether another page follows: this one is not empty and `links.next` is set (without a
        cursor in `links.next`, from a server that pages by number only: also not the last page)."""
        if not self.data:
            return False
        links = self.links
        if "next" in links and links["next"] is None:
            return False
        if self._next_cursor() is not None:
            return True
        return self.page < self.total_pages

    def _next_cursor(self) -> Optional[str]:
        """The `cursor` query parameter of `links.next`, when this page fetches by cursor."""
        link = self.links.get("next")
        if not self._follows_cursor or not isinstance(link, str):
            return None
        values = parse_qs(urlsplit(link).query).get("cursor")
        return values[0] if values else None


class SyncPage(_PageData[_T]):
    """One page of a list: `data` holds this page's items.

    Iterating the page walks **every item of every page**, fetching the next page lazily (only
    when the loop reaches it) with the same filters, sort and page size. `iter_pages()` walks
    the pages themselves; `has_next_page()` / `get_next_page()` go one step.
    """

    def __init__(
        self,
        *,
        data: List[_T],
        raw: Mapping[str, Any],
        fetch_page: Callable[[int], SyncPage[_T]],
        fetch_cursor: Optional[Callable[[str], SyncPage[_T]]] = None,
    ) -> None:
        super().__init__(data=data, raw=raw, follows_cursor=fetch_cursor is not None)
        self._fetch_page = fetch_page
        self._fetch_cursor = fetch_cursor

    def get_next_page(self) -> SyncPage[_T]:
        if not self.has_next_page():
            raise RuntimeError("this is the last page: check has_next_page() first")
        cursor = self._next_cursor()
        if cursor is not None and self._fetch_cursor is not None:
            return self._fetch_cursor(cursor)
        return self._fetch_page(self.page + 1)

    def iter_pages(self) -> Iterator[SyncPage[_T]]:
        """This page, then each following page, fetched when the loop reaches it."""
        page: SyncPage[_T] = self
        while True:
            yield page
            if not page.has_next_page():
                return
            page = page.get_next_page()

    def __iter__(self) -> Iterator[_T]:
        for page in self.iter_pages():
            yield from page.data

    def __repr__(self) -> str:
        return f"<SyncPage page={self.page}/{self.total_pages} items={len(self.data)} total={self.total}>"


class AsyncPage(_PageData[_T]):
    """One page of a list, from `AsyncPlatformClient`: `data` holds this page's items.

    `async for` over the page walks **every item of every page**, awaiting each next page when
    the loop reaches it, with the same filters, sort and page size; `iter_pages()` walks the
    pages; `has_next_page()` / `await get_next_page()` go one step.
    """

    def __init__(
        self,
        *,
        data: List[_T],
        raw: Mapping[str, Any],
        fetch_page: Callable[[int], Awaitable[AsyncPage[_T]]],
        fetch_cursor: Optional[Callable[[str], Awaitable[AsyncPage[_T]]]] = None,
    ) -> None:
        super().__init__(data=data, raw=raw, follows_cursor=fetch_cursor is not None)
        self._fetch_page = fetch_page
        self._fetch_cursor = fetch_cursor

    async def get_next_page(self) -> AsyncPage[_T]:
        if not self.has_next_page():
            raise RuntimeError("this is the last page: check has_next_page() first")
        cursor = self._next_cursor()
        if cursor is not None and self._fetch_cursor is not None:
            return await self._fetch_cursor(cursor)
        return await self._fetch_page(self.page + 1)

    async def iter_pages(self) -> AsyncIterator[AsyncPage[_T]]:
        """This page, then each following page, fetched when the loop reaches it."""
        page: AsyncPage[_T] = self
        while True:
            yield page
            if not page.has_next_page():
                return
            page = await page.get_next_page()

    async def __aiter__(self) -> AsyncIterator[_T]:
        async for page in self.iter_pages():
            for item in page.data:
                yield item

    def __repr__(self) -> str:
        return f"<AsyncPage page={self.page}/{self.total_pages} items={len(self.data)} total={self.total}>"


def next_page_query(params: Mapping[str, object], after: Union[int, str]) -> Dict[str, object]:
    """The query of the next page: the caller's filters, sort and page size with `cursor` (a
    `links.next` cursor, in place of `page`) or `page` (a page number) set to `after`."""
    if isinstance(after, str):
        return {**{name: value for name, value in params.items() if name != "page"}, "cursor": after}
    return {**params, "page": after}


def _int(value: Optional[object], default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default
