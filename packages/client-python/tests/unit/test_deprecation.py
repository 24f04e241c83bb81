"""A response with `Deprecation` (RFC 9745) warns once per operation: a scripted server on
127.0.0.1 answers as the Platform server answers a deprecated operation."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import warnings
from http.server import BaseHTTPRequestHandler
from typing import Callable, Dict, List

import platform_api

from .fakes import STUDENT
from .test_transport import Handler, ScriptedServer, client_for, send_json, serve  # noqa: F401  # pyright: ignore[reportUnusedImport]  (the fixture)

ID_1 = "stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S8"
ID_2 = "stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S9"
DEPRECATED = {
    "Deprecation": "@1767225600",
    "Sunset": "Fri, 01 Jan 2027 23:59:59 GMT",
    "Link": '</v1/students?page=1>; rel="first", <http://127.0.0.1/docs/deprecations#get-v1-students-id>; rel="deprecation"; type="text/html"',
}


def answer(headers: Dict[str, str]) -> Handler:
    def script(handler: BaseHTTPRequestHandler, index: int) -> None:
        send_json(handler, 200, {**STUDENT, "id": handler.path.rsplit("/", 1)[-1]}, headers)

    return script


def recorded(run: Callable[[], object]) -> List[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        # "always": the once-only rule under test is the client's, not the warnings registry's.
        warnings.simplefilter("always")
        run()
    return [w for w in caught if issubclass(w.category, platform_api.APIDeprecationWarning)]


def test_two_calls_of_a_deprecated_operation_warn_once_naming_dates_and_note(
    serve: Callable[[Handler], ScriptedServer],
) -> None:
    server = serve(answer(DEPRECATED))
    with client_for(server) as client:
        caught = recorded(lambda: (client.students.retrieve(ID_1), client.students.retrieve(ID_2)))
    assert [str(w.message) for w in caught] == [
        "Platform API: GET /v1/students/{id} uses a deprecated part of the API (deprecated since 2026-01-01);"
        " it may stop working after Fri, 01 Jan 2027 23:59:59 GMT."
        " Migration note: http://127.0.0.1/docs/deprecations#get-v1-students-id"
    ]
    # Attributed to the caller's line, not to the SDK's internals.
    assert caught[0].filename == __file__


def test_a_program_shows_the_warning_with_default_filters(
    serve: Callable[[Handler], ScriptedServer], tmp_path: pathlib.Path
) -> None:
    # The call sits in an application module, not __main__: where Python hides a DeprecationWarning.
    (tmp_path / "app_code.py").write_text(
        "import platform_api\n"
        "def run(url):\n"
        "    client = platform_api.PlatformClient(token='pat_test', base_url=url)\n"
        f"    client.students.retrieve('{ID_1}')\n"
        f"    client.students.retrieve('{ID_2}')\n"
    )
    server = serve(answer(DEPRECATED))
    src = str(pathlib.Path(platform_api.__file__).parent.parent)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    env["PYTHONPATH"] = os.pathsep.join([src, str(tmp_path)])
    result = subprocess.run(
        [sys.executable, "-c", f"import app_code; app_code.run({server.url!r})"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert result.stderr.count("APIDeprecationWarning: Platform API: GET /v1/students/{id}") == 1
    assert "app_code.py:4: APIDeprecationWarning" in result.stderr


def test_no_header_no_warning(serve: Callable[[Handler], ScriptedServer]) -> None:
    server = serve(answer({}))
    with client_for(server) as client:
        assert recorded(lambda: client.students.retrieve(ID_1)) == []
