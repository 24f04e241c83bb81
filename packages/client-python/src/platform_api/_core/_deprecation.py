"""Deprecation warnings driven by the server's `Deprecation` header (RFC 9745), so a client
generated before an operation was deprecated still tells its user."""

from __future__ import annotations

import re
import sys
import threading
import warnings
from email.utils import parsedate_to_datetime
from typing import List, Optional, Set
from urllib.parse import urlsplit

from ._headers import Headers

__all__ = ["APIDeprecationWarning", "DeprecationNotices", "deprecation_message"]


class APIDeprecationWarning(FutureWarning):
    """The API says a request used a deprecated operation, parameter or field.

    A `FutureWarning`, not a `DeprecationWarning`: Python hides `DeprecationWarning` by default
    outside `__main__` and test runners, and this one is about a remote API that will stop
    answering in production, so it must reach the person running the program. Silence it with
    `warnings.filterwarnings("ignore", category=platform_api.APIDeprecationWarning)`.
    """


# A public id (`stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S8`): a prefix and a ULID.
_ID_SEGMENT = re.compile(r"^[a-z]+_[0-9A-HJKMNP-TV-Z]{26}$")
_LINK = re.compile(r"<([^>]*)>([^,<]*)")
_DEPRECATION_REL = re.compile(r';\s*rel="?([^";]*\s)?deprecation[\s";]', re.IGNORECASE)
_PACKAGE = __name__.split(".")[0]


def _links(values: List[str]) -> List[str]:
    links: List[str] = []
    for value in values:
        for match in _LINK.finditer(value):
            if _DEPRECATION_REL.search(match.group(2) + ";"):
                links.append(match.group(1))
    return links


def deprecation_message(method: str, url: str, headers: Headers) -> Optional[str]:
    """The warning for a response, or None when it has no `Deprecation` header. It names the
    operation (id-like path segments as `{id}`), the dates and the migration notes."""
    if "deprecation" not in headers:
        return None
    path = urlsplit(url).path or url
    operation = "/".join("{id}" if _ID_SEGMENT.match(segment) else segment for segment in path.split("/"))
    message = f"Platform API: {method} {operation} uses a deprecated part of the API"
    since = re.match(r"^@(-?\d+)$", headers["deprecation"].strip())
    if since:
        import datetime as _dt

        day = _dt.datetime.fromtimestamp(int(since.group(1)), tz=_dt.timezone.utc).date().isoformat()
        message += f" (deprecated since {day})"
    if "sunset" in headers:
        try:
            sunset = parsedate_to_datetime(headers["sunset"])
            message += f"; it may stop working after {sunset.strftime('%a, %d %b %Y %H:%M:%S')} GMT"
        except (TypeError, ValueError):
            pass
    message += "."
    links = _links(headers.get_list("link"))
    if links:
        message += " Migration note: " + " ".join(links)
    return message


def _stacklevel() -> int:
    """The stack level of the first frame outside this package, so the warning names the
    caller's line (and the default filters, keyed by location, work on it)."""
    level = 1
    frame = sys._getframe(1)  # pyright: ignore[reportPrivateUsage]
    while frame is not None and str(frame.f_globals.get("__name__", "")).split(".")[0] == _PACKAGE:
        frame = frame.f_back
        level += 1
    return level


class DeprecationNotices:
    """One warning per operation and announcement, per client."""

    def __init__(self) -> None:
        self._seen: Set[str] = set()
        self._lock = threading.Lock()

    def warn_once(self, method: str, url: str, headers: Headers) -> None:
        message = deprecation_message(method, url, headers)
        if message is None:
            return
        with self._lock:
            if message in self._seen:
                return
            self._seen.add(message)
        warnings.warn(message, APIDeprecationWarning, stacklevel=_stacklevel())
