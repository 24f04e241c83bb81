"""External ids and batch upserts against the real server (decision 29)."""

from __future__ import annotations

import pytest

import platform_api
from platform_api import types

from .conftest import unique


def test_students_batch_upsert_then_ext_addressing(client: platform_api.PlatformClient) -> None:
    key = unique("SIS-")
    item: types.StudentBatchItemParams = {
        "external_id": key,
        "student_number": unique("N-"),
        "first_name": "Ada",
        "last_name": "Byron",
    }
    incomplete: types.StudentBatchItemParams = {"external_id": unique("SIS-")}
    first = client.students.batch_upsert(items=[item, incomplete])
    assert first.object == "batch_result"
    assert [r.status for r in first.data] == ["created", "failed"]
    assert first.data[1].error is not None and first.data[1].error.code == "validation_error"
    assert (first.counts.created, first.counts.failed) == (1, 1)

    # ext:<external_id> stands for the id in a path.
    student = client.students.retrieve(f"ext:{key}")
    assert (student.id, student.external_id) == (first.data[0].id, key)

    rename: list[types.StudentBatchItemParams] = [{"external_id": key, "last_name": "Lovelace"}]
    assert client.students.batch_upsert(items=rename).data[0].status == "updated"
    assert client.students.batch_upsert(items=rename).data[0].status == "unchanged"
    assert client.students.retrieve(f"ext:{key}").last_name == "Lovelace"

    with pytest.raises(platform_api.NotFoundError):
        client.students.retrieve(f"ext:{unique('NONE-')}")


def test_courses_batch_upsert_and_ext_references(client: platform_api.PlatformClient) -> None:
    course_key, student_key = unique("class-"), unique("SIS-")
    result = client.courses.batch_upsert(
        items=[{"external_id": course_key, "code": unique("C-"), "title": "Algebra"}]
    )
    assert result.data[0].status == "created"
    client.students.create(
        external_id=student_key, student_number=unique("N-"), first_name="Ada", last_name="Byron"
    )
    enrollment = client.enrollments.create(student_id=f"ext:{student_key}", course_id=f"ext:{course_key}")
    assert enrollment.course_id == result.data[0].id
    assert enrollment.student_id == client.students.retrieve(f"ext:{student_key}").id


def test_enrollment_external_id_and_ext_list_filter(client: platform_api.PlatformClient) -> None:
    course_key, student_key, enrollment_key = unique("class-"), unique("SIS-"), unique("enr-")
    client.courses.create(external_id=course_key, code=unique("C-"), title="Geometry")
    client.students.create(
        external_id=student_key, student_number=unique("N-"), first_name="Ada", last_name="Byron"
    )
    enrollment = client.enrollments.create(
        student_id=f"ext:{student_key}", course_id=f"ext:{course_key}", external_id=enrollment_key
    )
    assert client.enrollments.retrieve(f"ext:{enrollment_key}").id == enrollment.id
    # A reference filter takes ext: as well as ids.
    page = client.enrollments.list(student_id=f"ext:{student_key}")
    assert [e.id for e in page.data] == [enrollment.id]
    assert client.enrollments.list(student_id=f"ext:{unique('NONE-')}").data == []


def test_exams_and_results_batch_upsert(client: platform_api.PlatformClient) -> None:
    course_key, student_key, exam_key, result_key = (unique(p) for p in ("class-", "SIS-", "exam-", "res-"))
    client.courses.create(external_id=course_key, code=unique("C-"), title="Physics")
    client.students.create(
        external_id=student_key, student_number=unique("N-"), first_name="Ada", last_name="Byron"
    )
    client.enrollments.create(student_id=f"ext:{student_key}", course_id=f"ext:{course_key}", status="active")
    exams = client.exams.batch_upsert(
        items=[{"external_id": exam_key, "course_id": f"ext:{course_key}", "title": "Midterm", "max_score": 50}]
    )
    assert [r.status for r in exams.data] == ["created"]
    results = client.exam_results.batch_upsert(
        items=[
            {"external_id": result_key, "exam_id": f"ext:{exam_key}", "student_id": f"ext:{student_key}", "score": 40},
            {"external_id": unique("res-"), "exam_id": f"ext:{exam_key}", "student_id": f"ext:{student_key}", "score": 30},
        ]
    )
    # One result per student and exam: the second item fails alone.
    assert [r.status for r in results.data] == ["created", "failed"]
    assert results.data[1].error is not None and results.data[1].error.status == 409
    corrected = client.exam_results.batch_upsert(items=[{"external_id": result_key, "score": 45}])
    assert corrected.data[0].status == "updated"
    assert client.exam_results.retrieve(f"ext:{result_key}").score == 45


def test_enrollments_and_payments_batch_upsert(client: platform_api.PlatformClient) -> None:
    course_key, student_key, enrollment_key, payment_key = (unique(p) for p in ("class-", "SIS-", "enr-", "inv-"))
    client.courses.create(external_id=course_key, code=unique("C-"), title="Chemistry", capacity=1)
    client.students.create(
        external_id=student_key, student_number=unique("N-"), first_name="Ada", last_name="Byron"
    )
    enrolled = client.enrollments.batch_upsert(
        items=[{"external_id": enrollment_key, "student_id": f"ext:{student_key}", "course_id": f"ext:{course_key}"}]
    )
    assert [r.status for r in enrolled.data] == ["created"]
    # status moves an enrollment on record along its transitions.
    moved = client.enrollments.batch_upsert(items=[{"external_id": enrollment_key, "status": "active"}])
    assert moved.data[0].status == "updated"
    assert client.enrollments.retrieve(f"ext:{enrollment_key}").status == "active"

    paid = client.payments.batch_upsert(
        items=[
            {
                "external_id": payment_key,
                "student_id": f"ext:{student_key}",
                "amount": 5000,
                "currency": "EUR",
                "status": "refunded",
                "amount_refunded": 1000,
            }
        ]
    )
    assert paid.data[0].status == "created"
    payment = client.payments.retrieve(f"ext:{payment_key}")
    assert (payment.status, payment.amount_refunded) == ("refunded", 1000)
