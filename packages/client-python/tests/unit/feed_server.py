"""A change feed served by the scripted server on 127.0.0.1: `total` changes, read after a
cursor like `GET /v1/changes`, with some requests (by index) answered by a failure instead."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any, Callable, Dict, List, Mapping, Optional
from urllib.parse import parse_qsl, urlsplit

from .test_transport import Handler, send_json

Failure = Callable[[BaseHTTPRequestHandler], None]


def event(position: int) -> Dict[str, Any]:
    return {
        "id": f"evt_{position}",
        "position": position,
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
        after_text = query.get("after", "0")
        after = 0 if after_text == "oldest" else int(after_text)
        end = min(total, int(query.get("until", str(total))))
        last = min(after + int(query.get("limit", "2")), end)
        data: List[Dict[str, Any]] = [event(p) for p in range(after + 1, last + 1)]
        send_json(handler, 200, {"data": data, "next_cursor": str(max(last, after)), "has_more": last < end})

    return script
