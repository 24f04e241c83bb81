"""OAuth 2.0 against the real authorization server: client credentials and refresh rotation."""

from __future__ import annotations

import threading
from typing import List

import pytest

import platform_api

from .conftest import LIVE, make_client


def test_client_credentials() -> None:
    # No token_url: the client finds the token endpoint from its base_url, as users rely on.
    auth = platform_api.ClientCredentials(
        client_id=LIVE.oauth_client_id,
        client_secret=LIVE.oauth_client_secret,
        scopes=["students:read", "courses:read"],
    )
    client = make_client(auth=auth)
    info = client.token.retrieve()
    assert info.type == "oauth_access_token" and info.client_id == LIVE.oauth_client_id
    assert sorted(info.scopes) == ["courses:read", "students:read"]
    client.students.list()
    with pytest.raises(platform_api.PermissionDeniedError):
        client.courses.create(code="X-1", title="not in scope")


def test_a_wrong_client_secret_is_an_oauth_error() -> None:
    auth = platform_api.ClientCredentials(client_id=LIVE.oauth_client_id, client_secret="ocs_wrong", token_url=LIVE.token_url)
    with pytest.raises(platform_api.OAuthError) as caught:
        make_client(auth=auth).token.retrieve()
    assert caught.value.error == "invalid_client" and caught.value.status_code == 401


def test_refresh_tokens_rotate_and_a_401_renews_and_replays_once() -> None:
    received: List[platform_api.OAuthTokens] = []
    auth = platform_api.RefreshToken(
        client_id=LIVE.oauth_client_id,
        client_secret=LIVE.oauth_client_secret,
        refresh_token=LIVE.refresh_tokens[0],
        # An access token the server does not know: the first call gets a real 401, the SDK
        # refreshes and sends the call again.
        access_token="not-a-real-access-token",
        on_tokens=received.append,
        token_url=LIVE.token_url,
    )
    client = make_client(auth=auth)
    assert client.token.retrieve().type == "oauth_access_token"
    assert len(received) == 1
    first = received[0].refresh_token
    assert first and first != LIVE.refresh_tokens[0]
    assert auth.refresh_token == first

    # Renew again (the access token is refused once more): the rotated token works, and the
    # callback hands over the next one.
    auth.invalidate(received[0].access_token)
    client.students.list()
    assert len(received) == 2 and received[1].refresh_token not in (None, first)


def test_a_spent_refresh_token_is_refused() -> None:
    def refresh(token: str) -> platform_api.RefreshToken:
        return platform_api.RefreshToken(
            client_id=LIVE.oauth_client_id,
            client_secret=LIVE.oauth_client_secret,
            refresh_token=token,
            token_url=LIVE.token_url,
        )

    make_client(auth=refresh(LIVE.refresh_tokens[1])).token.retrieve()
    with pytest.raises(platform_api.OAuthError) as caught:
        make_client(auth=refresh(LIVE.refresh_tokens[1])).token.retrieve()
    assert caught.value.error == "invalid_grant"


def test_concurrent_calls_refresh_once() -> None:
    received: List[platform_api.OAuthTokens] = []
    auth = platform_api.RefreshToken(
        client_id=LIVE.oauth_client_id,
        client_secret=LIVE.oauth_client_secret,
        refresh_token=LIVE.refresh_tokens[2],
        on_tokens=received.append,
        token_url=LIVE.token_url,
    )
    client = make_client(auth=auth)
    errors: List[BaseException] = []

    def call() -> None:
        try:
            client.token.retrieve()
        except BaseException as error:  # pragma: no cover - asserted below
            errors.append(error)

    threads = [threading.Thread(target=call) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(received) == 1  # one refresh: a rotated token presented twice would revoke the grant


def test_an_app_sees_the_members_sessions_and_signs_out_the_browser() -> None:
    assert len(LIVE.refresh_tokens) >= 4
    auth = platform_api.RefreshToken(
        client_id=LIVE.oauth_client_id,
        client_secret=LIVE.oauth_client_secret,
        refresh_token=LIVE.refresh_tokens[3],
        token_url=LIVE.token_url,
    )
    client = make_client(auth=auth)
    # The member signed in on the sign-in page to approve the app: one browser, and this app.
    sessions = client.user.list_sessions().data
    assert [s.type for s in sessions] == ["browser", "app"]
    browser, this_app = sessions
    assert this_app.current and this_app.app is not None and this_app.app.id == LIVE.oauth_client_id
    assert browser.last_active_at is not None

    deleted = client.user.revoke_session(browser.id)
    assert (deleted.id, deleted.deleted) == (browser.id, True)
    remaining = client.user.sign_out_other_sessions().data
    assert [s.id for s in remaining] == [this_app.id]
