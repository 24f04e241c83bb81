"""Hand-written helpers beside the generated `client.exports`: wait for an export to finish,
download its file, and compute the collection checksum of your own copy."""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from typing import IO, Any, Iterable, Mapping, Optional, Union, cast

from ._exceptions import PlatformError

__all__ = [
    "wait_for_export",
    "download_export",
    "wait_for_export_async",
    "download_export_async",
    "collection_checksum",
]


def wait_for_export(client: Any, export_id: str, *, interval: float = 1.0, timeout: Optional[float] = None) -> Any:
    """Polls `GET /v1/exports/{id}` until the export has succeeded and returns it.

    Raises `PlatformError` when it failed or expired, or when `timeout` seconds passed.
    """
    started = time.monotonic()
    while True:
        exp = client.exports.retrieve(export_id)
        if exp.status == "succeeded":
            return exp
        if exp.status in ("failed", "expired"):
            raise PlatformError(f"Export {export_id} {exp.status}: {exp.error or 'no file'}; start a new one")
        if timeout is not None and time.monotonic() - started > timeout:
            raise PlatformError(f"Export {export_id} did not finish within {timeout} s")
        time.sleep(interval)


def download_export(client: Any, export_id: str, destination: Union[str, os.PathLike[str], IO[bytes]]) -> int:
    """Streams the file of a succeeded export to `destination` (a path, or a binary file left
    open) and returns its size in bytes.

    The body goes to the destination in chunks as it arrives, so memory stays bounded whatever
    the file's size. A path is written only once the download has started: an error (a 409
    `ConflictError` for an expired export, ...) leaves no file behind.
    """
    path = os.fspath(destination) if isinstance(destination, (str, os.PathLike)) else None
    out: Optional[IO[bytes]] = None if path is not None else cast(IO[bytes], destination)
    size = 0

    def write(chunk: bytes) -> None:
        nonlocal out, size
        if out is None:
            out = open(cast(str, path), "wb")
        out.write(chunk)
        size += len(chunk)

    try:
        client.stream(f"/v1/exports/{export_id}/file", write)
    finally:
        if path is not None and out is not None:
            out.close()
    if path is not None and out is None:
        # An empty file arrives as no chunk at all.
        open(path, "wb").close()
    return size


async def wait_for_export_async(
    client: Any, export_id: str, *, interval: float = 1.0, timeout: Optional[float] = None
) -> Any:
    """`wait_for_export` for an `AsyncPlatformClient`: polls without blocking the event loop."""
    started = time.monotonic()
    while True:
        exp = await client.exports.retrieve(export_id)
        if exp.status == "succeeded":
            return exp
        if exp.status in ("failed", "expired"):
            raise PlatformError(f"Export {export_id} {exp.status}: {exp.error or 'no file'}; start a new one")
        if timeout is not None and time.monotonic() - started > timeout:
            raise PlatformError(f"Export {export_id} did not finish within {timeout} s")
        await asyncio.sleep(interval)


async def download_export_async(
    client: Any, export_id: str, destination: Union[str, os.PathLike[str], IO[bytes]]
) -> int:
    """`download_export` for an `AsyncPlatformClient`: streams the file of a succeeded export to
    `destination` (a path, or a binary file left open) and returns its size in bytes.

    The same rules: chunks go to the destination as they arrive (bounded memory); a path is
    created only once the body starts, so an error (a 409 `ConflictError`, ...) leaves no file;
    a body cut short raises `APIConnectionError` and is not sent again once a byte was written.
    """
    path = os.fspath(destination) if isinstance(destination, (str, os.PathLike)) else None
    out: Optional[IO[bytes]] = None if path is not None else cast(IO[bytes], destination)
    size = 0

    def write(chunk: bytes) -> None:
        nonlocal out, size
        if out is None:
            out = open(cast(str, path), "wb")
        out.write(chunk)
        size += len(chunk)

    try:
        await client.stream(f"/v1/exports/{export_id}/file", write)
    finally:
        if path is not None and out is not None:
            out.close()
    if path is not None and out is None:
        # An empty file arrives as no chunk at all.
        open(path, "wb").close()
    return size


def collection_checksum(records: Iterable[Mapping[str, Any]]) -> str:
    """The checksum `GET /v1/collections/checksums` answers, over your own copy: lowercase hex
    SHA-256 of `<id>\\t<updated_at>\\n` per record, sorted by id (byte order), `updated_at` exactly
    as the API writes it."""
    h = hashlib.sha256()
    for r in sorted(records, key=lambda r: str(r["id"]).encode()):
        h.update(f"{r['id']}\t{r['updated_at']}\n".encode())
    return h.hexdigest()
