"""`AsyncPlatformClient`: the same API as `PlatformClient`, for asyncio, on httpx.

httpx is an optional dependency: `pip install 'platform-api[async]'`. The request loop (auth,
retries, errors) follows `PlatformClient._send` step for step, with the same retry rules
(`_core/_retry.py`) and error classes, and the shared conformance suite holds both to them.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
from typing import Any, Awaitable, Callable, Dict, Mapping, Optional, Tuple, TypeVar, Union

from ._client import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    _ClientConfig,  # pyright: ignore[reportPrivateUsage]
    _error_body,  # pyright: ignore[reportPrivateUsage]
)
from ._core._auth import Auth, StaticToken
from ._core._http import REPLAYABLE_METHODS, Headers, HTTPClientTransport, HTTPRequest, HTTPResponse
from ._core._pagination import AsyncPage, next_page_query
from ._core._response import APIResponse
from ._core._retry import backoff_delay, retry_delay
from ._core._upload import Upload
from ._exceptions import APIConnectionError, APITimeoutError, status_error
from ._models import identity
from ._operations import API_PREFIX
from ._types import Body, Omit, Query, RequestOptions, omit
from .resources import AsyncClientResources

__all__ = ["AsyncPlatformClient"]

_T = TypeVar("_T")


def _httpx() -> Any:
    try:
        return importlib.import_module("httpx")
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError(
            "AsyncPlatformClient needs httpx: pip install 'platform-api[async]'"
        ) from error


class AsyncPlatformClient(AsyncClientResources, _ClientConfig):
    """The Platform API client for asyncio (FastAPI, aiohttp, ...). Every method of
    `PlatformClient` is here as a coroutine, with the same arguments and results.

    ```python
    async with AsyncPlatformClient(token=os.environ["PLATFORM_TOKEN"], base_url="https://api.example.com") as client:
        page = await client.students.list(status="active")
        async for student in page:          # every item of every page
            print(student.id, student.last_name)
    ```
    """

    def __init__(
        self,
        *,
        token: Union[str, Callable[[], str], None] = None,
        auth: Optional[Auth] = None,
        base_url: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        initial_retry_delay: float = 0.5,
        max_retry_delay: float = 8.0,
        max_retry_after: float = 60.0,
        app_info: Optional[str] = None,
        default_headers: Optional[Mapping[str, str]] = None,
        api_prefix: str = API_PREFIX,
        idempotency_keys: bool = True,
        http_client: Any = None,
        sleep: Optional[Callable[[float], Awaitable[None]]] = None,
    ) -> None:
        """
        Args: as `PlatformClient`'s, and
            http_client: An `httpx.AsyncClient` to send the requests with (your proxies, limits,
                event hooks); default one of the client's own, closed by `aclose()`.
            sleep: How the client waits between retries; default `asyncio.sleep`.
        """
        super().__init__(
            token=token,
            auth=auth,
            base_url=base_url,
            timeout=timeout,
            connect_timeout=connect_timeout,
            max_retries=max_retries,
            initial_retry_delay=initial_retry_delay,
            max_retry_delay=max_retry_delay,
            max_retry_after=max_retry_after,
            app_info=app_info,
            default_headers=default_headers,
            api_prefix=api_prefix,
            idempotency_keys=idempotency_keys,
        )
        self._httpx: Any = _httpx()
        self._owns_http_client = http_client is None
        # No redirects (as the sync transport); httpx's own timeouts are set per request.
        self._http: Any = (
            http_client if http_client is not None else self._httpx.AsyncClient(follow_redirects=False)
        )
        self._sleep: Callable[[float], Awaitable[None]] = sleep if sleep is not None else asyncio.sleep
        # OAuth token requests are rare and short: the sync transport, in a worker thread.
        self._token_transport = HTTPClientTransport()

    # --- configuration ---------------------------------------------------------------------

    def with_options(
        self,
        *,
        token: Union[str, Callable[[], str], None] = None,
        auth: Optional[Auth] = None,
        base_url: Optional[str] = None,
        timeout: Optional[float] = None,
        connect_timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
        app_info: Optional[str] = None,
        default_headers: Optional[Mapping[str, str]] = None,
        idempotency_keys: Optional[bool] = None,
    ) -> AsyncPlatformClient:
        """A copy of this client with other settings, sharing its connections and (unless given
        another `token`/`auth`) its tokens."""
        if token is not None and auth is not None:
            raise ValueError("with_options: pass `token` or `auth`, not both")
        same_auth = token is None and auth is None
        client = AsyncPlatformClient(
            token=token if not same_auth else None,
            auth=auth if not same_auth else self._auth,
            base_url=base_url if base_url is not None else self.base_url,
            timeout=timeout if timeout is not None else self.timeout,
            connect_timeout=connect_timeout if connect_timeout is not None else self.connect_timeout,
            max_retries=max_retries if max_retries is not None else self.max_retries,
            initial_retry_delay=self._retry.initial_delay,
            max_retry_delay=self._retry.max_delay,
            max_retry_after=self._retry.max_retry_after,
            app_info=app_info if app_info is not None else self.app_info,
            default_headers={**self.default_headers, **(default_headers or {})},
            api_prefix=self.api_prefix,
            idempotency_keys=idempotency_keys if idempotency_keys is not None else self.idempotency_keys,
            http_client=self._http,
            sleep=self._sleep,
        )
        client._owns_http_client = False
        return client

    async def aclose(self) -> None:
        """Closes the connections of the httpx client this client created."""
        if self._owns_http_client:
            await self._http.aclose()
        self._token_transport.close()

    async def __aenter__(self) -> AsyncPlatformClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # --- requests --------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Query] = None,
        body: Union[Body, Omit, None] = omit,
        request_options: Optional[RequestOptions] = None,
    ) -> APIResponse[Any]:
        """Any request, with the same auth, retries and errors as the generated methods.

        `path` starts with the version (`/v1/...`). Returns the raw response: `.parse()` or
        `.json()` gives the JSON body.
        """
        return await self._request(method, path, query=query, body=body, options=request_options, cast=identity)

    async def stream(
        self,
        path: str,
        sink: Callable[[bytes], object],
        *,
        query: Optional[Query] = None,
        request_options: Optional[RequestOptions] = None,
    ) -> APIResponse[Any]:
        """A GET like `request()`, but a successful response's body goes to `sink` in chunks as it
        arrives (httpx's `stream`), so a large file never sits in memory; the returned response's
        content is empty. `sink` may be a coroutine function: each chunk is awaited before the next
        is read.

        Auth, retries (only before the first chunk) and errors are those of every other call; a
        body cut short of its `Content-Length` raises `APIConnectionError`. `timeout` bounds each
        read of the body, not the whole download.
        """
        opts: RequestOptions = request_options or {}
        method, url, headers, content = self._prepare("GET", path, query, omit, opts)
        response, retries = await self._send(method, url, headers, content, opts, sink=sink)
        return APIResponse(
            status_code=response.status,
            headers=response.headers,
            content=b"",
            method=method,
            url=url,
            retries_taken=retries,
            parser=identity,
        )

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
        opts: RequestOptions = options or {}
        method, url, headers, content = self._prepare(method, path, query, body, opts)
        response, retries = await self._send(method, url, headers, content, opts)
        return APIResponse(
            status_code=response.status,
            headers=response.headers,
            content=response.body,
            method=method,
            url=url,
            retries_taken=retries,
            parser=cast,
        )

    async def _request_page(
        self,
        path: str,
        *,
        query: Optional[Query] = None,
        options: Optional[RequestOptions] = None,
        item: Callable[[Any], _T],
    ) -> APIResponse[AsyncPage[_T]]:
        params = self._page_params(query)

        async def fetch(after: Union[int, str]) -> AsyncPage[_T]:
            # The caller's filters, sort and page size, after a `links.next` cursor or by number.
            response = await self._request_page(path, query=next_page_query(params, after), options=options, item=item)
            return response.parse()

        def parse(data: Any) -> AsyncPage[_T]:
            raw, parsed = self._page_items(data, item)
            return AsyncPage(data=parsed, raw=raw, fetch_page=fetch, fetch_cursor=fetch)

        return await self._request("GET", path, query=params, options=options, cast=parse)

    async def _send(
        self,
        method: str,
        url: str,
        headers: Dict[str, str],
        content: Optional[bytes],
        opts: RequestOptions,
        *,
        sink: Optional[Callable[[bytes], object]] = None,
    ) -> Tuple[HTTPResponse, int]:
        streamed = False

        async def counting_sink(chunk: bytes) -> None:
            nonlocal streamed
            streamed = True
            assert sink is not None
            result = sink(chunk)
            if inspect.isawaitable(result):
                await result

        keyed = "idempotency-key" in headers
        # A POST or PATCH is only safe to repeat when the server can recognise the repeat.
        replayable = method in REPLAYABLE_METHODS or keyed
        max_retries = opts.get("max_retries", self.max_retries)
        timeout = opts.get("timeout", self.timeout)
        own_authorization = "authorization" in headers
        renewed = False
        attempt = 0
        while True:
            token: Optional[str] = None
            try:
                if not own_authorization:
                    token = await self._token(timeout)
                    headers["authorization"] = f"Bearer {token}"
                if sink is None:
                    response = await self._attempt(method, url, dict(headers), content, timeout)
                else:
                    response = await self._attempt_streamed(url, dict(headers), timeout, counting_sink)
            except APIConnectionError:
                # Part of the body already went to the sink: sending again would repeat it.
                if not replayable or attempt >= max_retries or streamed:
                    raise
                await self._sleep(backoff_delay(attempt, self._retry))
                attempt += 1
                continue
            self._deprecations.warn_once(method, url, response.headers)
            if 200 <= response.status < 300:
                return response, attempt
            # An OAuth access token revoked or expired early: renew it once and send again.
            if response.status == 401 and token is not None and not renewed and self._auth.invalidate(token):
                renewed = True
                continue
            error = status_error(response.status, response.headers, _error_body(response))
            delay = retry_delay(
                response.status,
                response.headers,
                replayable=replayable,
                keyed=keyed,
                attempt=attempt,
                policy=self._retry,
            )
            if delay is None or attempt >= max_retries:
                raise error
            await self._sleep(delay)
            attempt += 1

    async def _token(self, timeout: float) -> str:
        if isinstance(self._auth, StaticToken):
            return self._auth.get_token(_AsyncAuthContext(self, timeout))
        return await asyncio.to_thread(self._auth.get_token, _AsyncAuthContext(self, timeout))

    async def _attempt(
        self, method: str, url: str, headers: Dict[str, str], content: Optional[bytes], timeout: float
    ) -> HTTPResponse:
        httpx = self._httpx
        limits = httpx.Timeout(timeout, connect=min(self.connect_timeout, timeout))
        try:
            # The whole attempt, body included, within `timeout` (httpx's limits are per read).
            response = await asyncio.wait_for(
                self._http.request(method, url, headers=headers, content=content, timeout=limits),
                timeout,
            )
        except (asyncio.TimeoutError, httpx.TimeoutException) as error:
            raise APITimeoutError(
                f"{method} {url} got no complete response within {timeout:g} s", method, url
            ) from error
        except (httpx.TransportError, OSError) as error:
            raise APIConnectionError(
                f"{method} {url} could not reach the API: {type(error).__name__}: {error}", method, url
            ) from error
        return HTTPResponse(
            status=int(response.status_code),
            headers=Headers(list(response.headers.multi_items())),
            body=bytes(response.content),
            reason=str(response.reason_phrase),
        )


    async def _attempt_streamed(
        self,
        url: str,
        headers: Dict[str, str],
        timeout: float,
        sink: Callable[[bytes], Awaitable[None]],
    ) -> HTTPResponse:
        """One GET whose successful body goes to `sink` chunk by chunk (decompressed); an error
        response is read whole, as `_attempt` reads it. `timeout` bounds the wait for the headers
        and each read after them."""
        httpx = self._httpx
        limits = httpx.Timeout(timeout, connect=min(self.connect_timeout, timeout))
        try:
            async with self._http.stream("GET", url, headers=headers, timeout=limits) as response:
                status = int(response.status_code)
                if 200 <= status < 300:
                    async for chunk in response.aiter_bytes():
                        await sink(bytes(chunk))
                    body = b""
                else:
                    body = bytes(await response.aread())
                return HTTPResponse(
                    status=status,
                    headers=Headers(list(response.headers.multi_items())),
                    body=body,
                    reason=str(response.reason_phrase),
                )
        except httpx.TimeoutException as error:
            raise APITimeoutError(
                f"GET {url} got no response or no more of its body within {timeout:g} s", "GET", url
            ) from error
        except (httpx.TransportError, OSError) as error:
            # httpx raises RemoteProtocolError for a body cut short of its Content-Length.
            raise APIConnectionError(
                f"GET {url} could not reach the API or its body was cut short: {type(error).__name__}: {error}",
                "GET",
                url,
            ) from error


class _AsyncAuthContext:
    """Lends an `Auth` a transport for token requests (run in a worker thread)."""

    def __init__(self, client: AsyncPlatformClient, timeout: float) -> None:
        self._client = client
        self._timeout = timeout

    @property
    def token_url(self) -> str:
        return self._client.token_url

    def send_token_request(self, request: HTTPRequest) -> HTTPResponse:
        headers = {"user-agent": self._client.user_agent, **request.headers}
        return self._client._token_transport.send(  # pyright: ignore[reportPrivateUsage]
            HTTPRequest(request.method, request.url, headers, request.body),
            timeout=self._timeout,
            connect_timeout=min(self._client.connect_timeout, self._timeout),
        )
