"""Models are lenient (unknown fields and enum values survive) and immutable."""

from __future__ import annotations

import datetime as dt

import pytest

import platform_api
from platform_api import types
from platform_api._models import parse_datetime

from .conftest import ClientFactory
from .fakes import STUDENT, FakeTransport, response


def test_unknown_field_and_unknown_enum_value_survive_a_round_trip(make_client: ClientFactory) -> None:
    sent = {**STUDENT, "status": "on_exchange", "field_added_later": {"nested": [1, 2]}}
    transport = FakeTransport(response(200, sent))
    stu = make_client(transport).students.retrieve("stu_1")
    assert stu.status == "on_exchange"
    assert stu.to_dict() == sent
    assert stu.to_dict()["field_added_later"] == {"nested": [1, 2]}
    assert stu.model_extra == {"field_added_later": {"nested": [1, 2]}}
    # to_dict is a copy: changing it changes nothing in the model.
    stu.to_dict()["first_name"] = "X"
    assert stu.first_name == "Ada"


def test_timestamps_are_aware_datetimes_and_the_raw_string_is_kept() -> None:
    stu = types.Student.from_json(STUDENT)
    assert stu.created_at == dt.datetime(2025, 1, 2, 3, 4, 5, 678000, tzinfo=dt.timezone.utc)
    assert stu.to_dict()["created_at"] == "2025-01-02T03:04:05.678Z"
    # The forms Python 3.9/3.10's fromisoformat rejects are normalised first.
    assert parse_datetime("2025-01-02T03:04:05Z") == dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
    assert parse_datetime("2025-01-02T03:04:05.1+0200").utcoffset() == dt.timedelta(hours=2)
    assert parse_datetime("not a date") == "not a date"


def test_a_shape_the_sdk_does_not_expect_is_kept_not_raised() -> None:
    stu = types.Student.from_json({"id": 42, "created_at": None})
    assert stu.id == 42  # type: ignore[comparison-overlap]
    assert stu.first_name is None and stu.created_at is None  # type: ignore[comparison-overlap]
    assert types.Student.from_json("not an object").to_dict() == {}


def test_models_are_immutable_and_compare_by_content() -> None:
    stu = types.Student.from_json(STUDENT)
    with pytest.raises(platform_api.FrozenInstanceError):
        stu.first_name = "X"  # type: ignore[misc]
    assert stu == types.Student.from_json(dict(STUDENT))
    assert stu != types.Student.from_json({**STUDENT, "id": "stu_2"})
    assert "Student(id='stu_1'" in repr(stu)


def test_a_field_named_like_a_python_keyword_or_reserved_word_gets_a_trailing_underscore() -> None:
    links = types.PageLinks.from_json({"self": "a", "first": "b", "prev": None, "next": None, "last": "c"})
    assert links.self_ == "a"
    assert links.to_dict()["self"] == "a"


def test_a_model_built_in_code_serialises_its_fields() -> None:
    meta = types.PageMeta(page=1, per_page=2, total=3, total_pages=2, total_exact=True)
    assert meta.to_dict() == {"page": 1, "per_page": 2, "total": 3, "total_pages": 2, "total_exact": True}


def test_events_are_a_union_told_apart_by_type_with_a_fallback() -> None:
    body = {
        "id": "evt_1",
        "object": "event",
        "type": "student.created",
        "timestamp": "2025-01-01T00:00:00.000Z",
        "api_version": "v1",
        "data": STUDENT,
    }
    event = types.parse_event(body)
    assert isinstance(event, types.StudentCreatedEvent)
    assert isinstance(event.data, types.Student) and event.data.first_name == "Ada"

    future = {**body, "type": "student.merged", "data": {"into": "stu_2"}}
    unknown = types.parse_event(future)
    assert isinstance(unknown, types.UnknownEvent)
    assert unknown.type == "student.merged"
    assert unknown.data == {"into": "stu_2"}
    assert unknown.to_dict() == future
    # A type that is not a string does not crash the lookup.
    assert isinstance(types.parse_event({**body, "type": ["x"]}), types.UnknownEvent)


def test_events_retrieve_and_list_return_the_union(make_client: ClientFactory) -> None:
    event = {
        "id": "evt_1",
        "object": "event",
        "type": "payment.refunded",
        "timestamp": "2025-01-01T00:00:00.000Z",
        "api_version": "v1",
        "data": {"id": "pay_1", "object": "payment", "amount_refunded": 5},
    }
    listing = {"data": [event], "meta": {"page": 1, "per_page": 25, "total": 1, "total_pages": 1, "total_exact": True}, "links": {"next": None}}
    transport = FakeTransport(response(200, event), response(200, listing))
    client = make_client(transport)
    retrieved = client.events.retrieve("evt_1")
    assert isinstance(retrieved, types.PaymentRefundedEvent) and retrieved.data.amount_refunded == 5
    (listed,) = list(client.events.list(type="payment.refunded"))
    assert isinstance(listed, types.PaymentRefundedEvent)
    assert transport.query(1) == {"type": "payment.refunded", "per_page": "100"}
