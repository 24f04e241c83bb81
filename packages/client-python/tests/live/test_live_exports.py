"""Exports against the live server: create, wait, download, list, and the collection checksum
computed locally matching the server's."""

from __future__ import annotations

import hashlib
import io
import json
import tracemalloc
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import platform_api

from .conftest import FEED_CURSOR, LIVE, position_of, unique


def test_export_wait_download_and_checksum(client: platform_api.PlatformClient) -> None:
    for _ in range(3):
        client.students.create(student_number=unique("X-"), first_name="Ex", last_name="Port")
    created = client.exports.create(collection="students", format="ndjson")
    assert created.id.startswith("exp_")
    done = client.exports.wait(created.id, interval=0.05, timeout=60)
    assert done.status == "succeeded"
    assert done.cursor is not None and FEED_CURSOR.match(done.cursor)

    buffer = io.BytesIO()
    size = client.exports.download_to(done.id, buffer)
    assert size == done.size_bytes
    records = [json.loads(line) for line in buffer.getvalue().decode().splitlines() if line]
    assert len(records) == done.row_count >= 3

    # The generated call answers the whole file as text (its body is the file, not JSON).
    assert client.exports.download(done.id) == buffer.getvalue().decode()
    raw = client.exports.with_raw_response.download(done.id)
    assert raw.headers.get("content-type", "").startswith("application/x-ndjson")
    assert raw.parse() == buffer.getvalue().decode()
    assert any(e.id == done.id for e in client.exports.list(collection="students"))

    sums = client.checksums.retrieve(collections="students")
    assert sums.data[0].count == len(records)
    assert sums.data[0].checksum == platform_api.collection_checksum(records)
    assert FEED_CURSOR.match(sums.cursor) and position_of(sums.cursor) >= position_of(done.cursor)

    # The export's cursor is where the feed takes over: a change made after it is read after it,
    # up to the checksums' cursor of a later snapshot, and nothing from before it.
    later = client.students.create(student_number=unique("X-"), first_name="After", last_name="Export")
    upto = client.checksums.retrieve(collections="students").cursor
    after_export = list(client.changes.follow(after=done.cursor, until=upto, type="student.created"))
    ids = [e.data.id for e in after_export if isinstance(e, platform_api.types.StudentCreatedEvent)]
    assert len(ids) == len(after_export) and ids[-1] == later.id
    assert not {str(r["id"]) for r in records} & set(ids)


def test_a_batch_exports_several_collections_from_one_snapshot(
    client: platform_api.PlatformClient,
) -> None:
    student = client.students.create(student_number=unique("B-"), first_name="Bat", last_name="Ch")
    course = client.courses.create(code=unique("B-"), title="Batch")
    client.enrollments.create(student_id=student.id, course_id=course.id)
    batch = client.exports.create_batch(collections=["enrollments", "students", "courses"])
    assert batch.object == "export_batch"
    assert [e.collection for e in batch.data] == ["enrollments", "students", "courses"]
    done = [client.exports.wait(e.id, interval=0.05, timeout=60) for e in batch.data]
    assert [e.status for e in done] == ["succeeded"] * 3
    assert done[0].cursor is not None
    assert {e.cursor for e in done} == {done[0].cursor}
    files: list[dict[str, dict[str, str]]] = []
    for export in done:
        buffer = io.BytesIO()
        client.exports.download_to(export.id, buffer)
        rows: list[dict[str, str]] = [json.loads(line) for line in buffer.getvalue().decode().splitlines()]
        files.append({row["id"]: row for row in rows})
    enrollments, students, courses = files
    assert enrollments
    for enrollment in enrollments.values():
        assert enrollment["student_id"] in students
        assert enrollment["course_id"] in courses


def test_a_download_link_fetches_the_file_without_a_token(
    client: platform_api.PlatformClient,
) -> None:
    client.students.create(student_number=unique("L-"), first_name="Link", last_name="Ed")
    created = client.exports.create(collection="students", format="csv")
    done = client.exports.wait(created.id, interval=0.05, timeout=60)
    link = client.exports.create_download_link(done.id)
    assert link.object == "export_download_link"
    assert link.export_id == done.id
    buffer = io.BytesIO()
    client.exports.download_to(done.id, buffer)
    # A plain GET with no Authorization header.
    with urllib.request.urlopen(link.url, timeout=30) as res:
        assert res.status == 200
        assert res.headers["Cache-Control"] == "private, no-store"
        assert res.read() == buffer.getvalue()


def test_a_large_export_streams_to_a_file_with_bounded_memory(
    client: platform_api.PlatformClient, tmp_path: Path
) -> None:
    # About 700 bytes a row: 4,500 students make an export of over 3 MB.
    padding = "x" * 90

    # Its own client (and connections, one per thread), closed when the students exist.
    seeder = platform_api.PlatformClient(token=LIVE.token, base_url=LIVE.base_url)

    def create(i: int) -> None:
        seeder.students.create(
            student_number=unique("BIG-") + "n" * 30,
            first_name=f"First{padding}",
            last_name=f"Last{padding}",
            preferred_name=f"Preferred{padding}",
            email=f"big{i}.{'e' * 60}@example.edu",
        )

    with seeder, ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(create, range(4500)))
    created = client.exports.create(collection="students", format="ndjson")
    done = client.exports.wait(created.id, interval=0.1, timeout=120)
    assert done.size_bytes is not None and done.size_bytes > 3_000_000

    target = tmp_path / "students.ndjson"
    tracemalloc.start()
    try:
        size = client.exports.download_to(done.id, str(target))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert size == done.size_bytes == target.stat().st_size
    # Reading the whole body would need at least the file's size; streaming needs chunks.
    assert peak < done.size_bytes // 10, f"peak memory {peak} B"
    with target.open("rb") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    assert len(rows) == done.row_count
    # The same bytes as the server's file.
    served = client.request("GET", f"/v1/exports/{done.id}/file").content
    assert hashlib.sha256(target.read_bytes()).digest() == hashlib.sha256(served).digest()


def test_downloading_an_unknown_export_raises_and_writes_no_file(
    client: platform_api.PlatformClient, tmp_path: Path
) -> None:
    target = tmp_path / "missing.ndjson"
    try:
        client.exports.download_to("exp_01JA0000000000000000000000", target)
    except platform_api.NotFoundError as error:
        assert error.status_code == 404
    else:
        raise AssertionError("downloading an unknown export did not raise")
    assert not target.exists()


def test_wait_for_an_unknown_export_raises(client: platform_api.PlatformClient) -> None:
    try:
        client.exports.wait("exp_01JA0000000000000000000000", interval=0.01)
    except platform_api.NotFoundError:
        return
    raise AssertionError("waiting for an unknown export did not raise")
