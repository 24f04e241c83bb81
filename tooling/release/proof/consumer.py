"""The Python consumer of the release proof: run in a fresh virtual environment holding only the
released wheel. Creates and lists students against the live server, reads the raw response's
headers, and verifies a webhook the server's own signer signed."""
from __future__ import annotations

import base64
import importlib.metadata
import json
import os
import sys
import time

import platform_api


def env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise SystemExit(f"{name} is not set (the release proof sets it)")
    return value


def check(condition: bool, message: str) -> None:
    if not condition:
        raise SystemExit(f"check failed: {message}")


version = env("PROOF_VERSION")
venv = os.path.realpath(sys.prefix)
check(
    os.path.realpath(platform_api.__file__).startswith(venv + os.sep),
    f"platform_api comes from {platform_api.__file__}, not the virtual environment {venv}",
)
# No dependency but httpx behind the `async` extra (AsyncPlatformClient's transport).
requires = importlib.metadata.requires("platform-api") or []
check(
    all("extra == 'async'" in r for r in requires) and any(r.startswith("httpx") for r in requires),
    f"the wheel declares dependencies outside the async extra: {requires}",
)
check(
    hasattr(platform_api, "AsyncPlatformClient"),
    "platform_api has no AsyncPlatformClient",
)
check(platform_api.__version__ == version, f"__version__ is {platform_api.__version__}, not {version}")

client = platform_api.PlatformClient(
    token=env("PLATFORM_TOKEN"), base_url=env("PLATFORM_BASE_URL"), max_retries=0
)
number = f"PROOF-python-{int(time.time() * 1000):x}"
raw = client.students.with_raw_response.create(
    student_number=number, first_name="Ada", last_name="Lovelace"
)
student = raw.parse()
check(raw.status_code == 201, f"create answered {raw.status_code}, not 201")
check(student.id.startswith("stu_"), f"the new student's id is {student.id}")
check(bool(raw.request_id), "the raw response has no request id")
check(raw.headers.get("X-Request-Id") == raw.request_id, "X-Request-Id differs from request_id")
server_version = raw.headers.get("Platform-Version")
check(server_version == version, f"Platform-Version is {server_version}, not {version}")

page = client.students.list(per_page=100, q=number)
check(any(s.id == student.id for s in page.data), "the new student is not in the list")

body = base64.b64decode(env("PROOF_WEBHOOK_BODY_B64"))
headers = json.loads(env("PROOF_WEBHOOK_HEADERS"))
hook = platform_api.Webhook(env("PROOF_WEBHOOK_SECRET"))
event = hook.unwrap(body, headers)
check(event.type == "student.created", f"event type {event.type}")
check(
    getattr(event.data, "id", None) == env("PROOF_WEBHOOK_STUDENT_ID"),
    "the event is about another student",
)
tampered = body.replace(b'"Ana"', b'"Eve"')
check(tampered != body, 'the payload has no "Ana" to tamper with')
try:
    hook.unwrap(tampered, headers)
    check(False, "a tampered body was accepted")
except platform_api.WebhookVerificationError as error:
    check(error.reason == "no_valid_signature", f"reason {error.reason}, not no_valid_signature")

extra = ""
if os.environ.get("PROOF_ASYNC") == "1":
    # Installed as platform-api[async]: AsyncPlatformClient on the httpx the extra brought.
    import asyncio

    async def read_back() -> int:
        async with platform_api.AsyncPlatformClient(
            token=env("PLATFORM_TOKEN"), base_url=env("PLATFORM_BASE_URL"), max_retries=0
        ) as aclient:
            again = await aclient.students.retrieve(student.id)
            check(again.id == student.id, f"AsyncPlatformClient read {again.id}")
            listed = [s.id async for s in await aclient.students.list(q=number)]
            check(student.id in listed, "AsyncPlatformClient does not list the new student")
            return len(listed)

    extra = f", AsyncPlatformClient read it back and listed {asyncio.run(read_back())}"

print(
    f"ok python: created {student.id} (request {raw.request_id}, server {server_version}), "
    f"listed {len(page.data)}, webhook verified{extra}"
)
