"""Each error class, produced by the real server."""

from __future__ import annotations

import pytest

import platform_api

from .conftest import FEED_CURSOR, LIVE, make_client, unique


def test_401_for_an_unknown_token() -> None:
    with pytest.raises(platform_api.AuthenticationError) as caught:
        make_client(token="pat_" + "x" * 36).students.list()
    assert caught.value.status_code == 401 and caught.value.code == "unauthorized"
    assert caught.value.request_id


def test_403_for_a_token_without_the_scope() -> None:
    readonly = make_client(token=LIVE.readonly_token)
    assert readonly.students.list().data is not None  # it may read
    with pytest.raises(platform_api.PermissionDeniedError) as caught:
        readonly.students.create(student_number=unique("S-"), first_name="A", last_name="B")
    assert caught.value.code == "insufficient_scope"


def test_404_for_an_unknown_id(client: platform_api.PlatformClient) -> None:
    with pytest.raises(platform_api.NotFoundError) as caught:
        client.courses.retrieve("crs_doesnotexist")
    assert caught.value.status_code == 404


def test_409_for_a_duplicate_student_number(client: platform_api.PlatformClient) -> None:
    number = unique("S-")
    client.students.create(student_number=number, first_name="A", last_name="B")
    with pytest.raises(platform_api.ConflictError) as caught:
        client.students.create(student_number=number, first_name="C", last_name="D")
    assert caught.value.code == "conflict"


def test_400_names_each_offending_field(client: platform_api.PlatformClient) -> None:
    with pytest.raises(platform_api.ValidationError) as caught:
        client.students.create(student_number=unique("S-"), first_name="", last_name="B", email="not-an-email")
    error = caught.value
    assert error.status_code == 400 and error.code == "validation_error"
    paths = {e.path for e in error.errors}
    assert {"body.first_name", "body.email"} <= paths
    assert all(e.message for e in error.errors)

    with pytest.raises(platform_api.ValidationError) as caught:
        client.students.list(per_page=500)
    assert [e.path for e in caught.value.errors] == ["query.per_page"]


def test_a_cursor_of_another_organization_is_a_400_naming_the_parameter(client: platform_api.PlatformClient) -> None:
    # A cursor of organization A, sent with organization B's token (B is the rate-limited
    # organization: three requests of its budget, before the 429 test below spends it).
    client.courses.create(code=unique("CUR-"), title="A change of A")
    ours = client.changes.list(after="oldest", limit=1000).data[-1].cursor
    assert ours is not None and FEED_CURSOR.match(ours)
    with make_client(token=LIVE.limited_token) as other:
        with pytest.raises(platform_api.ValidationError) as caught:
            other.changes.list(after=ours)
        assert caught.value.status_code == 400 and caught.value.code == "validation_error"
        assert [e.path for e in caught.value.errors] == ["query.after"]
        with pytest.raises(platform_api.ValidationError) as caught:
            other.changes.list(after="0", until=ours)
        assert [e.path for e in caught.value.errors] == ["query.until"]
        # A follower does not retry it: the error ends it at once.
        with pytest.raises(platform_api.ValidationError) as caught:
            next(iter(other.changes.follow(after=ours, give_up_after=0)))
        assert [e.path for e in caught.value.errors] == ["query.after"]


def test_429_with_the_real_rate_limit_set_low() -> None:
    limited = make_client(token=LIVE.limited_token, max_retries=0)
    with pytest.raises(platform_api.RateLimitError) as caught:
        for _ in range(LIVE.limited_rate_limit + 1):
            limited.token.retrieve()
    error = caught.value
    assert error.code == "rate_limited"
    assert error.retry_after is not None and error.retry_after > 0
