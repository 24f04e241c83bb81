"""Auto-pagination across many pages of the real server: every item once, filters kept."""

from __future__ import annotations

import platform_api

from .conftest import unique


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
