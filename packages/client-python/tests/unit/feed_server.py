"""A change feed served by the scripted server on 127.0.0.1: `total` changes, read after a
cursor like `GET /v1/changes`, with some requests (by index) answered by a failure instead.
Its cursors are shaped as the API's (`<position>.<10-character tag>`, the tag bound to the
feed) and a cursor it did not hand out is a 400 naming the parameter, as the API answers."""

from __future__ import annotations

import base64
import hashlib
import json
from http.server import BaseHTTPRequestHandler
from typing import Any, Callable, Dict, List, Mapping, Optional
from urllib.parse import parse_qsl, urlsplit

from .test_transport import Handler, send_json

Failure = Callable[[BaseHTTPRequestHandler], None]


def cursor(position: int, feed: str = "org_fake") -> str:
    """The cursor just after `position` in `feed`, shaped as the API's: position, dot, tag."""
    digest = hashlib.sha256(f"feed-cursor\0{feed}\0{position}".encode()).digest()
    return f"{position}.{base64.urlsafe_b64encode(digest).decode()[:10]}"


def position_of(text: str) -> Optional[int]:
    """The position a cursor of this feed names (`0` and `oldest` are 0), or None."""
    if text in ("0", "oldest"):
        return 0
    head = text.split(".", 1)[0]
    if head.isdigit() and text == cursor(int(head)):
        return int(head)
    return None


def event(position: int) -> Dict[str, Any]:
    return {
        "id": f"evt_{position}",
        "position": position,
        "cursor": cursor(position),
        "object": "event",
        "type": "x.future",
        "timestamp": "2026-12-01T10:00:00.000Z",
        "api_version": "v1",
        "data": {},
    }


def query_of(path: str) -> Dict[str, str]:
    return dict(parse_qsl(urlsplit(path).query))


def problem(status: int, code: str, headers: Optional[Mapping[str, str]] = None) -> Failure:
    def send(handler: BaseHTTPRequestHandler) -> None:
        body = json.dumps(
            {"type": "about:blank", "title": code, "status": status, "detail": f"{code} here", "code": code}
        ).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/problem+json")
        handler.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(body)

    return send


def invalid_cursor(name: str) -> Dict[str, Any]:
    return {
        "type": "about:blank",
        "title": "validation_error",
        "status": 400,
        "detail": "The request is not valid.",
        "code": "validation_error",
        "errors": [{"path": f"query.{name}", "message": f"{name} is not a cursor of this feed", "code": "invalid_cursor"}],
    }


def drop(handler: BaseHTTPRequestHandler) -> None:
    """The connection closed without an answer (a server going away)."""
    handler.close_connection = True


def feed(total: int, failures: Optional[Dict[int, Failure]] = None) -> Handler:
    """Answers the index-th request with `failures[index]` if any, else with the changes after
    its `after` (`oldest` = 0), `limit` (default 2) at a time, up to `until` if given."""

    def script(handler: BaseHTTPRequestHandler, index: int) -> None:
        failure = (failures or {}).get(index)
        if failure is not None:
            failure(handler)
            return
        query = query_of(handler.path)
        after = position_of(query.get("after", "0"))
        until = position_of(query.get("until", cursor(total)))
        for name, value in (("after", after), ("until", until)):
            if value is None:
                send_json(handler, 400, invalid_cursor(name))
                return
        assert after is not None and until is not None
        end = min(total, until)
        last = min(after + int(query.get("limit", "2")), end)
        data: List[Dict[str, Any]] = [event(p) for p in range(after + 1, last + 1)]
        send_json(handler, 200, {"data": data, "next_cursor": cursor(max(last, after)), "has_more": last < end})

    return script
