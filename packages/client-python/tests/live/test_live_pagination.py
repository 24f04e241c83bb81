"""Auto-pagination across many pages of the real server: every item once, filters kept, and
the keyset cursor of `links.next` followed, so a record created during the walk moves nothing."""

from __future__ import annotations

from typing import List, Optional
from urllib.parse import parse_qs, urlsplit

import platform_api
from platform_api import HTTPRequest, HTTPResponse

from .conftest import RecordingTransport, make_client, unique


def test_iterating_a_list_walks_every_page_without_duplicates(client: platform_api.PlatformClient) -> None:
    marker = unique("Pag")
    created = [
        client.students.create(student_number=unique("S-"), first_name="Page", last_name=f"{marker}-{n:02d}").id
        for n in range(23)
    ]
    # A student that matches the search but not the status filter must never appear.
    other = client.students.create(student_number=unique("S-"), first_name="Page", last_name=f"{marker}-x", status="inactive")

    first = client.students.list(q=marker, status="active", sort="created_at", per_page=5)
    assert (first.total, first.total_pages, len(first.data)) == (23, 5, 5)
    seen = [s.id for s in first]
    assert seen == created  # in order, each once, and nothing else
    assert other.id not in seen
    assert [p.page for p in first.iter_pages()] == [1, 2, 3, 4, 5]

    last = client.students.list(q=marker, status="active", sort="created_at", per_page=5, page=5)
    assert [s.id for s in last.data] == created[20:] and not last.has_next_page()


class ListingTransport(RecordingTransport):
    """The live suite's transport, keeping the URL of every GET it sends."""

    def __init__(self) -> None:
        super().__init__()
        self.gets: List[str] = []

    def send(self, request: HTTPRequest, *, timeout: float, connect_timeout: float) -> HTTPResponse:
        if request.method == "GET":
            self.gets.append(request.url)
        return super().send(request, timeout=timeout, connect_timeout=connect_timeout)


def test_a_student_created_during_the_walk_neither_repeats_nor_skips_another() -> None:
    transport = ListingTransport()
    client = make_client(transport=transport)
    marker = unique("Cur")
    created = [
        client.students.create(student_number=unique("S-"), first_name="Cursor", last_name=f"{marker}-{n}").id
        for n in range(7)
    ]

    # Newest first: the late student lands before the cursor, where numbered pages would shift
    # every later student by one and repeat one.
    seen: List[str] = []
    late: Optional[str] = None
    for student in client.students.list(q=marker, sort="-created_at", per_page=2):
        seen.append(student.id)
        if len(seen) == 2:
            late = client.students.create(student_number=unique("S-"), first_name="Cursor", last_name=f"{marker}-late").id

    assert late is not None  # the walk went past its first page
    assert len(seen) == len(set(seen))  # no student seen twice
    assert sorted(seen) == sorted(created)  # every student created before the walk, once; the late one not
    assert len(transport.gets) == 4  # 2, 2, 2, 1: the short fourth page has no next
    for url in transport.gets[1:]:
        query = parse_qs(urlsplit(url).query)
        assert query.get("cursor") and "page" not in query, url
        assert (query["q"], query["sort"], query["per_page"]) == ([marker], ["-created_at"], ["2"])
