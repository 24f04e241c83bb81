"""The SDK conformance suite (conformance/http/scenarios.json) through this SDK.

Each scenario's call is made with `PlatformClient` against the scripted loopback server
(tooling/conformance/src/server.js), which judges the requests and the outcome reported here.
The TypeScript and PHP SDKs run the same scenarios. Run by `pnpm --filter @platform/conformance test`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import urllib.request
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

import platform_api as sdk

ROOT = Path(__file__).resolve().parents[4]
SCENARIOS: List[Dict[str, Any]] = json.loads((ROOT / "conformance/http/scenarios.json").read_text("utf-8"))[
    "scenarios"
]

_KINDS = (
    (sdk.ValidationError, "validation"),
    (sdk.AuthenticationError, "authentication"),
    (sdk.PermissionDeniedError, "permission"),
    (sdk.NotFoundError, "not_found"),
    (sdk.ConflictError, "conflict"),
    (sdk.RateLimitError, "rate_limit"),
    (sdk.ServerError, "server"),
    (sdk.APIStatusError, "api"),
    (sdk.APITimeoutError, "timeout"),
    (sdk.APIConnectionError, "connection"),
)


@pytest.fixture(scope="module")
def origin() -> Iterator[str]:
    node = os.environ.get("NODE") or shutil.which("node")
    assert node, "the conformance server needs node on PATH"
    server = subprocess.Popen(
        [node, str(ROOT / "tooling/conformance/src/server.js")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    line = server.stdout.readline()
    match = re.match(r"listening (http://\S+)", line)
    assert match, f"the conformance server did not start: {line!r}"
    try:
        yield match.group(1)
    finally:
        server.terminate()
        server.wait(10)


def control(origin: str, action: str, body: Any) -> Dict[str, Any]:
    request = urllib.request.Request(
        f"{origin}/__conformance/{action}", data=json.dumps(body).encode(), method="POST"
    )
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 (loopback)
        result: Dict[str, Any] = json.loads(response.read())
        return result


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def plain(value: Any) -> Any:
    """A returned model or page as the JSON it came from (unknown fields included)."""
    to_dict = getattr(value, "to_dict", None)
    return to_dict() if callable(to_dict) else value


def error_outcome(error: Exception) -> Dict[str, Any]:
    kind = next((name for cls, name in _KINDS if isinstance(error, cls)), None)
    if kind is None:
        raise error
    if not isinstance(error, sdk.APIStatusError):
        return {"kind": kind}
    return {
        "kind": kind,
        "status": error.status_code,
        "code": error.code,
        "request_id": error.request_id,
        "detail": error.detail if error.problem is not None else None,
        "retry_after": error.retry_after if isinstance(error, sdk.RateLimitError) else None,
        "field_errors": [field.path for field in error.errors],
    }


def client_for(origin: str, scenario: Dict[str, Any], waits: List[float]) -> Dict[str, Any]:
    settings = scenario["client"]
    options: Dict[str, Any] = {
        "token": "pat_conformance",
        "base_url": origin + settings.get("base_path", ""),
        "sleep": waits.append,
    }
    for name in ("max_retries", "timeout", "app_info"):
        if name in settings:
            options[name] = settings[name]
    return options


def call_args(call: Dict[str, Any]) -> Dict[str, Any]:
    kwargs: Dict[str, Any] = {**call.get("body", {}), **call.get("query", {})}
    if "request_options" in call:
        kwargs["request_options"] = dict(call["request_options"])
    return kwargs


def run(origin: str, scenario: Dict[str, Any]) -> Dict[str, Any]:
    waits: List[float] = []
    client = sdk.PlatformClient(**client_for(origin, scenario, waits))
    call = scenario["call"]
    try:
        if "request" in call:
            spec = call["request"]
            response = client.request(
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
            raw = getattr(resource.with_raw_response, snake(call["method"]))(*positional, **call_args(call))
            return {
                "ok": True,
                "value": plain(raw.parse()),
                "status": raw.status_code,
                "request_id": raw.request_id,
                "headers": {name.lower(): raw.headers[name] for name in raw.headers},
                "waits": waits,
            }
        result = getattr(resource, snake(call["method"]))(*positional, **call_args(call))
        if call.get("iterate"):
            return {"ok": True, "ids": [item.id for item in result], "waits": waits}
        return {"ok": True, "value": plain(result), "waits": waits}
    except sdk.PlatformError as error:
        return {"ok": False, "error": error_outcome(error), "waits": waits}
    finally:
        client.close()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s["name"] for s in SCENARIOS])
def test_conformance(origin: str, scenario: Dict[str, Any]) -> None:
    control(origin, "start", {"name": scenario["name"]})
    outcome = run(origin, scenario)
    verdict = control(origin, "verdict", outcome)
    assert verdict["mismatches"] == []
