"""A scripted transport injected through the public `transport=` option, and a client on it."""

from __future__ import annotations

import json
import threading
from typing import Any, Callable, Dict, List, Mapping, Optional, Union
from urllib.parse import parse_qsl, urlsplit

from platform_api import Headers, HTTPRequest, HTTPResponse

Reply = Union[HTTPResponse, BaseException, Callable[[HTTPRequest], HTTPResponse]]


def response(
    status: int = 200,
    body: Any = None,
    headers: Optional[Mapping[str, str]] = None,
    *,
    raw: Optional[bytes] = None,
    content_type: str = "application/json",
) -> HTTPResponse:
    """A response; a dict/list body is sent as JSON (problem+json for a 4xx/5xx problem)."""
    all_headers: Dict[str, str] = {}
    content = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
    if content:
        all_headers["Content-Type"] = content_type
    all_headers.update(headers or {})
    return HTTPResponse(status=status, headers=Headers(all_headers), body=content)


def problem(
    status: int,
    code: str,
    detail: str = "went wrong",
    headers: Optional[Mapping[str, str]] = None,
    **extra: Any,
) -> HTTPResponse:
    body = {
        "type": f"http://127.0.0.1:3000/docs/errors#{code}",
        "title": code,
        "status": status,
        "detail": detail,
        "instance": "/v1/x",
        "code": code,
        "request_id": "req_123",
        **extra,
    }
    return response(status, body, headers, content_type="application/problem+json")


class FakeTransport:
    """Answers each request with the next scripted reply and records what was sent."""

    def __init__(self, *replies: Reply) -> None:
        self.replies: List[Reply] = list(replies)
        self.requests: List[HTTPRequest] = []
        self.timeouts: List[float] = []
        self.lock = threading.Lock()
        self.closed = False

    def add(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def send(self, request: HTTPRequest, *, timeout: float, connect_timeout: float) -> HTTPResponse:
        with self.lock:
            self.requests.append(request)
            self.timeouts.append(timeout)
            if not self.replies:
                raise AssertionError(f"unexpected request {request.method} {request.url}")
            reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply):
            return reply(request)
        return reply

    def close(self) -> None:
        self.closed = True

    # helpers for assertions
    def query(self, index: int = -1) -> Dict[str, str]:
        return dict(parse_qsl(urlsplit(self.requests[index].url).query))

    def path(self, index: int = -1) -> str:
        return urlsplit(self.requests[index].url).path

    def json(self, index: int = -1) -> Any:
        body = self.requests[index].body
        return None if body is None else json.loads(body)


class Sleeps(List[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


STUDENT: Dict[str, Any] = {
    "id": "stu_1",
    "object": "student",
    "student_number": "S-1",
    "first_name": "Ada",
    "last_name": "Lovelace",
    "preferred_name": None,
    "email": "ada@example.test",
    "date_of_birth": None,
    "status": "active",
    "grade_level": 9,
    "created_at": "2025-01-02T03:04:05.678Z",
    "updated_at": "2025-01-02T03:04:05.678Z",
}


def student(**changes: Any) -> Dict[str, Any]:
    return {**STUDENT, **changes}


def page(items: List[Dict[str, Any]], page_number: int, total_pages: int, per_page: int = 2) -> Dict[str, Any]:
    base = "https://api.example.test/v1/students"
    return {
        "data": items,
        "meta": {"page": page_number, "per_page": per_page, "total": total_pages * per_page, "total_pages": total_pages, "total_exact": True},
        "links": {
            "self": f"{base}?page={page_number}",
            "first": f"{base}?page=1",
            "prev": None if page_number == 1 else f"{base}?page={page_number - 1}",
            "next": None if page_number >= total_pages else f"{base}?page={page_number + 1}",
            "last": f"{base}?page={total_pages}",
        },
    }
