"""Auto-paging follows the keyset cursor of `links.next`, over a real socket: a scripted server on
127.0.0.1 answers as the Platform server pages a list (a request it has no page for is a 500,
so a walk that asks for one page too many fails)."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler
from typing import Any, Callable, Dict, List, Optional

from .fakes import student
from .test_transport import Handler, ScriptedServer, client_for, send_json, serve  # noqa: F401  # pyright: ignore[reportUnusedImport]  (the fixture)

CURSOR_1 = "WzIsIi1jcmVhdGVkX2F0Il0.Xk3aB9_-q1"
CURSOR_2 = "WzMsIi1jcmVhdGVkX2F0Il0.Yk3aB9_-q2"
QUERY = "per_page=2&sort=last_name&q=ada&status=active"  # the order the client sends them in


def body(ids: List[str], page: int, total: int, next_query: Optional[str]) -> Dict[str, Any]:
    """A list page of students `ids`; `next_query` is the query of `links.next` (None: the last)."""
    base = "http://127.0.0.1/v1/students"
    return {
        "data": [student(id=i) for i in ids],
        "meta": {"page": page, "per_page": 2, "total": total, "total_pages": -(-total // 2), "total_exact": True},
        "links": {
            "self": f"{base}?page={page}",
            "first": f"{base}?page=1",
            "prev": None,
            "next": None if next_query is None else f"{base}?{next_query}",
            "last": f"{base}?page={-(-total // 2)}",
        },
    }


def pages(*bodies: Dict[str, Any]) -> Handler:
    """Answers the index-th request with the index-th body, and any further request with a 500."""

    def script(handler: BaseHTTPRequestHandler, index: int) -> None:
        send_json(handler, 200, bodies[index]) if index < len(bodies) else send_json(handler, 500, {"code": "extra"})

    return script


def paths(server: ScriptedServer) -> List[str]:
    return [path for _, _, path in server.seen]


WALK = (
    body(["stu_1", "stu_2"], 1, 5, f"{QUERY}&cursor={CURSOR_1}"),
    body(["stu_3", "stu_4"], 2, 5, f"{QUERY}&cursor={CURSOR_2}"),
    body(["stu_5"], 3, 5, None),
)


def test_iterating_sends_the_cursor_of_links_next_with_the_callers_parameters_and_no_page(
    serve: Callable[[Handler], ScriptedServer],
) -> None:
    server = serve(pages(*WALK))
    with client_for(server) as client:
        ids = [s.id for s in client.students.list(status="active", sort="last_name", per_page=2, q="ada")]
    assert ids == ["stu_1", "stu_2", "stu_3", "stu_4", "stu_5"]
    # The null next of the third page ends the walk: no fourth request.
    assert paths(server) == [
        f"/v1/students?{QUERY}",
        f"/v1/students?cursor={CURSOR_1}&{QUERY}",
        f"/v1/students?cursor={CURSOR_2}&{QUERY}",
    ]


def test_a_starting_page_is_dropped_once_a_cursor_leads_on(serve: Callable[[Handler], ScriptedServer]) -> None:
    server = serve(pages(body(["stu_3", "stu_4"], 2, 6, f"per_page=2&cursor={CURSOR_1}"), body(["stu_5", "stu_6"], 3, 6, None)))
    with client_for(server) as client:
        first = client.students.list(page=2, per_page=2)
        assert first.has_next_page()
        second = first.get_next_page()
    assert ([s.id for s in second.data], second.page) == (["stu_5", "stu_6"], 3)
    assert not second.has_next_page()
    assert paths(server) == ["/v1/students?page=2&per_page=2", f"/v1/students?cursor={CURSOR_1}&per_page=2"]


def test_a_cursor_is_followed_past_the_total_and_an_empty_page_ends_the_walk(
    serve: Callable[[Handler], ScriptedServer],
) -> None:
    # Records deleted during the walk: the total no longer reaches page 2, but a full page under
    # a cursor always has a next (which may be empty).
    server = serve(pages(body(["stu_1", "stu_2"], 1, 2, f"per_page=2&cursor={CURSOR_1}"), body([], 2, 2, None)))
    with client_for(server) as client:
        walked = list(client.students.with_raw_response.list(per_page=2).parse().iter_pages())
    assert [len(p.data) for p in walked] == [2, 0]
    assert paths(server)[1] == f"/v1/students?cursor={CURSOR_1}&per_page=2"


def test_a_next_link_without_a_cursor_is_paged_by_number(serve: Callable[[Handler], ScriptedServer]) -> None:
    # A server from before cursors: links.next names page 2.
    server = serve(pages(body(["stu_1", "stu_2"], 1, 3, "per_page=2&status=active&page=2"), body(["stu_3"], 2, 3, None)))
    with client_for(server) as client:
        ids = [s.id for s in client.students.list(status="active", per_page=2)]
    assert ids == ["stu_1", "stu_2", "stu_3"]
    assert paths(server) == ["/v1/students?per_page=2&status=active", "/v1/students?page=2&per_page=2&status=active"]
