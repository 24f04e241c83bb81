"""Where the bearer token comes from: a fixed token, or OAuth 2.0 with renewal.

The token endpoint call is written here rather than taken from an OAuth library: it is one
form POST (RFC 6749 §4.4 and §6), and the package has no dependencies by design.
"""

from __future__ import annotations

import datetime as _dt
import threading
import time
import urllib.parse
from base64 import b64encode
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Protocol, Sequence, Union

from .._exceptions import OAuthError
from . import _json
from ._http import HTTPRequest, HTTPResponse

__all__ = [
    "Auth",
    "AuthContext",
    "StaticToken",
    "ClientCredentials",
    "RefreshToken",
    "OAuthTokens",
]


class AuthContext(Protocol):
    """What the client lends an `Auth` to reach the token endpoint."""

    @property
    def token_url(self) -> str:
        """The token endpoint on the API's origin (`<base_url>/oauth/token`)."""
        ...

    def send_token_request(self, request: HTTPRequest) -> HTTPResponse:
        """Sends with the client's transport and timeout; raises `APIConnectionError`."""
        ...


class Auth:
    """A source of bearer tokens. Subclass it for a custom scheme."""

    def get_token(self, context: AuthContext) -> str:
        raise NotImplementedError

    def invalidate(self, token: str) -> bool:
        """The API refused `token` (401). True if asking again may give a token that works;
        the client then replays the request once."""
        return False


class StaticToken(Auth):
    """A personal access token (`pat_...`) or an OAuth access token you manage yourself; or a
    function returning one, called for every request (and once more after a 401)."""

    def __init__(self, token: Union[str, Callable[[], str]]) -> None:
        self._token = token

    def get_token(self, context: AuthContext) -> str:
        return self._token() if callable(self._token) else self._token

    def invalidate(self, token: str) -> bool:
        return callable(self._token)


@dataclass(frozen=True)
class OAuthTokens:
    """What the token endpoint returned."""

    access_token: str
    expires_at: _dt.datetime
    """When the access token stops working (from `expires_in`), in UTC."""
    refresh_token: Optional[str] = None
    """The refresh token to use next time: the server rotates it, so the previous one is spent."""
    scope: Optional[str] = None


#: Tokens are renewed this long before they expire (at most half their lifetime), so none
#: expires in flight.
_MAX_EXPIRY_MARGIN = 60.0


class _OAuth(Auth):
    def __init__(
        self,
        *,
        client_id: str,
        client_secret: Optional[str],
        token_url: Optional[str],
        on_tokens: Optional[Callable[[OAuthTokens], None]],
        clock: Callable[[], float],
    ) -> None:
        if not client_id:
            raise ValueError("client_id is required")
        self.client_id: str = client_id
        self._client_secret = client_secret
        self.token_url: Optional[str] = token_url
        self._on_tokens = on_tokens
        self._clock = clock
        # Held across the token request: concurrent callers wait for one renewal and then use
        # its token, so a single-use refresh token is never presented twice.
        self._lock = threading.Lock()
        self._access_token: Optional[str] = None
        self._renew_at: Optional[float] = None

    def get_token(self, context: AuthContext) -> str:
        with self._lock:
            if self._access_token is not None and (
                self._renew_at is None or self._clock() < self._renew_at
            ):
                return self._access_token
            return self._renew(context)

    def invalidate(self, token: str) -> bool:
        with self._lock:
            if token == self._access_token:
                self._access_token = None
        # Another thread may already have renewed it; either way a fresh token may help.
        return True

    def _grant(self) -> Dict[str, str]:
        raise NotImplementedError

    def _store(self, tokens: OAuthTokens) -> None:
        pass

    def _renew(self, context: AuthContext) -> str:
        form = self._grant()
        headers = {
            "content-type": "application/x-www-form-urlencoded",
            "accept": "application/json",
        }
        if self._client_secret:
            # RFC 6749 §2.3.1: both parts form-urlencoded before base64.
            basic = f"{_form(self.client_id)}:{_form(self._client_secret)}"
            headers["authorization"] = "Basic " + b64encode(basic.encode("utf-8")).decode("ascii")
        else:
            form["client_id"] = self.client_id
        url = self.token_url or context.token_url
        response = context.send_token_request(
            HTTPRequest(
                method="POST",
                url=url,
                headers=headers,
                body=urllib.parse.urlencode(form).encode("ascii"),
            )
        )
        body: Any
        try:
            body = _json.loads(response.body) if response.body else None
        except ValueError:
            body = response.body.decode("utf-8", errors="replace")
        data: Dict[str, Any] = body if isinstance(body, dict) else {}  # pyright: ignore[reportUnknownVariableType]
        access_token = data.get("access_token")
        if not 200 <= response.status < 300 or not isinstance(access_token, str):
            raise OAuthError(response.status, response.headers, body, form["grant_type"])
        expires_in = data.get("expires_in")
        lifetime = float(expires_in) if isinstance(expires_in, (int, float)) else 3600.0
        refresh_token = data.get("refresh_token")
        scope = data.get("scope")
        tokens = OAuthTokens(
            access_token=access_token,
            expires_at=_dt.datetime.now(_dt.timezone.utc) + _dt.timedelta(seconds=lifetime),
            refresh_token=refresh_token if isinstance(refresh_token, str) else None,
            scope=scope if isinstance(scope, str) else None,
        )
        self._access_token = access_token
        self._renew_at = self._clock() + lifetime - min(_MAX_EXPIRY_MARGIN, lifetime / 2)
        self._store(tokens)
        if self._on_tokens is not None:
            self._on_tokens(tokens)
        return access_token


class ClientCredentials(_OAuth):
    """A confidential client acting for its organization (RFC 6749 §4.4 client credentials).

    The SDK asks the token endpoint for an access token (form-encoded POST, HTTP Basic
    authentication), caches it until shortly before it expires, and asks again after that or
    when the API answers 401.
    """

    def __init__(
        self,
        *,
        client_id: str,
        client_secret: str,
        scopes: Optional[Sequence[str]] = None,
        token_url: Optional[str] = None,
        on_tokens: Optional[Callable[[OAuthTokens], None]] = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not client_secret:
            raise ValueError("client_secret is required for the client credentials grant")
        super().__init__(
            client_id=client_id,
            client_secret=client_secret,
            token_url=token_url,
            on_tokens=on_tokens,
            clock=clock,
        )
        self.scopes: Optional[List[str]] = list(scopes) if scopes is not None else None

    def _grant(self) -> Dict[str, str]:
        form = {"grant_type": "client_credentials"}
        if self.scopes:
            form["scope"] = " ".join(self.scopes)
        return form


class RefreshToken(_OAuth):
    """An integration a user approved: access tokens come from a refresh token (RFC 6749 §6).

    The server rotates the refresh token on every use and revokes the whole grant when a spent
    one is presented again, so **persist the new one in `on_tokens`**. Renewals are serialized
    by a lock: threads that need a token at the same time share one refresh.
    """

    def __init__(
        self,
        *,
        client_id: str,
        refresh_token: str,
        client_secret: Optional[str] = None,
        on_tokens: Optional[Callable[[OAuthTokens], None]] = None,
        access_token: Optional[str] = None,
        access_token_expires_at: Optional[_dt.datetime] = None,
        token_url: Optional[str] = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not refresh_token:
            raise ValueError("refresh_token is required")
        super().__init__(
            client_id=client_id,
            client_secret=client_secret,
            token_url=token_url,
            on_tokens=on_tokens,
            clock=clock,
        )
        self._refresh_token = refresh_token
        self._access_token = access_token
        if access_token is not None and access_token_expires_at is not None:
            remaining = (
                access_token_expires_at - _dt.datetime.now(_dt.timezone.utc)
            ).total_seconds()
            self._renew_at = clock() + remaining - min(_MAX_EXPIRY_MARGIN, max(remaining, 0) / 2)

    @property
    def refresh_token(self) -> str:
        """The refresh token the next renewal will present (the latest one received)."""
        return self._refresh_token

    def _grant(self) -> Dict[str, str]:
        return {"grant_type": "refresh_token", "refresh_token": self._refresh_token}

    def _store(self, tokens: OAuthTokens) -> None:
        if tokens.refresh_token:
            self._refresh_token = tokens.refresh_token


def _form(value: str) -> str:
    return urllib.parse.quote_plus(value, safe="")
