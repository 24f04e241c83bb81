"""`PlatformClient`: configuration, the request loop (auth, retries, errors) and the resources."""

from __future__ import annotations

import os
import platform
import sys
import time
import uuid
from functools import cached_property, lru_cache
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, TypeVar, Union, cast
from urllib.parse import urlsplit, urlunsplit

from ._core import _json
from ._core._auth import Auth, StaticToken
from ._core._deprecation import DeprecationNotices
from ._core._http import (
    REPLAYABLE_METHODS,
    HTTPClientTransport,
    HTTPRequest,
    HTTPResponse,
    Transport,
)
from ._core._pagination import SyncPage, next_page_query
from ._core._qs import encode_query
from ._core._response import APIResponse
from ._core._retry import RetryPolicy, backoff_delay, retry_delay
from ._core._upload import Upload
from ._exceptions import APIConnectionError, APITimeoutError, status_error
from ._models import identity
from ._operations import API_PREFIX, MAX_PER_PAGE, TOKEN_PATH
from ._types import Body, Omit, Query, RequestOptions, omit
from ._version import __version__
from .resources import ClientResources
from .webhooks import Webhooks

__all__ = ["PlatformClient"]

_T = TypeVar("_T")

DEFAULT_TIMEOUT = 60.0
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_MAX_RETRIES = 2
API_PREFIXES = ("/v1", "/api/v1")


class _ClientConfig:
    """What the sync and the async client share: their settings, URLs, headers and bodies."""

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
    ) -> None:
        """The settings both clients take; see `PlatformClient` for each."""
        if token is None and auth is None:
            token = os.environ.get("PLATFORM_TOKEN") or None
        if (token is None) == (auth is None):
            raise ValueError(
                "PlatformClient: pass either `token` (a personal access token pat_... or an "
                "OAuth access token; default the PLATFORM_TOKEN environment variable) or `auth` "
                "(ClientCredentials(...) or RefreshToken(...))"
            )
        if isinstance(token, str) and not token.strip():
            raise ValueError("PlatformClient: `token` is empty")
        if base_url is None:
            base_url = os.environ.get("PLATFORM_BASE_URL") or None
        if base_url is None:
            raise ValueError(
                "PlatformClient: pass `base_url` (e.g. https://api.example.com) or set the "
                "PLATFORM_BASE_URL environment variable"
            )
        if api_prefix not in API_PREFIXES:
            raise ValueError(f"PlatformClient: `api_prefix` must be one of {API_PREFIXES}, got {api_prefix!r}")
        for name, value in (
            ("timeout", timeout),
            ("connect_timeout", connect_timeout),
            ("max_retries", max_retries),
            ("initial_retry_delay", initial_retry_delay),
            ("max_retry_delay", max_retry_delay),
            ("max_retry_after", max_retry_after),
        ):
            if not isinstance(value, (int, float)) or value < 0:  # pyright: ignore[reportUnnecessaryIsInstance]
                raise ValueError(f"PlatformClient: `{name}` must be a number >= 0, got {value!r}")
        self._auth: Auth = auth if auth is not None else StaticToken(cast("Union[str, Callable[[], str]]", token))
        self.base_url: str = _normalize_base_url(base_url)
        self.timeout: float = float(timeout)
        self.connect_timeout: float = float(connect_timeout)
        self.max_retries: int = int(max_retries)
        self._retry = RetryPolicy(
            max_retries=self.max_retries,
            initial_delay=float(initial_retry_delay),
            max_delay=float(max_retry_delay),
            max_retry_after=float(max_retry_after),
        )
        # The server's `Deprecation` header is reported once per operation and announcement.
        self._deprecations = DeprecationNotices()
        self.app_info: Optional[str] = app_info
        self.default_headers: Dict[str, str] = dict(default_headers or {})
        self.api_prefix: str = api_prefix
        self.idempotency_keys: bool = idempotency_keys
        self._token_argument = token
        self.user_agent: str = f"{app_info} {_sdk_user_agent()}" if app_info else _sdk_user_agent()

    @property
    def token_url(self) -> str:
        """The authorization server's token endpoint on the API's origin."""
        return self.base_url + TOKEN_PATH

    @cached_property
    def webhooks(self) -> Webhooks:
        """Webhook verification: `client.webhooks.unwrap(body, headers, secret=...)`."""
        return Webhooks()

    def _url(self, path: str, query: Optional[Query], opts: RequestOptions) -> str:
        if not path.startswith("/v1/") and path != "/v1":
            raise ValueError(f"path must start with /v1/, got {path!r}")
        url = self.base_url + self.api_prefix[: -len("/v1")] + path
        params: Dict[str, object] = dict(query or {})
        params.update(opts.get("extra_query") or {})
        encoded = encode_query(params)
        return f"{url}?{encoded}" if encoded else url

    def _headers(self, opts: RequestOptions) -> Dict[str, str]:
        headers = {"accept": "application/json", "user-agent": self.user_agent}
        for source in (self.default_headers, opts.get("extra_headers") or {}):
            for name, value in source.items():
                headers[name.lower()] = value
        return headers

    @staticmethod
    def _content(
        body: Union[Body, Upload, Omit, None], opts: RequestOptions, headers: Dict[str, str]
    ) -> Optional[bytes]:
        if isinstance(body, Upload):
            content, content_type = body.encode()
            headers["content-type"] = content_type
            return content
        extra = opts.get("extra_body")
        if (body is None or isinstance(body, Omit)) and not extra:
            return None
        merged: Dict[str, object] = {}
        if body is not None and not isinstance(body, Omit):
            merged.update({key: value for key, value in body.items() if not isinstance(value, Omit)})
        merged.update(extra or {})
        headers["content-type"] = "application/json"
        return _json.dumps(merged)

    def _prepare(
        self, method: str, path: str, query: Optional[Query], body: Union[Body, Upload, Omit, None], opts: RequestOptions
    ) -> Tuple[str, str, Dict[str, str], Optional[bytes]]:
        """The method, URL, headers and body of a call, the same on every attempt."""
        method = method.upper()
        url = self._url(path, query, opts)
        headers = self._headers(opts)
        content = self._content(body, opts, headers)
        if "idempotency_key" in opts:
            headers["idempotency-key"] = opts["idempotency_key"]
        elif method == "POST" and self.idempotency_keys and "idempotency-key" not in headers:
            # One key per call, made before the first attempt: every retry sends it, so the
            # server recognises the repeat and answers it without doing the work twice.
            headers["idempotency-key"] = str(uuid.uuid4())
        return method, url, headers, content

    @staticmethod
    def _page_params(query: Optional[Query]) -> Dict[str, object]:
        params: Dict[str, object] = dict(query or {})
        if params.get("per_page") is None or isinstance(params.get("per_page"), Omit):
            # The largest page unless the caller chose a size: fewest requests against the rate limit.
            params["per_page"] = MAX_PER_PAGE
        return params

    @staticmethod
    def _page_items(data: Any, item: Callable[[Any], _T]) -> Tuple[Dict[str, Any], List[_T]]:
        raw: Dict[str, Any] = data if isinstance(data, dict) else {}  # pyright: ignore[reportUnknownVariableType]
        items = raw.get("data")
        parsed = [item(entry) for entry in items] if isinstance(items, list) else []  # pyright: ignore[reportUnknownVariableType]
        return raw, parsed


class PlatformClient(ClientResources, _ClientConfig):
    """The Platform API client.

    ```python
    client = PlatformClient(token=os.environ["PLATFORM_TOKEN"], base_url="https://api.example.com")
    for student in client.students.list(status="active"):
        print(student.id, student.last_name)
    ```

    One instance is safe to share between threads; `with_options()` returns a copy with other
    settings that shares its connections and tokens.
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
        transport: Optional[Transport] = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """
        Args:
            token: A personal access token (`pat_...`) or an OAuth access token, or a function
                returning one. Default: the `PLATFORM_TOKEN` environment variable.
            auth: Instead of `token`: `ClientCredentials(...)` or `RefreshToken(...)`, with which
                the SDK gets and renews OAuth access tokens itself.
            base_url: Where the API lives: `https://api.example.com` (a trailing `/v1` is
                dropped). Default: the `PLATFORM_BASE_URL` environment variable.
            timeout: Seconds per attempt, from sending the request to the end of the body.
            connect_timeout: Seconds to open the connection (TCP and TLS).
            max_retries: Retries after the first attempt for failures safe to repeat.
            initial_retry_delay, max_retry_delay: Backoff in seconds: doubles per retry, capped.
            max_retry_after: Longest `Retry-After` waited for; a longer one raises at once.
            app_info: Your application, sent before the SDK in `User-Agent` (`sis-sync/1.4`).
            default_headers: Extra headers on every request.
            api_prefix: `/v1` or its alias `/api/v1`.
            idempotency_keys: Send a generated `Idempotency-Key` with every POST (default True).
            transport: Replaces the `http.client` transport (tests, instrumentation).
            sleep: How the client waits between retries; tests pass one that records delays.
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
        self._owns_transport = transport is None
        self._transport: Transport = transport if transport is not None else HTTPClientTransport()
        self._sleep = sleep

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
    ) -> PlatformClient:
        """A copy of this client with other settings. It shares this client's connections and,
        unless given another `token`/`auth`, its tokens (an OAuth token cache included)."""
        if token is not None and auth is not None:
            raise ValueError("with_options: pass `token` or `auth`, not both")
        same_auth = token is None and auth is None
        client = PlatformClient(
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
            transport=self._transport,
            sleep=self._sleep,
        )
        client._owns_transport = False
        return client

    def close(self) -> None:
        """Closes the kept-alive connections (of a transport this client created)."""
        if self._owns_transport:
            self._transport.close()

    def __enter__(self) -> PlatformClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- requests --------------------------------------------------------------------------

    def request(
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
        return self._request(method, path, query=query, body=body, options=request_options, cast=identity)

    def stream(
        self,
        path: str,
        sink: Callable[[bytes], object],
        *,
        query: Optional[Query] = None,
        request_options: Optional[RequestOptions] = None,
    ) -> APIResponse[Any]:
        """A GET like `request()`, but a successful response's body goes to `sink` in chunks as it
        arrives, so a large file never sits in memory; the returned response's content is empty.

        Auth, retries (only before the first chunk) and errors are those of every other call.
        """
        opts: RequestOptions = request_options or {}
        method, url, headers, content = self._prepare("GET", path, query, omit, opts)
        response, retries = self._send(method, url, headers, content, opts, sink=sink)
        return APIResponse(
            status_code=response.status,
            headers=response.headers,
            content=b"",
            method=method,
            url=url,
            retries_taken=retries,
            parser=identity,
        )

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
        opts: RequestOptions = options or {}
        method, url, headers, content = self._prepare(method, path, query, body, opts)
        response, retries = self._send(method, url, headers, content, opts)
        return APIResponse(
            status_code=response.status,
            headers=response.headers,
            content=response.body,
            method=method,
            url=url,
            retries_taken=retries,
            parser=cast,
        )

    def _request_page(
        self,
        path: str,
        *,
        query: Optional[Query] = None,
        options: Optional[RequestOptions] = None,
        item: Callable[[Any], _T],
    ) -> APIResponse[SyncPage[_T]]:
        params = self._page_params(query)

        def fetch(after: Union[int, str]) -> SyncPage[_T]:
            # The caller's filters, sort and page size, after a `links.next` cursor or by number.
            return self._request_page(path, query=next_page_query(params, after), options=options, item=item).parse()

        def parse(data: Any) -> SyncPage[_T]:
            raw, parsed = self._page_items(data, item)
            return SyncPage(data=parsed, raw=raw, fetch_page=fetch, fetch_cursor=fetch)

        return self._request("GET", path, query=params, options=options, cast=parse)

    def _send(
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

        def counting_sink(chunk: bytes) -> None:
            nonlocal streamed
            streamed = True
            assert sink is not None
            sink(chunk)

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
                    token = self._auth.get_token(_AuthContext(self, timeout))
                    headers["authorization"] = f"Bearer {token}"
                request = HTTPRequest(method, url, dict(headers), content, counting_sink if sink else None)
                response = self._transport_send(request, timeout)
            except APIConnectionError:
                # Part of the body already went to the sink: sending again would repeat it.
                if not replayable or attempt >= max_retries or streamed:
                    raise
                self._sleep(backoff_delay(attempt, self._retry))
                attempt += 1
                continue
            self._deprecations.warn_once(method, url, response.headers)
            if 200 <= response.status < 300:
                if sink is not None and response.body:
                    # A transport that does not stream returned the whole body: hand it over.
                    sink(response.body)
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
            self._sleep(delay)
            attempt += 1

    def _transport_send(self, request: HTTPRequest, timeout: float) -> HTTPResponse:
        try:
            return self._transport.send(request, timeout=timeout, connect_timeout=min(self.connect_timeout, timeout))
        except APIConnectionError:
            raise
        except (TimeoutError, OSError) as error:
            # A replacement transport may raise the socket's own errors.
            kind = APITimeoutError if isinstance(error, TimeoutError) else APIConnectionError
            raise kind(
                f"{request.method} {request.url}: {type(error).__name__}: {error}", request.method, request.url
            ) from error


class _AuthContext:
    """Lends an `Auth` the client's transport and settings for token requests."""

    def __init__(self, client: PlatformClient, timeout: float) -> None:
        self._client = client
        self._timeout = timeout

    @property
    def token_url(self) -> str:
        return self._client.token_url

    def send_token_request(self, request: HTTPRequest) -> HTTPResponse:
        headers = {"user-agent": self._client.user_agent, **request.headers}
        return self._client._transport_send(  # pyright: ignore[reportPrivateUsage]
            HTTPRequest(request.method, request.url, headers, request.body), self._timeout
        )


def _error_body(response: HTTPResponse) -> Any:
    """A JSON body parsed, anything else (an HTML page from a proxy) as text."""
    text = response.body.decode("utf-8", errors="replace")
    content_type = response.headers.get("content-type", "").lower()
    if "json" in content_type:
        try:
            return _json.loads(response.body)
        except ValueError:
            return text
    return text


def _normalize_base_url(base_url: str) -> str:
    """The origin and path, without trailing slashes and without a trailing `/v1`: operation
    paths start with `/v1`, so `https://api.example.com/v1/` means `https://api.example.com`
    (as in the TypeScript and PHP SDKs)."""
    parts = urlsplit(base_url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise ValueError(
            f"PlatformClient: `base_url` must be an absolute http(s) URL like https://api.example.com, got {base_url!r}"
        )
    path = parts.path.rstrip("/")
    if path.endswith(API_PREFIX):
        path = path[: -len(API_PREFIX)]
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


@lru_cache(maxsize=None)
def _sdk_user_agent() -> str:
    """`platform-api-python/0.1.0 (CPython 3.11.7; Linux x86_64)`, computed once."""
    implementation = platform.python_implementation()
    version = ".".join(str(part) for part in sys.version_info[:3])
    system = platform.system() or "unknown"
    machine = platform.machine() or "unknown"
    return f"platform-api-python/{__version__} ({implementation} {version}; {system} {machine})"

