"""The version the SDK reports in `User-Agent` (test_requests.py) is the package's: the release
writes both, and this keeps them equal."""

from __future__ import annotations

import json
from pathlib import Path

import platform_api

PACKAGE = Path(__file__).resolve().parents[2]


def test_the_version_matches_package_json() -> None:
    package = json.loads((PACKAGE / "package.json").read_text(encoding="utf-8"))
    assert platform_api.__version__ == package["version"]

