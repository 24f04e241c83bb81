"""Iterating a page walks every item of every page, lazily, with the same parameters."""

from __future__ import annotations

from .conftest import ClientFactory
from .fakes import FakeTransport, page, response, student


def three_pages() -> FakeTransport:
    return FakeTransport(
        response(200, page([student(id="stu_1"), student(id="stu_2")], 1, 3)),
        response(200, page([student(id="stu_3"), student(id="stu_4")], 2, 3)),
        response(200, page([student(id="stu_5")], 3, 3)),
    )


def test_iterating_walks_every_page_with_the_same_filters(make_client: ClientFactory) -> None:
    transport = three_pages()
    first = make_client(transport).students.list(status="active", sort="last_name", per_page=2, q="ada")
    assert [s.id for s in first.data] == ["stu_1", "stu_2"]
    assert len(transport.requests) == 1  # nothing fetched before it is needed

    ids = [s.id for s in first]
    assert ids == ["stu_1", "stu_2", "stu_3", "stu_4", "stu_5"]
    assert len(set(ids)) == len(ids)
    for index, expected_page in enumerate((None, "2", "3")):
        query = transport.query(index)
        assert query.get("page") == expected_page
        assert (query["status"], query["sort"], query["per_page"], query["q"]) == ("active", "last_name", "2", "ada")


def test_breaking_out_fetches_no_further_page(make_client: ClientFactory) -> None:
    transport = three_pages()
    for s in make_client(transport).students.list(per_page=2):
        if s.id == "stu_2":
            break
    assert len(transport.requests) == 1


def test_iter_pages_and_single_steps(make_client: ClientFactory) -> None:
    transport = three_pages()
    first = make_client(transport).students.list(per_page=2)
    assert (first.page, first.per_page, first.total, first.total_pages) == (1, 2, 6, 3)
    assert first.has_next_page()
    second = first.get_next_page()
    assert [s.id for s in second.data] == ["stu_3", "stu_4"]
    pages = list(second.iter_pages())
    assert [p.page for p in pages] == [2, 3]
    assert not pages[-1].has_next_page()


def test_an_empty_page_and_the_last_page_stop(make_client: ClientFactory) -> None:
    transport = FakeTransport(response(200, page([], 1, 0)))
    assert list(make_client(transport).students.list()) == []
    assert len(transport.requests) == 1

    # `links.next` null ends the walk even if the counts say otherwise.
    body = page([student(id="stu_1")], 1, 5)
    body["links"]["next"] = None
    transport = FakeTransport(response(200, body))
    assert [s.id for s in make_client(transport).students.list()] == ["stu_1"]
    assert len(transport.requests) == 1


def test_a_page_starting_later_continues_from_there(make_client: ClientFactory) -> None:
    transport = FakeTransport(
        response(200, page([student(id="stu_3")], 2, 3, per_page=1)),
        response(200, page([student(id="stu_4")], 3, 3, per_page=1)),
    )
    assert [s.id for s in make_client(transport).students.list(page=2, per_page=1)] == ["stu_3", "stu_4"]
    assert transport.query(1)["page"] == "3"


def test_page_to_dict_is_the_body_as_sent(make_client: ClientFactory) -> None:
    body = page([student(id="stu_1")], 1, 1)
    body["object"] = "list"
    transport = FakeTransport(response(200, body))
    assert make_client(transport).students.list().to_dict() == body
