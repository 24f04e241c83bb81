"""Standard Webhooks verification: the spec vector, each refusal reason, hostile headers."""

from __future__ import annotations

import json
from typing import Dict

import pytest

import platform_api
from platform_api import Webhook, WebhookVerificationError, types

from .fakes import STUDENT

# The vector of standard-webhooks' own test suite (libraries/python/tests/test_webhooks.py).
SPEC_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
SPEC_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
SPEC_TS = 1614265330
SPEC_BODY = b'{"test": 2432232314}'
SPEC_SIG = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="

EVENT = {
    "id": "evt_1",
    "object": "event",
    "type": "student.created",
    "timestamp": "2025-01-01T00:00:00.000Z",
    "api_version": "v1",
    "data": STUDENT,
}


def spec_headers(**changes: str) -> Dict[str, str]:
    headers = {"webhook-id": SPEC_ID, "webhook-timestamp": str(SPEC_TS), "webhook-signature": SPEC_SIG}
    headers.update(changes)
    return headers


def reason(body: bytes, headers: object, secret: object = SPEC_SECRET, now: int = SPEC_TS) -> str:
    try:
        Webhook(secret).verify(body, headers, now=now)  # type: ignore[arg-type]
    except WebhookVerificationError as error:
        return error.reason
    return "ok"


def test_the_standard_webhooks_spec_vector() -> None:
    assert reason(SPEC_BODY, spec_headers()) == "ok"
    assert Webhook(SPEC_SECRET).sign(SPEC_BODY, msg_id=SPEC_ID, timestamp=SPEC_TS)["webhook-signature"] == SPEC_SIG


def test_refusal_reasons() -> None:
    assert reason(SPEC_BODY + b" ", spec_headers()) == "no_valid_signature"
    assert reason(SPEC_BODY, spec_headers(**{"webhook-id": "msg_other"})) == "no_valid_signature"
    assert reason(SPEC_BODY, spec_headers(), now=SPEC_TS + 301) == "timestamp_outside_tolerance"
    assert reason(SPEC_BODY, spec_headers(), now=SPEC_TS - 301) == "timestamp_outside_tolerance"
    assert reason(SPEC_BODY, spec_headers(), now=SPEC_TS + 300) == "ok"
    assert reason(SPEC_BODY, spec_headers(**{"webhook-timestamp": "abc"})) == "invalid_timestamp"
    assert reason(SPEC_BODY, spec_headers(**{"webhook-timestamp": "-5"})) == "invalid_timestamp"
    for name in ("webhook-id", "webhook-timestamp", "webhook-signature"):
        headers = spec_headers()
        del headers[name]
        assert reason(SPEC_BODY, headers) == "missing_header", name
        assert reason(SPEC_BODY, spec_headers(**{name: "  "})) == "missing_header", name
    assert reason(SPEC_BODY, spec_headers(), secret="pat_notasecret") == "invalid_secret"
    assert reason(SPEC_BODY, spec_headers(), secret="whsec_!!!") == "invalid_secret"
    assert reason(SPEC_BODY, spec_headers(), secret=[]) == "invalid_secret"


def test_re_serialized_json_fails() -> None:
    reserialized = json.dumps(json.loads(SPEC_BODY), separators=(",", ":")).encode()
    assert reason(reserialized, spec_headers()) == "no_valid_signature"


def test_header_names_in_any_case_and_the_wsgi_form() -> None:
    assert reason(SPEC_BODY, {k.upper(): v for k, v in spec_headers().items()}) == "ok"
    assert reason(SPEC_BODY, {"Webhook-Id": SPEC_ID, "Webhook-Timestamp": str(SPEC_TS), "Webhook-Signature": SPEC_SIG}) == "ok"
    environ = {
        "HTTP_WEBHOOK_ID": SPEC_ID,
        "HTTP_WEBHOOK_TIMESTAMP": str(SPEC_TS),
        "HTTP_WEBHOOK_SIGNATURE": SPEC_SIG,
        "wsgi.input": object(),
    }
    assert reason(SPEC_BODY, environ) == "ok"
    assert reason(SPEC_BODY, list(spec_headers().items())) == "ok"


def test_several_signatures_v1a_ignored_and_rotated_secrets() -> None:
    new_secret = "whsec_" + "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo="
    both = Webhook([new_secret, SPEC_SECRET]).sign(SPEC_BODY, msg_id=SPEC_ID, timestamp=SPEC_TS)
    assert len(both["webhook-signature"].split(" ")) == 2
    assert reason(SPEC_BODY, both, secret=new_secret) == "ok"
    assert reason(SPEC_BODY, both, secret=SPEC_SECRET) == "ok"
    # v1a (asymmetric) entries are skipped, not taken as a failure.
    assert reason(SPEC_BODY, spec_headers(**{"webhook-signature": f"v1a,AAAA {SPEC_SIG}"})) == "ok"
    # Only the other secret signed: refused, even with the right one in a list of candidates.
    assert reason(SPEC_BODY, spec_headers(), secret=[new_secret]) == "no_valid_signature"
    assert reason(SPEC_BODY, spec_headers(), secret=[new_secret, SPEC_SECRET]) == "ok"


def test_secrets_without_padding_are_accepted() -> None:
    unpadded = "whsec_" + "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo"
    headers = Webhook(unpadded).sign(SPEC_BODY, msg_id=SPEC_ID, timestamp=SPEC_TS)
    assert reason(SPEC_BODY, headers, secret=unpadded + "=") == "ok"


@pytest.mark.parametrize(
    "signature",
    ["v1", "v1,", ",", "v1,not base64!", "v1,AAAA=B", "v2,abc", "", "v1,,,", "v1 ,x", "\x00", "v1," + "A" * 10_000],
)
def test_malformed_signatures_raise_the_verification_error_never_anything_else(signature: str) -> None:
    assert reason(SPEC_BODY, spec_headers(**{"webhook-signature": signature})) in ("no_valid_signature", "missing_header")


@pytest.mark.parametrize("headers", [None, 42, "webhook-id", [("only-one",)], {"webhook-id": None}, {"webhook-id": ["a", "b"]}])
def test_malformed_header_containers_are_missing_headers(headers: object) -> None:
    assert reason(SPEC_BODY, headers) == "missing_header"


def test_unwrap_returns_the_typed_event_and_unknown_types_as_unknown_event() -> None:
    secret = "whsec_" + "c2VjcmV0LWtleS1mb3ItdGVzdHM="
    hook = Webhook(secret)
    body = json.dumps(EVENT)
    event = hook.unwrap(body, hook.sign(body))
    assert isinstance(event, types.StudentCreatedEvent) and event.data.last_name == "Lovelace"

    future = json.dumps({**EVENT, "type": "student.merged"}).encode()
    unknown = hook.unwrap(future, hook.sign(future))
    assert isinstance(unknown, platform_api.UnknownEvent) and unknown.type == "student.merged"

    client = platform_api.PlatformClient(token="pat_x", base_url="http://127.0.0.1:1")
    assert isinstance(client.webhooks.unwrap(body.encode(), hook.sign(body), secret=secret), types.StudentCreatedEvent)

    not_event = b'["an", "array"]'
    with pytest.raises(WebhookVerificationError) as caught:
        hook.unwrap(not_event, hook.sign(not_event))
    assert caught.value.reason == "invalid_payload"
    not_json = b"\xff\xfe"
    with pytest.raises(WebhookVerificationError) as caught:
        hook.unwrap(not_json, hook.sign(not_json))
    assert caught.value.reason == "invalid_payload"


def test_a_parsed_body_is_refused_with_how_to_pass_the_raw_one() -> None:
    with pytest.raises(TypeError, match="raw request body"):
        Webhook(SPEC_SECRET).verify(json.loads(SPEC_BODY), spec_headers(), now=SPEC_TS)  # type: ignore[arg-type]
