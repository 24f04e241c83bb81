"""The shared vectors (conformance/webhooks/vectors.json, signed by the server's own signer):
the TypeScript, PHP and Python verifiers must all reach each case's `expect`."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from platform_api import UnknownEvent, Webhook, WebhookVerificationError

VECTORS = Path(__file__).resolve().parents[4] / "conformance" / "webhooks" / "vectors.json"
CASES: List[Dict[str, Any]] = json.loads(VECTORS.read_text(encoding="utf-8"))["cases"]


def test_the_file_has_cases_of_every_outcome() -> None:
    outcomes = {case["expect"] for case in CASES}
    assert {"ok", "missing_header", "invalid_timestamp", "timestamp_outside_tolerance", "no_valid_signature", "invalid_secret"} <= outcomes


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_vector(case: Dict[str, Any]) -> None:
    body = base64.b64decode(case["body_b64"], validate=True)
    headers: Dict[str, str] = case["headers"]
    try:
        hook = Webhook(case["secrets"], tolerance=case["tolerance"])
        hook.verify(body, headers, now=case["now"])
    except WebhookVerificationError as error:
        assert error.reason == case["expect"], error.message
        return
    assert case["expect"] == "ok"
    if "event_type" in case:
        event = hook.unwrap(body, headers, now=case["now"])
        assert not isinstance(event, UnknownEvent)
        assert event.type == case["event_type"]
        assert event.to_dict() == json.loads(body)
    else:
        # Verified, but not a Platform event: unwrap may refuse it only as invalid_payload.
        with pytest.raises(WebhookVerificationError) as caught:
            hook.unwrap(body, headers, now=case["now"])
        assert caught.value.reason == "invalid_payload"
