"""OAuth: client credentials cached until shortly before expiry, refresh-token rotation, one
replay after a 401, one renewal under concurrency, and token endpoint errors."""

from __future__ import annotations

import base64
import threading
import time
from typing import Any, Dict, List
from urllib.parse import parse_qsl

import pytest

import platform_api
from platform_api import HTTPRequest, HTTPResponse

from .conftest import ClientFactory
from .fakes import STUDENT, problem, response

TOKEN_URL = "https://api.example.test/oauth/token"


class AuthServer:
    """A token endpoint and an API behind one transport: tokens `at_1`, `at_2`, ...; the API
    accepts only the current one."""

    def __init__(self, expires_in: int = 3600) -> None:
        self.expires_in = expires_in
        self.issued = 0
        self.token_requests: List[Dict[str, str]] = []
        self.token_headers: List[Dict[str, str]] = []
        self.api_tokens: List[str] = []
        self.refresh_token = "rt_0"
        self.lock = threading.Lock()
        self.delay = 0.0

    def send(self, request: HTTPRequest, *, timeout: float, connect_timeout: float) -> HTTPResponse:
        if request.url == TOKEN_URL:
            time.sleep(self.delay)  # lets concurrent callers pile up behind the lock
            with self.lock:
                form = dict(parse_qsl((request.body or b"").decode()))
                self.token_requests.append(form)
                self.token_headers.append(dict(request.headers))
                if form.get("grant_type") == "refresh_token" and form.get("refresh_token") != self.refresh_token:
                    return response(400, {"error": "invalid_grant", "error_description": "spent refresh token"})
                self.issued += 1
                self.refresh_token = f"rt_{self.issued}"
                return response(
                    200,
                    {
                        "access_token": f"at_{self.issued}",
                        "token_type": "Bearer",
                        "expires_in": self.expires_in,
                        "refresh_token": self.refresh_token,
                        "scope": "students:read",
                    },
                )
        token = request.headers["authorization"].removeprefix("Bearer ")
        self.api_tokens.append(token)
        if token != f"at_{self.issued}":
            return problem(401, "unauthorized")
        return response(200, STUDENT)

    def close(self) -> None:
        pass


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_client_credentials_form_post_with_basic_auth_cached_until_shortly_before_expiry(
    make_client: ClientFactory,
) -> None:
    server = AuthServer(expires_in=600)
    clock = Clock()
    auth = platform_api.ClientCredentials(
        client_id="oac_1", client_secret="s3cr:et", scopes=["students:read", "courses:read"], clock=clock
    )
    client = make_client(server, token=None, auth=auth)  # type: ignore[arg-type]
    client.students.retrieve("stu_1")
    client.students.retrieve("stu_1")
    assert server.token_requests == [{"grant_type": "client_credentials", "scope": "students:read courses:read"}]
    headers = server.token_headers[0]
    assert headers["content-type"] == "application/x-www-form-urlencoded"
    assert base64.b64decode(headers["authorization"].removeprefix("Basic ")) == b"oac_1:s3cr%3Aet"
    assert server.api_tokens == ["at_1", "at_1"]

    clock.now += 600 - 61  # still more than 60 s left
    client.students.retrieve("stu_1")
    assert len(server.token_requests) == 1
    clock.now += 2  # within the last minute: renewed before it expires in flight
    client.students.retrieve("stu_1")
    assert len(server.token_requests) == 2 and server.api_tokens[-1] == "at_2"


def test_a_short_lived_token_is_renewed_at_half_its_lifetime(make_client: ClientFactory) -> None:
    server = AuthServer(expires_in=60)
    clock = Clock()
    client = make_client(server, token=None, auth=platform_api.ClientCredentials(client_id="c", client_secret="s", clock=clock))  # type: ignore[arg-type]
    client.students.retrieve("stu_1")
    clock.now += 29
    client.students.retrieve("stu_1")
    clock.now += 2
    client.students.retrieve("stu_1")
    assert len(server.token_requests) == 2


def test_a_401_drops_the_token_renews_and_replays_exactly_once(make_client: ClientFactory) -> None:
    server = AuthServer()
    client = make_client(server, token=None, auth=platform_api.ClientCredentials(client_id="c", client_secret="s"))  # type: ignore[arg-type]
    client.students.retrieve("stu_1")
    server.issued += 1  # the server revoked at_1 and would accept at_2 (never issued here)
    client.students.retrieve("stu_1")
    # at_1 refused → one renewal (at_3 issued, since issued was bumped) → replayed once.
    assert server.api_tokens[1:] == ["at_1", "at_3"]

    # A token refused again after the renewal is an AuthenticationError, not a loop.
    class Revoked(AuthServer):
        def send(self, request: HTTPRequest, *, timeout: float, connect_timeout: float) -> HTTPResponse:
            result = super().send(request, timeout=timeout, connect_timeout=connect_timeout)
            return result if request.url == TOKEN_URL else problem(401, "unauthorized")

    revoked = Revoked()
    client = make_client(revoked, token=None, auth=platform_api.ClientCredentials(client_id="c", client_secret="s"))  # type: ignore[arg-type]
    with pytest.raises(platform_api.AuthenticationError):
        client.students.retrieve("stu_1")
    assert len(revoked.api_tokens) == 2 and len(revoked.token_requests) == 2


def test_a_static_token_is_not_replayed_after_a_401(make_client: ClientFactory) -> None:
    calls: List[str] = []

    class Refuse:
        def send(self, request: HTTPRequest, *, timeout: float, connect_timeout: float) -> HTTPResponse:
            calls.append(request.headers["authorization"])
            return problem(401, "unauthorized")

        def close(self) -> None:
            pass

    with pytest.raises(platform_api.AuthenticationError):
        make_client(Refuse()).students.retrieve("stu_1")  # type: ignore[arg-type]
    assert calls == ["Bearer pat_test"]


def test_refresh_tokens_are_rotated_and_handed_to_the_callback(make_client: ClientFactory) -> None:
    server = AuthServer(expires_in=3600)
    clock = Clock()
    received: List[platform_api.OAuthTokens] = []
    auth = platform_api.RefreshToken(
        client_id="oac_1", client_secret="s", refresh_token="rt_0", on_tokens=received.append, clock=clock
    )
    client = make_client(server, token=None, auth=auth)  # type: ignore[arg-type]
    client.students.retrieve("stu_1")
    clock.now += 3600
    client.students.retrieve("stu_1")
    assert [r["refresh_token"] for r in server.token_requests] == ["rt_0", "rt_1"]
    assert [t.refresh_token for t in received] == ["rt_1", "rt_2"]
    assert received[0].access_token == "at_1" and received[0].scope == "students:read"
    assert received[0].expires_at.tzinfo is not None
    assert auth.refresh_token == "rt_2"


def test_concurrent_callers_share_one_refresh(make_client: ClientFactory) -> None:
    server = AuthServer()
    server.delay = 0.2
    received: List[Any] = []
    auth = platform_api.RefreshToken(client_id="oac_1", refresh_token="rt_0", on_tokens=received.append)
    client = make_client(server, token=None, auth=auth)  # type: ignore[arg-type]
    errors: List[BaseException] = []

    def call() -> None:
        try:
            client.students.retrieve("stu_1")
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(server.token_requests) == 1  # a spent refresh token was never presented twice
    assert server.token_requests[0]["client_id"] == "oac_1"  # public client: id in the form
    assert len(received) == 1 and server.api_tokens == ["at_1"] * 8


def test_token_endpoint_refusal_is_an_oauth_error(make_client: ClientFactory) -> None:
    server = AuthServer()
    auth = platform_api.RefreshToken(client_id="oac_1", refresh_token="rt_spent")
    with pytest.raises(platform_api.OAuthError) as caught:
        make_client(server, token=None, auth=auth).students.retrieve("stu_1")  # type: ignore[arg-type]
    error = caught.value
    assert isinstance(error, platform_api.AuthenticationError)
    assert (error.error, error.error_description, error.status_code) == ("invalid_grant", "spent refresh token", 400)
    assert "refresh_token grant: invalid_grant (spent refresh token)" in str(error)
    assert server.api_tokens == []


def test_a_custom_token_url(make_client: ClientFactory) -> None:
    seen: List[str] = []

    class Server(AuthServer):
        def send(self, request: HTTPRequest, *, timeout: float, connect_timeout: float) -> HTTPResponse:
            seen.append(request.url)
            if request.url == "https://auth.example.test/token":
                request = HTTPRequest(request.method, TOKEN_URL, request.headers, request.body)
            return super().send(request, timeout=timeout, connect_timeout=connect_timeout)

    auth = platform_api.ClientCredentials(client_id="c", client_secret="s", token_url="https://auth.example.test/token")
    make_client(Server(), token=None, auth=auth).students.retrieve("stu_1")  # type: ignore[arg-type]
    assert seen[0] == "https://auth.example.test/token"
