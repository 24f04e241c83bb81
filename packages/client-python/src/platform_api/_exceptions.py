"""Every error the SDK raises is a `PlatformError`.

An answer other than 2xx is an `APIStatusError` of the subclass that fits its status, built from
the RFC 9457 problem document the server sends (`code`, `detail`, `errors`, `request_id`, ...).
No answer at all is an `APIConnectionError` (`APITimeoutError` when the timeout ran out).
"""

from __future__ import annotations

import json
import math
import time
from email.utils import parsedate_to_datetime
from typing import Any, Dict, List, Mapping, Optional, cast

from ._core._headers import Headers

__all__ = [
    "PlatformError",
    "APIConnectionError",
    "APITimeoutError",
    "APIStatusError",
    "ValidationError",
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
    "ConflictError",
    "CursorExpiredError",
    "RateLimitError",
    "ServerError",
    "OAuthError",
    "WebhookVerificationError",
    "FieldError",
    "parse_retry_after",
]


class PlatformError(Exception):
    """Base of every error this SDK raises."""


class APIConnectionError(PlatformError):
    """No response arrived: DNS failure, refused or reset connection, TLS error."""

    def __init__(self, message: str, method: str = "", url: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.method = method
        self.url = url


class APITimeoutError(APIConnectionError):
    """No complete response arrived within the timeout."""


class FieldError:
    """One offending parameter of a 400 (`path` like `body.email` or `query.per_page`)."""

    __slots__ = ("path", "message", "code")

    def __init__(self, path: str, message: str, code: Optional[str] = None) -> None:
        self.path: str = path
        self.message: str = message
        self.code: Optional[str] = code

    def __repr__(self) -> str:
        return f"FieldError(path={self.path!r}, message={self.message!r}, code={self.code!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FieldError) and (self.path, self.message, self.code) == (
            other.path,
            other.message,
            other.code,
        )

    def __hash__(self) -> int:
        return hash((self.path, self.message, self.code))


class APIStatusError(PlatformError):
    """The API answered with a status other than 2xx."""

    status_code: int
    headers: Headers
    body: Any
    """The parsed JSON body, or the text when it was not JSON (an HTML page from a proxy)."""
    problem: Optional[Dict[str, Any]]
    """The whole problem+json document (unknown members included); None when it was not one."""
    code: Optional[str]
    """Stable machine-readable code (`validation_error`, `rate_limited`, ...); match on this."""
    detail: str
    title: Optional[str]
    type: Optional[str]
    instance: Optional[str]
    request_id: Optional[str]
    """From the problem's `request_id`, else the `X-Request-Id` header: quote it to support."""
    errors: List[FieldError]

    def __init__(
        self,
        status_code: int,
        headers: Headers,
        body: Any,
        *,
        code: Optional[str] = None,
        detail: Optional[str] = None,
        message: Optional[str] = None,
    ) -> None:
        problem = _problem(body)
        self.status_code = status_code
        self.headers = headers
        self.body = body
        self.problem = problem
        self.code = code or _str(problem, "code")
        self.title = _str(problem, "title")
        self.type = _str(problem, "type")
        self.instance = _str(problem, "instance")
        self.detail = detail or _str(problem, "detail") or _describe_non_problem(status_code, body)
        self.request_id = _str(problem, "request_id") or headers.get("x-request-id")
        self.errors = _field_errors(problem)
        if message is None:
            code_text = f" {self.code}" if self.code else ""
            request = f" (request {self.request_id})" if self.request_id else ""
            message = f"{status_code}{code_text}: {self.detail}{request}"
        super().__init__(message)

    @property
    def message(self) -> str:
        return str(self)


class ValidationError(APIStatusError):
    """400: the request is invalid; `errors` names each offending parameter."""


class AuthenticationError(APIStatusError):
    """401: missing, malformed, unknown, expired or revoked token."""


class PermissionDeniedError(APIStatusError):
    """403: the token lacks the scope the operation needs (`insufficient_scope`), or `forbidden`."""


class NotFoundError(APIStatusError):
    """404: no such resource in your organization."""


class ConflictError(APIStatusError):
    """409: conflicts with the current state (`conflict`, `invalid_state_transition`)."""


class CursorExpiredError(APIStatusError):
    """410 `cursor_expired`: the change feed no longer keeps the changes after this cursor.

    Nothing can resume there: start again from an export (`POST /v1/exports`) and follow the
    feed from its cursor.
    """

    def __init__(self, status_code: int, headers: Headers, body: Any) -> None:
        request_id = _str(_problem(body), "request_id") or headers.get("x-request-id")
        request = f" (request {request_id})" if request_id else ""
        super().__init__(
            status_code,
            headers,
            body,
            message=f"{status_code} cursor_expired: the changes after this cursor are no longer kept; "
            f"start again from an export (POST /v1/exports) and follow from its cursor{request}",
        )


class RateLimitError(APIStatusError):
    """429: over the rate limit. Raised only once the retries are used up."""

    @property
    def retry_after(self) -> Optional[int]:
        """Seconds the server asked to wait (`Retry-After`), if it said."""
        seconds = parse_retry_after(self.headers.get("retry-after"))
        return None if seconds is None else math.ceil(seconds)


class ServerError(APIStatusError):
    """5xx: something failed on the server's side; quote `request_id` to support."""


class OAuthError(AuthenticationError):
    """The token endpoint refused (RFC 6749 §5.2): `error` is e.g. `invalid_grant`, `invalid_client`."""

    error: str
    error_description: Optional[str]

    def __init__(self, status_code: int, headers: Headers, body: Any, grant_type: str) -> None:
        data = cast("Dict[str, Any]", body) if isinstance(body, dict) else {}
        error = data.get("error")
        description = data.get("error_description")
        self.error = error if isinstance(error, str) else "server_error"
        self.error_description = description if isinstance(description, str) else None
        suffix = f" ({self.error_description})" if self.error_description else ""
        super().__init__(
            status_code,
            headers,
            body,
            code=self.error,
            detail=self.error_description,
            message=f"The token endpoint refused the {grant_type} grant: {self.error}{suffix}",
        )


class WebhookVerificationError(PlatformError):
    """A webhook delivery failed verification; `reason` says why, the message what to fix.

    Reasons: `missing_header`, `invalid_timestamp`, `timestamp_outside_tolerance`,
    `no_valid_signature`, `invalid_secret`, `invalid_payload`.
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def status_error(status_code: int, headers: Headers, body: Any) -> APIStatusError:
    """The subclass that fits the status, so callers can `except` the kind they handle."""
    if status_code == 410 and _str(_problem(body), "code") == "cursor_expired":
        return CursorExpiredError(status_code, headers, body)
    kind = _BY_STATUS.get(status_code)
    if kind is None:
        kind = ServerError if status_code >= 500 else APIStatusError
    return kind(status_code, headers, body)


_BY_STATUS: Dict[int, type[APIStatusError]] = {
    400: ValidationError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    429: RateLimitError,
}


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """`Retry-After` as seconds from now: delay-seconds or an HTTP-date (RFC 9110 §10.2.3)."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit() and text.isascii():
        return float(int(text))
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:  # pyright: ignore[reportUnnecessaryComparison]  (3.9 returns None)
        return None
    if when.tzinfo is None:
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def _problem(body: Any) -> Optional[Dict[str, Any]]:
    if not isinstance(body, dict):
        return None
    problem: Dict[str, Any] = body  # pyright: ignore[reportUnknownVariableType]
    if isinstance(problem.get("status"), int) and isinstance(problem.get("detail"), str):
        return problem
    return None


def _str(problem: Optional[Mapping[str, Any]], key: str) -> Optional[str]:
    if problem is None:
        return None
    value = problem.get(key)
    return value if isinstance(value, str) else None


def _field_errors(problem: Optional[Mapping[str, Any]]) -> List[FieldError]:
    items = problem.get("errors") if problem is not None else None
    if not isinstance(items, list):
        return []
    result: List[FieldError] = []
    for item in items:  # pyright: ignore[reportUnknownVariableType]
        if isinstance(item, dict):
            path = item.get("path")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            message = item.get("message")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            code = item.get("code")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            result.append(
                FieldError(
                    path if isinstance(path, str) else "",
                    message if isinstance(message, str) else "",
                    code if isinstance(code, str) else None,
                )
            )
    return result


def _describe_non_problem(status: int, body: Any) -> str:
    if isinstance(body, str):
        text = body.strip()[:200]
    elif body is None:
        text = ""
    else:
        text = json.dumps(body)[:200]
    return f"HTTP {status} without a problem document" + (f": {text}" if text else "")
