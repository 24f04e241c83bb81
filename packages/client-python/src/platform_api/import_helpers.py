"""Hand-written methods of the generated `client.imports`: `wait`, which it inherits from
`ImportsHelpers`."""

from __future__ import annotations

import asyncio
import time
from typing import Optional

from ._core._resource import AsyncAPIResource, SyncAPIResource
from ._exceptions import PlatformError
from .types.models import Import

__all__ = ["ImportsHelpers", "AsyncImportsHelpers"]

_FINISHED = ("succeeded", "failed")


def _late(import_id: str, found: Import, timeout: float) -> PlatformError:
    return PlatformError(
        f"Import {import_id} did not finish within {timeout} s ({found.rows_processed} of {found.rows} rows)"
    )


class ImportsHelpers(SyncAPIResource):
    """The hand-written method of `client.imports`: `wait`."""

    def wait(self, id: str, *, interval: float = 1.0, timeout: Optional[float] = None) -> Import:
        """Polls `GET /v1/imports/{id}` until the import has finished and returns it, succeeded or
        failed (`error` says why: a threshold passed, unreadable rows). Refused rows are in
        `imports.errors(id)`. Raises `PlatformError` once `timeout` seconds have passed."""
        started = time.monotonic()
        while True:
            found = self._client.imports.retrieve(id)
            if found.status in _FINISHED:
                return found
            if timeout is not None and time.monotonic() - started > timeout:
                raise _late(id, found, timeout)
            time.sleep(interval)


class AsyncImportsHelpers(AsyncAPIResource):
    """The hand-written method of `AsyncPlatformClient.imports`: `wait`, awaited."""

    async def wait(self, id: str, *, interval: float = 1.0, timeout: Optional[float] = None) -> Import:
        """`imports.wait` without blocking the event loop: polls until the import has finished."""
        started = time.monotonic()
        while True:
            found = await self._client.imports.retrieve(id)
            if found.status in _FINISHED:
                return found
            if timeout is not None and time.monotonic() - started > timeout:
                raise _late(id, found, timeout)
            await asyncio.sleep(interval)
