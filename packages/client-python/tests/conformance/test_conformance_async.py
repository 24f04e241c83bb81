"""The SDK conformance suite through `AsyncPlatformClient` (httpx): the same scenarios and
outcomes as `PlatformClient` (test_conformance.py), so the two clients behave alike."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List

import pytest

import platform_api as sdk

from .test_conformance import SCENARIOS, call_args, client_for, control, error_outcome, plain, snake

# `origin` (the scripted server) comes from the sync suite's module fixture.
from .test_conformance import origin as origin  # noqa: F401  (a pytest fixture)


async def run(origin: str, scenario: Dict[str, Any]) -> Dict[str, Any]:
    waits: List[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    options = client_for(origin, scenario, waits)
    options["sleep"] = sleep
    call = scenario["call"]
    async with sdk.AsyncPlatformClient(**options) as client:
        try:
            if "request" in call:
                spec = call["request"]
                response = await client.request(
                    spec["method"],
                    spec["path"],
                    query=spec.get("query"),
                    body=spec.get("body", sdk.omit),
                    request_options=call.get("request_options"),
                )
                return {"ok": True, "value": response.parse(), "waits": waits}
            resource = getattr(client, snake(call["resource"]))
            positional = [call["id"]] if "id" in call else []
            if call.get("raw"):
                raw = await getattr(resource.with_raw_response, snake(call["method"]))(*positional, **call_args(call))
                return {
                    "ok": True,
                    "value": plain(raw.parse()),
                    "status": raw.status_code,
                    "request_id": raw.request_id,
                    "headers": {name.lower(): raw.headers[name] for name in raw.headers},
                    "waits": waits,
                }
            result = await getattr(resource, snake(call["method"]))(*positional, **call_args(call))
            if call.get("iterate"):
                return {"ok": True, "ids": [item.id async for item in result], "waits": waits}
            return {"ok": True, "value": plain(result), "waits": waits}
        except sdk.PlatformError as error:
            return {"ok": False, "error": error_outcome(error), "waits": waits}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s["name"] for s in SCENARIOS])
def test_conformance_async(origin: str, scenario: Dict[str, Any]) -> None:
    control(origin, "start", {"name": scenario["name"]})
    outcome = asyncio.run(run(origin, scenario))
    verdict = control(origin, "verdict", outcome)
    assert verdict["mismatches"] == []
