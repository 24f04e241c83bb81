"""What goes on the wire: query encoding, null versus omitted, headers, paths."""

from __future__ import annotations

import datetime as dt
from urllib.parse import urlsplit

import pytest

import platform_api
from platform_api._core._qs import encode_query

from .conftest import ClientFactory
from .fakes import STUDENT, FakeTransport, page, response


def test_range_filters_use_brackets_and_lists_are_comma_separated(make_client: ClientFactory) -> None:
    transport = FakeTransport(response(200, page([], 1, 1)))
    make_client(transport).students.list(
        status=["active", "graduated"],
        created_at={"gte": dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc), "lt": "2025-02-01T00:00:00Z"},
        sort="-created_at",
        q="ana",
        per_page=100,
    )
    query = urlsplit(transport.requests[0].url).query
    assert transport.query() == {
        "status": "active,graduated",
        "created_at[gte]": "2025-01-01T00:00:00.000Z",
        "created_at[lt]": "2025-02-01T00:00:00Z",
        "sort": "-created_at",
        "q": "ana",
        "per_page": "100",
    }
    assert "created_at%5Bgte%5D=2025-01-01T00%3A00%3A00.000Z" in query
    assert "sort=-created_at" in query


def test_query_encoding_rules() -> None:
    tz = dt.timezone(dt.timedelta(hours=2))
    assert encode_query({"a": None, "b": platform_api.omit, "c": True, "d": False, "e": 3}) == "c=true&d=false&e=3"
    assert encode_query({"t": dt.datetime(2025, 1, 1, 2, 0, tzinfo=tz)}) == "t=2025-01-01T00%3A00%3A00.000Z"
    assert encode_query({"d": dt.date(2025, 3, 4)}) == "d=2025-03-04"
    assert encode_query({"q": "a b&c=ä"}) == "q=a%20b%26c%3D%C3%A4"
    assert encode_query({"empty": []}) == ""
    with pytest.raises(ValueError, match="no time zone"):
        encode_query({"t": dt.datetime(2025, 1, 1)})


def test_null_is_sent_and_omitted_is_not(make_client: ClientFactory) -> None:
    transport = FakeTransport(response(200, STUDENT))
    make_client(transport).students.update("stu_1", preferred_name=None, grade_level=10)
    assert transport.json() == {"preferred_name": None, "grade_level": 10}
    request = transport.requests[0]
    assert request.method == "PATCH"
    assert request.headers["content-type"] == "application/json"


def test_extra_query_body_and_headers(make_client: ClientFactory) -> None:
    transport = FakeTransport(response(201, STUDENT))
    make_client(transport).students.create(
        student_number="S-1",
        first_name="Ada",
        last_name="Lovelace",
        request_options={
            "extra_body": {"beta_flag": True},
            "extra_query": {"expand": "x"},
            "extra_headers": {"X-Trace": "t-1"},
        },
    )
    assert transport.json() == {"student_number": "S-1", "first_name": "Ada", "last_name": "Lovelace", "beta_flag": True}
    assert transport.query() == {"expand": "x"}
    assert transport.requests[0].headers["x-trace"] == "t-1"


def test_an_action_without_body_sends_no_body(make_client: ClientFactory) -> None:
    transport = FakeTransport(response(200, {"id": "enr_1", "object": "enrollment", "status": "active"}))
    enrollment = make_client(transport).enrollments.activate("enr_1")
    assert enrollment.status == "active"
    request = transport.requests[0]
    assert (request.method, transport.path()) == ("POST", "/v1/enrollments/enr_1/activate")
    assert request.body is None and "content-type" not in request.headers
    assert "idempotency-key" in request.headers


def test_default_headers_user_agent_and_authorization(make_client: ClientFactory) -> None:
    transport = FakeTransport(response(200, STUDENT), response(200, STUDENT))
    client = make_client(transport, app_info="sis-sync/1.4", default_headers={"X-Tenant": "north"})
    client.students.retrieve("stu_1")
    headers = transport.requests[0].headers
    assert headers["authorization"] == "Bearer pat_test"
    assert headers["accept"] == "application/json"
    assert headers["x-tenant"] == "north"
    agent = headers["user-agent"]
    assert agent.startswith(f"sis-sync/1.4 platform-api-python/{platform_api.__version__} (")
    import platform
    import sys

    runtime = f"{platform.python_implementation()} {'.'.join(map(str, sys.version_info[:3]))}"
    assert f"({runtime}; {platform.system()} {platform.machine()})" in agent


def test_path_ids_are_encoded_and_an_empty_id_is_refused(make_client: ClientFactory) -> None:
    transport = FakeTransport(response(200, STUDENT))
    client = make_client(transport)
    client.students.retrieve("a/b?c")
    assert urlsplit(transport.requests[0].url).path == "/v1/students/a%2Fb%3Fc"
    with pytest.raises(ValueError, match="id must be a non-empty string"):
        client.students.retrieve("")
    assert len(transport.requests) == 1


def test_api_prefix_alias_and_base_url_with_a_path(make_client: ClientFactory) -> None:
    transport = FakeTransport(response(200, STUDENT))
    make_client(transport, base_url="https://gw.example.test/platform/", api_prefix="/api/v1").students.retrieve("stu_1")
    assert transport.requests[0].url == "https://gw.example.test/platform/api/v1/students/stu_1"


def test_a_base_url_ending_in_the_version_means_the_same_api() -> None:
    for base_url in ("https://api.example.test/v1", "https://api.example.test/v1/"):
        assert platform_api.PlatformClient(token="pat_x", base_url=base_url).base_url == "https://api.example.test"
    with pytest.raises(ValueError, match="absolute http"):
        platform_api.PlatformClient(token="pat_x", base_url="api.example.test")


def test_token_and_base_url_default_to_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLATFORM_TOKEN", "pat_env")
    monkeypatch.setenv("PLATFORM_BASE_URL", "https://env.example.test")
    transport = FakeTransport(response(200, STUDENT))
    client = platform_api.PlatformClient(transport=transport)
    client.students.retrieve("stu_1")
    assert transport.requests[0].url.startswith("https://env.example.test/v1/")
    assert transport.requests[0].headers["authorization"] == "Bearer pat_env"
    monkeypatch.delenv("PLATFORM_TOKEN")
    with pytest.raises(ValueError, match="pass either `token`"):
        platform_api.PlatformClient()


def test_raw_response_gives_status_headers_and_request_id(make_client: ClientFactory) -> None:
    transport = FakeTransport(
        response(200, {**STUDENT, "new_field": 1}, {"X-Request-Id": "req_9", "RateLimit-Remaining": "41"})
    )
    raw = make_client(transport).students.with_raw_response.retrieve("stu_1")
    assert raw.status_code == 200
    assert raw.request_id == "req_9"
    assert raw.headers.get("ratelimit-remaining") == "41"
    stu = raw.parse()
    assert stu is raw.parse()  # parsed once
    assert isinstance(stu, platform_api.types.Student)
    assert raw.json()["new_field"] == 1


def test_request_escape_hatch_has_the_same_auth_and_errors(make_client: ClientFactory) -> None:
    transport = FakeTransport(response(200, {"anything": [1, 2]}), response(404, raw=b"", content_type="text/plain"))
    client = make_client(transport)
    raw = client.request("GET", "/v1/beta/thing", query={"x": 1})
    assert raw.parse() == {"anything": [1, 2]}
    assert transport.requests[0].url == "https://api.example.test/v1/beta/thing?x=1"
    assert transport.requests[0].headers["authorization"] == "Bearer pat_test"
    with pytest.raises(platform_api.NotFoundError):
        client.request("DELETE", "/v1/beta/thing")


def test_with_options_copies_and_shares_the_transport(make_client: ClientFactory) -> None:
    transport = FakeTransport(response(200, STUDENT), response(200, STUDENT))
    client = make_client(transport)
    other = client.with_options(token="pat_other", timeout=3.0)
    other.students.retrieve("stu_1")
    client.students.retrieve("stu_1")
    assert [r.headers["authorization"] for r in transport.requests] == ["Bearer pat_other", "Bearer pat_test"]
    assert client.timeout == 60.0 and other.timeout == 3.0
    other.close()
    assert not transport.closed  # the copy does not close what it shares
