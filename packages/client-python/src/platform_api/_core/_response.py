"""Raw access to a response: status, headers and request id, with the typed body on demand."""

from __future__ import annotations

from typing import Any, Callable, Generic, Optional, TypeVar

from . import _json
from ._http import Headers

__all__ = ["APIResponse"]

_T = TypeVar("_T")

_UNSET: Any = object()


class APIResponse(Generic[_T]):
    """What `with_raw_response` methods return. `parse()` gives what the plain method returns."""

    def __init__(
        self,
        *,
        status_code: int,
        headers: Headers,
        content: bytes,
        method: str,
        url: str,
        retries_taken: int,
        parser: Callable[[Any], _T],
    ) -> None:
        self.status_code = status_code
        self.headers = headers
        self.content = content
        self.method = method
        self.url = url
        self.retries_taken = retries_taken
        """How many retries it took to get this response (0: the first attempt)."""
        self._parser = parser
        self._parsed: Any = _UNSET

    @property
    def request_id(self) -> Optional[str]:
        """The `X-Request-Id` of the response: quote it to support."""
        return self.headers.get("x-request-id")

    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body parsed as JSON; None when there is no body (204)."""
        if not self.content:
            return None
        return _json.loads(self.content)

    def parse(self) -> _T:
        """The typed result (a model, a page, a file's text, or None for 204); parsed once, then cached."""
        if self._parsed is _UNSET:
            if getattr(self._parser, "reads_content", False):
                self._parsed = self._parser(self.content)
            else:
                reads_body = getattr(self._parser, "reads_body", True)
                self._parsed = self._parser(self.json() if reads_body else None)
        result: _T = self._parsed
        return result

    def __repr__(self) -> str:
        return f"<APIResponse {self.method} {self.url} [{self.status_code}]>"
