"""`AsyncPlatformClient` (httpx) auto-paging against the scripted list server of
`test_cursor_pagination.py`: it follows the cursor of `links.next` as the sync client does."""

from __future__ import annotations

import asyncio
from typing import Callable, List

import platform_api

from . import test_transport
from .test_cursor_pagination import CURSOR_1, CURSOR_2, QUERY, WALK, body, pages, paths
from .test_transport import Handler, ScriptedServer

serve = test_transport.serve


def async_client(server: ScriptedServer) -> platform_api.AsyncPlatformClient:
    return platform_api.AsyncPlatformClient(token="pat_test", base_url=server.url)


def test_async_iterating_sends_the_cursor_of_links_next_and_no_page(serve: Callable[[Handler], ScriptedServer]) -> None:
    server = serve(pages(*WALK))

    async def run() -> List[str]:
        async with async_client(server) as client:
            first = await client.students.list(status="active", sort="last_name", per_page=2, q="ada")
            return [s.id async for s in first]

    assert asyncio.run(run()) == ["stu_1", "stu_2", "stu_3", "stu_4", "stu_5"]
    # The null next of the third page ends the walk: no fourth request.
    assert paths(server) == [
        f"/v1/students?{QUERY}",
        f"/v1/students?cursor={CURSOR_1}&{QUERY}",
        f"/v1/students?cursor={CURSOR_2}&{QUERY}",
    ]


def test_async_a_next_link_without_a_cursor_is_paged_by_number(serve: Callable[[Handler], ScriptedServer]) -> None:
    server = serve(pages(body(["stu_1", "stu_2"], 1, 3, "per_page=2&page=2"), body(["stu_3"], 2, 3, None)))

    async def run() -> List[int]:
        async with async_client(server) as client:
            first = await client.students.list(per_page=2)
            assert first.has_next_page()
            return [page.page async for page in first.iter_pages()]

    assert asyncio.run(run()) == [1, 2]
    assert paths(server) == ["/v1/students?per_page=2", "/v1/students?page=2&per_page=2"]
