"""Standard Webhooks (https://www.standardwebhooks.com) verification and signing.

Written here rather than depending on the `standardwebhooks` package (the SDK has no
dependencies), and hardened where reference code is not: headers in any case and in the WSGI
`HTTP_WEBHOOK_ID` form, malformed headers never raise anything but `WebhookVerificationError`,
strict base64, a tolerance in both directions, constant-time comparison, `v1a` ignored.
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import hashlib
import hmac
import json
import os
import re
import time
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union, cast

from ._exceptions import WebhookVerificationError
from .types import Event, parse_event

__all__ = [
    "Webhook",
    "Webhooks",
    "WebhookBody",
    "WebhookHeaders",
    "DEFAULT_TOLERANCE_SECONDS",
]

DEFAULT_TOLERANCE_SECONDS = 300

WebhookBody = Union[bytes, bytearray, memoryview, str]
"""The request body exactly as received (bytes; a str is encoded as UTF-8)."""

WebhookHeaders = Union[Mapping[str, Any], Iterable[Tuple[str, str]], Any]
"""The request headers: a dict (any case), Flask/Werkzeug `request.headers`, `http.server`'s
`self.headers`, a WSGI `environ` (`HTTP_WEBHOOK_ID`), or `(name, value)` pairs."""

_SECRET_PREFIX = "whsec_"
_HEADER_NAMES = ("webhook-id", "webhook-timestamp", "webhook-signature")
_BASE64 = re.compile(r"^[A-Za-z0-9+/]*={0,2}$")
_TIMESTAMP = re.compile(r"^[0-9]{1,15}$")
_RAW_BODY_HINT = (
    "pass the raw request body exactly as received, not parsed and re-serialized JSON "
    "(Flask: request.get_data(); Django: request.body; http.server: self.rfile.read(length))"
)


class Webhook:
    """Verifies deliveries for one endpoint.

    `secret` is the endpoint's signing secret (`whsec_...`); during a rotation pass both the
    new and the old one, and a signature by either is accepted.
    """

    def __init__(
        self,
        secret: Union[str, Sequence[str]],
        *,
        tolerance: int = DEFAULT_TOLERANCE_SECONDS,
    ) -> None:
        if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or tolerance < 0:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ValueError(f"tolerance must be a number of seconds >= 0, got {tolerance!r}")
        self._keys = _decode_secrets(secret)
        self._tolerance = tolerance

    def verify(
        self,
        body: WebhookBody,
        headers: WebhookHeaders,
        *,
        now: Union[float, _dt.datetime, None] = None,
    ) -> None:
        """Checks the signature and the timestamp; raises `WebhookVerificationError`."""
        data = _to_bytes(body)
        msg_id, timestamp, signature = _read_headers(headers)
        if not _TIMESTAMP.match(timestamp):
            raise WebhookVerificationError(
                "invalid_timestamp",
                f"The webhook-timestamp header {timestamp!r} is not a Unix time in whole seconds.",
            )
        current = _now(now)
        age = current - int(timestamp)
        if abs(age) > self._tolerance:
            when = f"{age} s in the past" if age > 0 else f"{-age} s in the future"
            raise WebhookVerificationError(
                "timestamp_outside_tolerance",
                f"The webhook-timestamp is {when}, outside the {self._tolerance:g} s tolerance: "
                + (
                    "an old message replayed, or one held up on the way. "
                    if age > 0
                    else "not sent yet by our clock. "
                )
                + "Check that this machine's clock is right (NTP).",
            )
        candidates = _parse_signatures(signature)
        signed = f"{msg_id}.{timestamp}.".encode("utf-8") + data
        expected = [hmac.new(key, signed, hashlib.sha256).digest() for key in self._keys]
        matched = False
        for candidate in candidates:
            for digest in expected:
                # No early exit: the time taken says nothing about how close a forgery came.
                matched |= hmac.compare_digest(candidate, digest)
        if not matched:
            found = (
                "webhook-signature holds no v1 signature"
                if not candidates
                else f"none of the {len(candidates)} v1 signature(s) in webhook-signature matches this body"
            )
            raise WebhookVerificationError(
                "no_valid_signature",
                f"No valid signature: {found}. Check that the secret is this endpoint's signing "
                "secret (while a rotation is under way pass both the new and the old one), and "
                f"{_RAW_BODY_HINT}.",
            )

    def unwrap(
        self,
        body: WebhookBody,
        headers: WebhookHeaders,
        *,
        now: Union[float, _dt.datetime, None] = None,
    ) -> Event:
        """Verifies the delivery and returns its event, typed: narrow with `isinstance` or on
        `event.type`. A type this SDK does not know arrives as `UnknownEvent`."""
        self.verify(body, headers, now=now)
        data = _to_bytes(body)
        try:
            payload = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as error:
            raise WebhookVerificationError(
                "invalid_payload",
                f"The webhook body is signed but is not UTF-8 JSON ({error}), so not an event.",
            ) from None
        if not isinstance(payload, dict) or not isinstance(payload.get("type"), str):  # pyright: ignore[reportUnknownMemberType]
            raise WebhookVerificationError(
                "invalid_payload",
                'The webhook payload is signed but is not an event: it has no string "type".',
            )
        return parse_event(payload)

    def sign(
        self,
        body: WebhookBody,
        *,
        msg_id: Optional[str] = None,
        timestamp: Union[int, _dt.datetime, None] = None,
    ) -> Dict[str, str]:
        """The three Standard Webhooks headers for `body` (one signature per secret): for tests
        of your handler and for tools that replay deliveries."""
        data = _to_bytes(body)
        if timestamp is None:
            seconds = int(time.time())
        elif isinstance(timestamp, _dt.datetime):
            seconds = int(timestamp.timestamp())
        else:
            seconds = int(timestamp)
        msg_id = msg_id or _new_message_id()
        signed = f"{msg_id}.{seconds}.".encode("utf-8") + data
        signatures = [
            "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode("ascii")
            for key in self._keys
        ]
        return {
            "webhook-id": msg_id,
            "webhook-timestamp": str(seconds),
            "webhook-signature": " ".join(signatures),
        }


class Webhooks:
    """`client.webhooks`: the same verification as `Webhook`, with the secret per call."""

    def verify(
        self,
        body: WebhookBody,
        headers: WebhookHeaders,
        *,
        secret: Union[str, Sequence[str]],
        tolerance: int = DEFAULT_TOLERANCE_SECONDS,
        now: Union[float, _dt.datetime, None] = None,
    ) -> None:
        Webhook(secret, tolerance=tolerance).verify(body, headers, now=now)

    def unwrap(
        self,
        body: WebhookBody,
        headers: WebhookHeaders,
        *,
        secret: Union[str, Sequence[str]],
        tolerance: int = DEFAULT_TOLERANCE_SECONDS,
        now: Union[float, _dt.datetime, None] = None,
    ) -> Event:
        return Webhook(secret, tolerance=tolerance).unwrap(body, headers, now=now)


# --- inputs --------------------------------------------------------------------------------


def _decode_secrets(secret: Union[str, Sequence[str]]) -> List[bytes]:
    secrets: Sequence[Any] = [secret] if isinstance(secret, str) else secret
    if isinstance(secrets, (bytes, bytearray)) or not secrets:
        raise WebhookVerificationError(
            "invalid_secret",
            "No webhook secret given: pass the endpoint's signing secret (whsec_...), or a list "
            "of them during a rotation.",
        )
    keys: List[bytes] = []
    for index, value in enumerate(secrets):
        which = "The webhook secret" if len(secrets) == 1 else f"Webhook secret #{index + 1}"
        returned = (
            "Use the secret returned when the endpoint was created or its secret rotated "
            "(whsec_ followed by base64)"
        )
        if not isinstance(value, str) or not value.startswith(_SECRET_PREFIX):
            raise WebhookVerificationError(
                "invalid_secret",
                f'{which} does not start with "{_SECRET_PREFIX}": it is not a webhook signing '
                f"secret (an API token, perhaps?). {returned}.",
            )
        key = _decode_base64(value[len(_SECRET_PREFIX) :])
        if not key:
            raise WebhookVerificationError(
                "invalid_secret",
                f'{which} is not "{_SECRET_PREFIX}" followed by base64 (truncated or altered when '
                f"it was copied?). {returned}.",
            )
        keys.append(key)
    return keys


def _to_bytes(body: WebhookBody) -> bytes:
    if isinstance(body, str):
        return body.encode("utf-8")
    if isinstance(body, (bytes, bytearray, memoryview)):  # pyright: ignore[reportUnnecessaryIsInstance]
        return bytes(body)
    raise TypeError(
        f"The webhook body is a {type(body).__name__}, not bytes or str: {_RAW_BODY_HINT}. The "
        "signature covers the exact bytes sent, which a parsed object no longer has."
    )


def _header_pairs(headers: WebhookHeaders) -> List[Tuple[str, str]]:
    """`(name, value)` pairs from any of the header shapes, never raising."""
    try:
        items_method = getattr(headers, "items", None)
        raw = cast("Iterable[Any]", items_method() if callable(items_method) else headers)
        pairs: List[Tuple[str, str]] = []
        for entry in raw:
            if not isinstance(entry, tuple) or len(entry) != 2:  # pyright: ignore[reportUnknownArgumentType]
                continue
            name, value = entry  # pyright: ignore[reportUnknownVariableType]
            if isinstance(value, (list, tuple)):
                for item in value:  # pyright: ignore[reportUnknownVariableType]
                    pairs.append((str(name), str(item)))  # pyright: ignore[reportUnknownArgumentType]
            elif value is not None:
                pairs.append((str(name), str(value)))  # pyright: ignore[reportUnknownArgumentType]
        return pairs
    except TypeError:
        return []


def _normalize_name(name: str) -> str:
    lower = name.strip().lower()
    if lower.startswith("http_"):  # the WSGI/CGI form: HTTP_WEBHOOK_ID
        lower = lower[len("http_") :]
    return lower.replace("_", "-")


def _read_headers(headers: WebhookHeaders) -> Tuple[str, str, str]:
    values: Dict[str, List[str]] = {}
    for name, value in _header_pairs(headers):
        key = _normalize_name(name)
        if key in _HEADER_NAMES:
            values.setdefault(key, []).append(value.strip())
    found = {
        name: (" ".join(v for v in values.get(name, []) if v) if name == "webhook-signature" else next((v for v in values.get(name, []) if v), ""))
        for name in _HEADER_NAMES
    }
    missing = [name for name in _HEADER_NAMES if not found[name]]
    if missing:
        raise WebhookVerificationError(
            "missing_header",
            f"Missing webhook header{'s' if len(missing) > 1 else ''} {', '.join(missing)}: a "
            "Platform delivery always carries webhook-id, webhook-timestamp and "
            "webhook-signature. Pass the request headers as received, and make sure no proxy "
            "in between drops them.",
        )
    return found["webhook-id"], found["webhook-timestamp"], found["webhook-signature"]


def _parse_signatures(header: str) -> List[bytes]:
    """The decoded `v1` signatures; other versions (`v1a`, ...) are skipped, as the spec says."""
    signatures: List[bytes] = []
    for token in header.split():
        # Repeated headers joined by a proxy put ", " between entries; base64 has no commas.
        version, _, value = token.rstrip(",").partition(",")
        if version != "v1" or not value:
            continue
        decoded = _decode_base64(value)
        if decoded is not None:
            signatures.append(decoded)
    return signatures


def _decode_base64(value: str) -> Optional[bytes]:
    """Standard base64, padding optional; None when it is not base64."""
    if not _BASE64.match(value) or len(value) % 4 == 1:
        return None
    try:
        return base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None


def _now(now: Union[float, _dt.datetime, None]) -> int:
    if now is None:
        return int(time.time())
    if isinstance(now, _dt.datetime):
        return int(now.timestamp())
    return int(now)


_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def _new_message_id() -> str:
    """`msg_` + a ULID: 10 characters of milliseconds, 16 random ones."""
    millis = int(time.time() * 1000)
    stamp = ""
    for _ in range(10):
        stamp = _CROCKFORD[millis % 32] + stamp
        millis //= 32
    return "msg_" + stamp + "".join(_CROCKFORD[byte % 32] for byte in os.urandom(16))
