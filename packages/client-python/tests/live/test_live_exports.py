"""Exports against the live server: create, wait, download, list, and the collection checksum
computed locally matching the server's."""

from __future__ import annotations

import io
import json

import platform_api

from .conftest import unique


def test_export_wait_download_and_checksum(client: platform_api.PlatformClient) -> None:
    for _ in range(3):
        client.students.create(student_number=unique("X-"), first_name="Ex", last_name="Port")
    created = client.exports.create(collection="students", format="ndjson")
    assert created.id.startswith("exp_")
    done = platform_api.wait_for_export(client, created.id, interval=0.05, timeout=60)
    assert done.status == "succeeded"
    assert done.cursor is not None

    buffer = io.BytesIO()
    size = platform_api.download_export(client, done.id, buffer)
    assert size == done.size_bytes
    records = [json.loads(line) for line in buffer.getvalue().decode().splitlines() if line]
    assert len(records) == done.row_count >= 3

    # The generated call answers too (its body is the file, not JSON).
    client.exports.download(done.id)
    assert any(e.id == done.id for e in client.exports.list(collection="students"))

    sums = client.checksums.retrieve(collections="students")
    assert sums.data[0].count == len(records)
    assert sums.data[0].checksum == platform_api.collection_checksum(records)


def test_wait_for_an_unknown_export_raises(client: platform_api.PlatformClient) -> None:
    try:
        platform_api.wait_for_export(client, "exp_01JA0000000000000000000000", interval=0.01)
    except platform_api.NotFoundError:
        return
    raise AssertionError("waiting for an unknown export did not raise")
