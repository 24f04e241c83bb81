"""Hand-written methods of the generated `client.exports` (`wait`, `download_to`, which it
inherits from `ExportsHelpers`), and the collection checksum of your own copy."""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
import warnings
from typing import IO, Any, Iterable, Mapping, Optional, Union, cast

from ._core._resource import AsyncAPIResource, SyncAPIResource, path_param
from ._exceptions import PlatformError
from .types.models import Export

__all__ = [
    "ExportsHelpers",
    "AsyncExportsHelpers",
    "wait_for_export",
    "download_export",
    "wait_for_export_async",
    "download_export_async",
    "collection_checksum",
]


def _failed(export_id: str, exp: Export) -> Optional[PlatformError]:
    if exp.status in ("failed", "expired"):
        return PlatformError(f"Export {export_id} {exp.status}: {exp.error or 'no file'}; start a new one")
    return None


class _FileSink:
    """Writes chunks to a path (opened at the first chunk, so an error leaves no file) or to an
    open binary file, counting the bytes."""

    def __init__(self, destination: Union[str, "os.PathLike[str]", IO[bytes]]) -> None:
        self.path = os.fspath(destination) if isinstance(destination, (str, os.PathLike)) else None
        self.out: Optional[IO[bytes]] = None if self.path is not None else cast(IO[bytes], destination)
        self.size = 0

    def __call__(self, chunk: bytes) -> None:
        if self.out is None:
            self.out = open(cast(str, self.path), "wb")
        self.out.write(chunk)
        self.size += len(chunk)

    def close(self) -> None:
        if self.path is not None and self.out is not None:
            self.out.close()

    def finish(self) -> int:
        if self.path is not None and self.out is None:
            # An empty file arrives as no chunk at all.
            open(self.path, "wb").close()
        return self.size


class ExportsHelpers(SyncAPIResource):
    """The hand-written methods of `client.exports`: `wait` and `download_to`."""

    def wait(self, id: str, *, interval: float = 1.0, timeout: Optional[float] = None) -> Export:
        """Polls `GET /v1/exports/{id}` until the export has succeeded and returns it.

        Raises `PlatformError` when it failed or expired, or when `timeout` seconds passed.
        """
        started = time.monotonic()
        while True:
            exp = self._client.exports.retrieve(id)
            if exp.status == "succeeded":
                return exp
            error = _failed(id, exp)
            if error is not None:
                raise error
            if timeout is not None and time.monotonic() - started > timeout:
                raise PlatformError(f"Export {id} did not finish within {timeout} s")
            time.sleep(interval)

    def download_to(self, id: str, destination: Union[str, "os.PathLike[str]", IO[bytes]]) -> int:
        """Streams the file of a succeeded export to `destination` (a path, or a binary file left
        open) and returns its size in bytes.

        The body goes to the destination in chunks as it arrives, so memory stays bounded whatever
        the file's size (`download` returns the whole file as text). A path is written only once
        the download has started: an error (a 409 `ConflictError` for an expired export, ...)
        leaves no file behind.
        """
        sink = _FileSink(destination)
        try:
            self._client.stream(f"/v1/exports/{path_param('id', id)}/file", sink)
        finally:
            sink.close()
        return sink.finish()


class AsyncExportsHelpers(AsyncAPIResource):
    """The hand-written methods of `AsyncPlatformClient.exports`: `wait` and `download_to`, awaited."""

    async def wait(self, id: str, *, interval: float = 1.0, timeout: Optional[float] = None) -> Export:
        """`exports.wait` without blocking the event loop: polls until the export has succeeded."""
        started = time.monotonic()
        while True:
            exp = await self._client.exports.retrieve(id)
            if exp.status == "succeeded":
                return exp
            error = _failed(id, exp)
            if error is not None:
                raise error
            if timeout is not None and time.monotonic() - started > timeout:
                raise PlatformError(f"Export {id} did not finish within {timeout} s")
            await asyncio.sleep(interval)

    async def download_to(self, id: str, destination: Union[str, "os.PathLike[str]", IO[bytes]]) -> int:
        """`exports.download_to` for the async client: the same rules (bounded memory, no file
        left behind by an error); a body cut short raises `APIConnectionError` and is not sent
        again once a byte was written."""
        sink = _FileSink(destination)
        try:
            await self._client.stream(f"/v1/exports/{path_param('id', id)}/file", sink)
        finally:
            sink.close()
        return sink.finish()


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"platform_api.{old} is deprecated: use {new}", DeprecationWarning, stacklevel=3)


def wait_for_export(client: Any, export_id: str, *, interval: float = 1.0, timeout: Optional[float] = None) -> Any:
    """Deprecated: use `client.exports.wait(export_id)`, which this calls."""
    _deprecated("wait_for_export(client, id)", "client.exports.wait(id)")
    return client.exports.wait(export_id, interval=interval, timeout=timeout)


def download_export(client: Any, export_id: str, destination: Union[str, "os.PathLike[str]", IO[bytes]]) -> int:
    """Deprecated: use `client.exports.download_to(export_id, destination)`, which this calls."""
    _deprecated("download_export(client, id, destination)", "client.exports.download_to(id, destination)")
    size: int = client.exports.download_to(export_id, destination)
    return size


async def wait_for_export_async(
    client: Any, export_id: str, *, interval: float = 1.0, timeout: Optional[float] = None
) -> Any:
    """Deprecated: use `await client.exports.wait(export_id)`, which this calls."""
    _deprecated("wait_for_export_async(client, id)", "await client.exports.wait(id)")
    return await client.exports.wait(export_id, interval=interval, timeout=timeout)


async def download_export_async(
    client: Any, export_id: str, destination: Union[str, "os.PathLike[str]", IO[bytes]]
) -> int:
    """Deprecated: use `await client.exports.download_to(export_id, destination)`, which this calls."""
    _deprecated("download_export_async(client, id, destination)", "await client.exports.download_to(id, destination)")
    size: int = await client.exports.download_to(export_id, destination)
    return size


def collection_checksum(records: Iterable[Mapping[str, Any]]) -> str:
    """The checksum `GET /v1/collections/checksums` answers, over your own copy: lowercase hex
    SHA-256 of `<id>\\t<updated_at>\\n` per record, sorted by id (byte order), `updated_at` exactly
    as the API writes it."""
    h = hashlib.sha256()
    for r in sorted(records, key=lambda r: str(r["id"]).encode()):
        h.update(f"{r['id']}\t{r['updated_at']}\n".encode())
    return h.hexdigest()
