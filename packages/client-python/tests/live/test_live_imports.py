"""Imports against the real server: a file uploaded from a path, bytes or an open file, waited
for, listed, and its error report; a OneRoster bundle, each of its imports waited for."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

import platform_api

from .conftest import unique


def test_import_a_csv_file_wait_and_read_the_error_report(
    client: platform_api.PlatformClient, tmp_path: Path
) -> None:
    good, bad = unique("PY-"), unique("PY-")
    path = tmp_path / "students.csv"
    path.write_text(
        "external_id,student_number,first_name,last_name,email\n"
        f"{good},{unique('N-')},Ada,Lovelace,\n"
        f"{bad},{unique('N-')},Alan,Turing,not-an-email\n"
    )
    created = client.imports.create(file=path, collection="students")
    assert created.id.startswith("imp_") and created.format == "csv" and created.rows == 2
    done = client.imports.wait(created.id, interval=0.05, timeout=60)
    assert done.status == "succeeded"
    assert (done.counts.created, done.counts.failed) == (1, 1)
    assert client.students.retrieve(f"ext:{good}").first_name == "Ada"

    report = client.imports.errors(done.id).splitlines()
    assert report[0] == "row,external_id,field,code,problem"
    assert report[1].startswith(f"2,{bad},email,")
    assert any(i.id == done.id for i in client.imports.list(collection="students"))


def test_bytes_and_open_files_with_a_format_and_a_dry_run(client: platform_api.PlatformClient) -> None:
    key = unique("PY-")
    line = f'{{"external_id":"{key}","student_number":"{unique("N-")}","first_name":"G","last_name":"H"}}\n'
    dry = client.imports.create(file=line.encode(), collection="students", format="ndjson", dry_run=True)
    assert client.imports.wait(dry.id, interval=0.05).counts.created == 1
    with pytest.raises(platform_api.NotFoundError):
        client.students.retrieve(f"ext:{key}")

    applied = client.imports.create(file=("rows.ndjson", io.BytesIO(line.encode())), collection="students")
    assert applied.format == "ndjson"
    assert client.imports.wait(applied.id, interval=0.05).counts.created == 1
    assert client.imports.retrieve(applied.id).rows_processed == 1
    assert client.students.retrieve(f"ext:{key}").first_name == "G"


def test_a_repeat_under_one_idempotency_key_is_the_same_import(client: platform_api.PlatformClient) -> None:
    line = f'{{"external_id":"{unique("PY-")}","student_number":"{unique("N-")}","first_name":"I","last_name":"J"}}\n'
    key = unique("py-import-")
    options: platform_api.RequestOptions = {"idempotency_key": key}
    first = client.imports.create(file=line.encode(), collection="students", format="ndjson", request_options=options)
    again = client.imports.with_raw_response.create(
        file=line.encode(), collection="students", format="ndjson", request_options=options
    )
    assert again.headers.get("idempotent-replayed") == "true"
    assert again.parse().id == first.id
    with pytest.raises(platform_api.ConflictError):
        client.imports.create(file=b"{}\n", collection="students", format="ndjson", request_options=options)


def test_a_oneroster_bundle_is_imported_as_its_files(client: platform_api.PlatformClient, tmp_path: Path) -> None:
    student, teacher, klass = unique("ORS-"), unique("ORT-"), unique("ORC-")
    files = {
        "manifest.csv": "propertyName,value\nmanifest.version,1.0\noneroster.version,1.2\n"
        "file.users,delta\nfile.roles,delta\nfile.classes,delta\n",
        "users.csv": "sourcedId,status,dateLastModified,enabledUser,givenName,familyName,identifier\n"
        f"{student},active,,true,Ada,Byron,{unique('N-')}\n{teacher},active,,true,Tess,Teacher,\n",
        "roles.csv": "sourcedId,status,dateLastModified,userSourcedId,roleType,role,orgSourcedId\n"
        f"r1,,,{student},primary,student,s1\nr2,,,{teacher},primary,teacher,s1\n",
        "classes.csv": "sourcedId,status,dateLastModified,title,courseSourcedId,classCode,schoolSourcedId\n"
        f"{klass},,,Algebra,c1,{klass[-20:]},s1\n",
    }
    path = tmp_path / "roster.zip"
    with zipfile.ZipFile(path, "w") as bundle:
        for name, text in files.items():
            bundle.writestr(name, text)
    created = client.imports.create(file=path, format="oneroster")
    assert created.format == "oneroster" and created.bundle is not None
    assert created.bundle.file == "users.csv" and len(created.bundle.imports) == 2
    students, courses = (client.imports.wait(i, interval=0.05, timeout=60) for i in created.bundle.imports)
    assert (students.collection, students.mode, students.status) == ("students", "upsert", "succeeded")
    assert (students.counts.created, students.counts.skipped) == (1, 1)
    assert (courses.collection, courses.counts.created) == ("courses", 1)
    assert client.students.retrieve(f"ext:{student}").first_name == "Ada"
    assert client.courses.retrieve(f"ext:{klass}").title == "Algebra"
    assert f",{teacher},role,not_mapped," in client.imports.errors(students.id)
