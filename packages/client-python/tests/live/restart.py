"""The harness's restart control (`PLATFORM_CONTROL_URL`, tooling/sdk-live/README.md): take the
API server away for some seconds; it comes back on the same port and database."""

from __future__ import annotations

import json
import os
import time
import urllib.request


def _control(path: str, method: str) -> "tuple[int, str]":
    request = urllib.request.Request(os.environ["PLATFORM_CONTROL_URL"] + path, method=method)
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 (loopback)
        return response.status, response.read().decode()


def stop_for(seconds: int) -> None:
    """Returns once the server has stopped (listener closed, open connections cut)."""
    status, _ = _control(f"/restart?down={seconds}", "POST")
    assert status == 202


def wait_until_up(timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        _, body = _control("/status", "GET")
        if json.loads(body).get("state") == "up":
            return
        time.sleep(0.2)
    raise AssertionError("the server did not come back")
