"""Fixtures: a client on the scripted transport of `fakes.py`, with recorded (not real) sleeps."""

from __future__ import annotations

from typing import Any, Callable

import pytest

from platform_api import PlatformClient

from .fakes import FakeTransport, Sleeps

ClientFactory = Callable[..., PlatformClient]


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def make_client(sleeps: Sleeps) -> ClientFactory:
    def make(transport: FakeTransport, **options: Any) -> PlatformClient:
        options.setdefault("token", "pat_test")
        options.setdefault("base_url", "https://api.example.test")
        return PlatformClient(transport=transport, sleep=sleeps, **options)

    return make


