"""The base of the generated resource namespaces (`client.students`, ...)."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable, Optional, TypeVar, Union
from urllib.parse import quote

from .._types import Body, Omit, Query, RequestOptions, omit
from ._pagination import AsyncPage, SyncPage
from ._response import APIResponse
from ._upload import Upload

if TYPE_CHECKING:
    from .._async_client import AsyncPlatformClient
    from .._client import PlatformClient

__all__ = ["SyncAPIResource", "AsyncAPIResource", "cached_property", "path_param", "parse_none", "parse_file"]

_T = TypeVar("_T")


class SyncAPIResource:
    def __init__(self, client: PlatformClient) -> None:
        self._client = client

    def _sleep(self, seconds: float) -> None:
        """How the client waits between retries (a follower's too)."""
        self._client._sleep(seconds)  # pyright: ignore[reportPrivateUsage]

    def _request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Query] = None,
        body: Union[Body, Upload, Omit, None] = omit,
        options: Optional[RequestOptions] = None,
        cast: Callable[[Any], _T],
    ) -> APIResponse[_T]:
        return self._client._request(  # pyright: ignore[reportPrivateUsage]
            method, path, query=query, body=body, options=options, cast=cast
        )

    def _request_page(
        self,
        path: str,
        *,
        query: Optional[Query] = None,
        options: Optional[RequestOptions] = None,
        item: Callable[[Any], _T],
    ) -> APIResponse[SyncPage[_T]]:
        return self._client._request_page(  # pyright: ignore[reportPrivateUsage]
            path, query=query, options=options, item=item
        )


class AsyncAPIResource:
    def __init__(self, client: AsyncPlatformClient) -> None:
        self._client = client

    async def _sleep(self, seconds: float) -> None:
        """How the client waits between retries (a follower's too)."""
        await self._client._sleep(seconds)  # pyright: ignore[reportPrivateUsage]

    async def _request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Query] = None,
        body: Union[Body, Upload, Omit, None] = omit,
        options: Optional[RequestOptions] = None,
        cast: Callable[[Any], _T],
    ) -> APIResponse[_T]:
        return await self._client._request(  # pyright: ignore[reportPrivateUsage]
            method, path, query=query, body=body, options=options, cast=cast
        )

    async def _request_page(
        self,
        path: str,
        *,
        query: Optional[Query] = None,
        options: Optional[RequestOptions] = None,
        item: Callable[[Any], _T],
    ) -> APIResponse[AsyncPage[_T]]:
        return await self._client._request_page(  # pyright: ignore[reportPrivateUsage]
            path, query=query, options=options, item=item
        )


def path_param(name: str, value: str) -> str:
    """A path segment, percent-encoded so an id can never change the path it is put in."""
    if not isinstance(value, str) or not value:  # pyright: ignore[reportUnnecessaryIsInstance]
        # `retrieve("")` would otherwise call the list route and parse a page as one object.
        raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    return quote(value, safe="")


def parse_none(data: Any) -> None:
    """A 204 has no body: nothing to parse."""
    return None


# `APIResponse.parse` reads no body for it: an export's file would not parse as JSON.
parse_none.reads_body = False  # type: ignore[attr-defined]


def parse_file(content: bytes) -> str:
    """A file the API answers (an export's NDJSON or CSV): its text, as it came."""
    return content.decode("utf-8")


# `APIResponse.parse` hands it the body's bytes: a file is not JSON.
parse_file.reads_content = True  # type: ignore[attr-defined]
