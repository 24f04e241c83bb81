"""Non-2xx answers become typed errors carrying the problem document."""

from __future__ import annotations

import pytest

import platform_api

from .conftest import ClientFactory
from .fakes import FakeTransport, problem, response


def test_a_validation_error_carries_typed_field_errors_and_the_whole_problem(make_client: ClientFactory) -> None:
    transport = FakeTransport(
        problem(
            400,
            "validation_error",
            "per_page must be an integer between 1 and 100",
            errors=[{"path": "query.per_page", "message": "too big", "code": "too_big"}],
            documentation_url="https://docs.example.test/errors",  # an extension member
        )
    )
    with pytest.raises(platform_api.ValidationError) as caught:
        make_client(transport).students.list(per_page=500)
    error = caught.value
    assert isinstance(error, platform_api.APIStatusError) and isinstance(error, platform_api.PlatformError)
    assert error.status_code == 400
    assert error.code == "validation_error"
    assert error.detail == "per_page must be an integer between 1 and 100"
    assert error.request_id == "req_123"
    assert error.errors == [platform_api.FieldError("query.per_page", "too big", "too_big")]
    assert error.problem is not None and error.problem["documentation_url"] == "https://docs.example.test/errors"
    assert str(error) == "400 validation_error: per_page must be an integer between 1 and 100 (request req_123)"


@pytest.mark.parametrize(
    ("status", "code", "kind"),
    [
        (401, "unauthorized", platform_api.AuthenticationError),
        (403, "insufficient_scope", platform_api.PermissionDeniedError),
        (404, "not_found", platform_api.NotFoundError),
        (409, "invalid_state_transition", platform_api.ConflictError),
        (406, "not_acceptable", platform_api.APIStatusError),
        (500, "internal_error", platform_api.ServerError),
    ],
)
def test_each_status_has_its_class(
    make_client: ClientFactory, status: int, code: str, kind: type[platform_api.APIStatusError]
) -> None:
    transport = FakeTransport(*[problem(status, code) for _ in range(3)])
    with pytest.raises(kind) as caught:
        make_client(transport).students.retrieve("stu_1")
    assert type(caught.value) is kind
    assert caught.value.code == code


def test_an_html_502_from_a_proxy_is_a_server_error_with_the_page_as_body(make_client: ClientFactory) -> None:
    page = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
    transport = FakeTransport(
        *[response(502, raw=page, content_type="text/html", headers={"X-Request-Id": "edge-9"}) for _ in range(3)]
    )
    with pytest.raises(platform_api.ServerError) as caught:
        make_client(transport).students.retrieve("stu_1")
    error = caught.value
    assert error.status_code == 502
    assert error.problem is None and error.code is None
    assert error.body == page.decode()
    assert error.detail.startswith("HTTP 502 without a problem document: <html>")
    assert error.request_id == "edge-9"  # from the header when there is no problem
    assert error.headers["content-type"] == "text/html"


def test_a_broken_json_body_does_not_crash_the_error_mapping(make_client: ClientFactory) -> None:
    transport = FakeTransport(response(404, raw=b"{not json", content_type="application/problem+json"))
    with pytest.raises(platform_api.NotFoundError) as caught:
        make_client(transport).students.retrieve("stu_1")
    assert caught.value.body == "{not json"


def test_rate_limit_error_tells_retry_after_in_seconds(make_client: ClientFactory) -> None:
    transport = FakeTransport(problem(429, "rate_limited", headers={"Retry-After": "90"}))
    with pytest.raises(platform_api.RateLimitError) as caught:
        make_client(transport).students.retrieve("stu_1")
    assert caught.value.retry_after == 90


def test_a_connection_error_names_the_request(make_client: ClientFactory) -> None:
    transport = FakeTransport(*[ConnectionRefusedError("refused") for _ in range(3)])
    with pytest.raises(platform_api.APIConnectionError) as caught:
        make_client(transport).students.retrieve("stu_1")
    assert caught.value.method == "GET"
    assert caught.value.url == "https://api.example.test/v1/students/stu_1"
    assert not isinstance(caught.value, platform_api.APITimeoutError)
    assert isinstance(caught.value.__cause__, ConnectionRefusedError)
