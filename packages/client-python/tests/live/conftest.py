"""The live suite: a real server started by `platform-sdk-live`, which sets the environment read
here (see tooling/sdk-live/README.md). Every client records which operations it called with
success, and the last test fails when an operation of the contract was never called."""

from __future__ import annotations

import os
import re
import uuid
from dataclasses import dataclass
from typing import Any, Iterator, List, Optional, Pattern, Set, Tuple

import pytest

import platform_api
from platform_api import OPERATIONS, HTTPClientTransport, HTTPRequest, HTTPResponse

REQUIRED = (
    "PLATFORM_BASE_URL",
    "PLATFORM_TOKEN",
    "PLATFORM_READONLY_TOKEN",
    "PLATFORM_LIMITED_TOKEN",
    "PLATFORM_OAUTH_CLIENT_ID",
    "PLATFORM_OAUTH_CLIENT_SECRET",
    "PLATFORM_OAUTH_REFRESH_TOKENS",
    "PLATFORM_OAUTH_TOKEN_URL",
)
_missing = [name for name in REQUIRED if not os.environ.get(name)]
if _missing:
    # Not a skip: a live suite that silently runs nothing proves nothing.
    raise RuntimeError(
        f"the live suite needs {', '.join(_missing)}: run it through the harness, "
        "`platform-sdk-live -- python3 -m pytest tests/live` (pnpm --filter @platform/client-python test)"
    )


@dataclass(frozen=True)
class Live:
    base_url: str
    token: str
    readonly_token: str
    limited_token: str
    limited_rate_limit: int
    oauth_client_id: str
    oauth_client_secret: str
    refresh_tokens: Tuple[str, ...]
    token_url: str


LIVE = Live(
    base_url=os.environ["PLATFORM_BASE_URL"],
    token=os.environ["PLATFORM_TOKEN"],
    readonly_token=os.environ["PLATFORM_READONLY_TOKEN"],
    limited_token=os.environ["PLATFORM_LIMITED_TOKEN"],
    limited_rate_limit=int(os.environ.get("PLATFORM_LIMITED_RATE_LIMIT", "5")),
    oauth_client_id=os.environ["PLATFORM_OAUTH_CLIENT_ID"],
    oauth_client_secret=os.environ["PLATFORM_OAUTH_CLIENT_SECRET"],
    refresh_tokens=tuple(os.environ["PLATFORM_OAUTH_REFRESH_TOKENS"].split(",")),
    token_url=os.environ["PLATFORM_OAUTH_TOKEN_URL"],
)

# --- which operations were called -----------------------------------------------------------

CALLED: Set[str] = set()
_ROUTES: List[Tuple[str, Pattern[str], str]] = [
    (op.http_method, re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", op.path) + "$"), op.id) for op in OPERATIONS
]


def operation_of(method: str, url: str) -> Optional[str]:
    path = url.split("?", 1)[0].split("://", 1)[-1]
    path = path[path.index("/") :] if "/" in path else "/"
    for http_method, pattern, op_id in _ROUTES:
        if http_method == method and pattern.match(path):
            return op_id
    return None


class RecordingTransport(HTTPClientTransport):
    """The real transport, noting each operation that answered 2xx."""

    def send(self, request: HTTPRequest, *, timeout: float, connect_timeout: float) -> HTTPResponse:
        response = super().send(request, timeout=timeout, connect_timeout=connect_timeout)
        if 200 <= response.status < 300:
            op_id = operation_of(request.method, request.url)
            if op_id is not None:
                CALLED.add(op_id)
        return response


TRANSPORT = RecordingTransport()


def make_client(**options: Any) -> platform_api.PlatformClient:
    options.setdefault("base_url", LIVE.base_url)
    if "auth" not in options:
        options.setdefault("token", LIVE.token)
    options.setdefault("transport", TRANSPORT)
    return platform_api.PlatformClient(**options)


@pytest.fixture
def client() -> Iterator[platform_api.PlatformClient]:
    yield make_client()


def unique(prefix: str = "") -> str:
    return f"{prefix}{uuid.uuid4().hex[:10]}"


# A change-feed cursor as the API issues it: the position, a dot, the organization's tag; or
# "0", the start of every feed (an organization with no change yet).
FEED_CURSOR = re.compile(r"\A(0|(0|[1-9][0-9]{0,17})\.[A-Za-z0-9_-]{10})\Z")


def position_of(cursor: Optional[str]) -> int:
    """The position a cursor names: the number before its dot (documented, so tests may read it)."""
    assert cursor is not None and FEED_CURSOR.match(cursor), f"not a feed cursor: {cursor!r}"
    return int(cursor.split(".", 1)[0])


def tampered(cursor: str) -> str:
    """The cursor with its tag changed: well formed, but no organization's."""
    head, tag = cursor.split(".", 1)
    return f"{head}.{('A' if tag[0] != 'A' else 'B')}{tag[1:]}"


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: List[pytest.Item]) -> None:
    # The coverage check runs after every other test, whatever the file order.
    items.sort(key=lambda item: item.name == "test_every_operation_of_the_contract_was_called")
