"""Every resource's operations against the real server."""

from __future__ import annotations

import datetime as dt

import pytest

import platform_api
from platform_api import types

from .conftest import LIVE, make_client, unique


def new_student(client: platform_api.PlatformClient, **changes: object) -> types.Student:
    return client.students.create(
        student_number=unique("S-"), first_name="Ada", last_name=unique("Lovelace-"), **changes  # type: ignore[arg-type]
    )


def new_course(client: platform_api.PlatformClient) -> types.Course:
    return client.courses.create(code=unique("C-"), title="Algebra", status="active")


def test_students_create_retrieve_update_list_delete(client: platform_api.PlatformClient) -> None:
    created = new_student(client, preferred_name="Ada L.", grade_level=9, email="ada@school.test")
    assert isinstance(created, types.Student)
    assert created.id.startswith("stu_") and created.status == "active"
    assert created.created_at.tzinfo is not None

    fetched = client.students.retrieve(created.id)
    assert fetched == created

    # Omitted leaves a field alone; None clears it.
    renamed = client.students.update(created.id, first_name="Augusta")
    assert (renamed.first_name, renamed.preferred_name) == ("Augusta", "Ada L.")
    cleared = client.students.update(created.id, preferred_name=None, grade_level=None)
    assert (cleared.preferred_name, cleared.grade_level, cleared.first_name) == (None, None, "Augusta")

    found = client.students.list(q=created.last_name, status=["active", "inactive"])
    assert [s.id for s in found] == [created.id]

    deleted = client.students.delete(created.id)
    assert (deleted.id, deleted.deleted) == (created.id, True)
    with pytest.raises(platform_api.NotFoundError) as caught:
        client.students.retrieve(created.id)
    assert caught.value.code == "not_found" and caught.value.request_id


def test_courses(client: platform_api.PlatformClient) -> None:
    course = client.courses.create(code=unique("C-"), title="Geometry", capacity=30, start_date="2026-09-01")
    assert client.courses.retrieve(course.id).title == "Geometry"
    updated = client.courses.update(course.id, title="Geometry II", capacity=None)
    assert (updated.title, updated.capacity) == ("Geometry II", None)
    assert course.id in [c.id for c in client.courses.list(per_page=100)]
    assert client.courses.delete(course.id).deleted is True


def test_enrollments_and_their_state_transitions(client: platform_api.PlatformClient) -> None:
    student = new_student(client)
    course = new_course(client)
    enrollment = client.enrollments.create(student_id=student.id, course_id=course.id)
    assert enrollment.status == "pending"
    assert client.enrollments.update(enrollment.id, notes="late start").notes == "late start"
    assert client.enrollments.activate(enrollment.id).status == "active"
    with pytest.raises(platform_api.ConflictError) as caught:
        client.enrollments.cancel(enrollment.id)  # only a pending one can be cancelled
    assert caught.value.code == "invalid_state_transition"
    assert client.enrollments.complete(enrollment.id).status == "completed"
    assert client.enrollments.retrieve(enrollment.id).status == "completed"

    other_course = new_course(client)
    dropped = client.enrollments.create(student_id=student.id, course_id=other_course.id, status="active")
    assert client.enrollments.drop(dropped.id).status == "dropped"
    third_course = new_course(client)
    cancelled = client.enrollments.create(student_id=student.id, course_id=third_course.id)
    assert client.enrollments.cancel(cancelled.id).status == "cancelled"

    listed = client.enrollments.list(student_id=student.id, sort="created_at")
    assert [e.id for e in listed] == [enrollment.id, dropped.id, cancelled.id]


def test_payments(client: platform_api.PlatformClient) -> None:
    student = new_student(client)
    payment = client.payments.create(student_id=student.id, amount=12_500, currency="EUR", description="Fees")
    assert (payment.status, payment.amount) == ("pending", 12_500)
    assert client.payments.succeed(payment.id).status == "succeeded"
    refunded = client.payments.refund(payment.id, amount=2_500)
    assert (refunded.status, refunded.amount_refunded) == ("refunded", 2_500)
    assert client.payments.retrieve(payment.id).amount_refunded == 2_500

    failing = client.payments.create(student_id=student.id, amount=100, currency="EUR")
    assert client.payments.fail(failing.id, failure_reason="card_declined").status == "failed"
    listed = client.payments.list(student_id=student.id, status="failed")
    assert [p.id for p in listed] == [failing.id]


def test_exams_and_exam_results(client: platform_api.PlatformClient) -> None:
    course = new_course(client)
    student = new_student(client)
    client.enrollments.create(student_id=student.id, course_id=course.id, status="active")
    exam = client.exams.create(course_id=course.id, title="Midterm", max_score=100, held_on="2026-10-01")
    assert client.exams.retrieve(exam.id).title == "Midterm"
    assert client.exams.update(exam.id, title="Midterm exam").title == "Midterm exam"
    assert exam.id in [e.id for e in client.exams.list(course_id=course.id)]

    result = client.exam_results.create(exam_id=exam.id, student_id=student.id, score=87.5, grade="B+")
    assert result.status == "draft"
    assert client.exam_results.update(result.id, score=91, grade="A-").grade == "A-"
    published = client.exam_results.publish(result.id)
    assert published.status == "published"
    assert client.exam_results.retrieve(result.id).score == 91
    assert [r.id for r in client.exam_results.list(exam_id=exam.id)] == [result.id]

    spare = client.exams.create(course_id=course.id, title="Spare", max_score=10)
    assert client.exams.delete(spare.id).deleted is True


def test_events_list_and_retrieve_are_typed(client: platform_api.PlatformClient) -> None:
    student = new_student(client)
    since = dt.datetime.now(dt.timezone.utc) - dt.timedelta(minutes=5)
    events = [
        e
        for e in client.events.list(type="student.created", created_at={"gte": since}, per_page=100)
        if isinstance(e, types.StudentCreatedEvent) and e.data.id == student.id
    ]
    assert len(events) == 1
    event = client.events.retrieve(events[0].id)
    assert isinstance(event, types.StudentCreatedEvent)
    assert event.data.student_number == student.student_number
    assert event.type == "student.created" and event.object == "event"


def test_personal_access_tokens(client: platform_api.PlatformClient) -> None:
    created = client.personal_access_tokens.create(name=unique("ci-"), scopes=["students:read"])
    assert created.token.startswith("pat_")
    assert client.personal_access_tokens.retrieve(created.id).name == created.name
    assert created.id in [t.id for t in client.personal_access_tokens.list(per_page=100)]

    with make_client(token=created.token) as scoped:
        info = scoped.token.retrieve()
        assert (info.type, info.scopes, info.personal_access_token_id) == (
            "personal_access_token",
            ["students:read"],
            created.id,
        )
    revoked = client.personal_access_tokens.delete(created.id)
    assert revoked.revoked_at is not None
    with pytest.raises(platform_api.AuthenticationError):
        make_client(token=created.token).token.retrieve()


def test_oauth_clients(client: platform_api.PlatformClient) -> None:
    registered = client.oauth_clients.create(
        name=unique("Sync "),
        type="confidential",
        scopes=["students:read"],
        grant_types=["client_credentials"],
    )
    assert registered.client_secret
    assert client.oauth_clients.retrieve(registered.id).name == registered.name
    assert registered.id in [c.id for c in client.oauth_clients.list(per_page=100)]

    renamed = client.oauth_clients.update(
        registered.id, name="Renamed sync", redirect_uris=["https://sync.example/callback"]
    )
    assert (renamed.name, renamed.redirect_uris) == (
        "Renamed sync",
        ["https://sync.example/callback"],
    )
    with pytest.raises(platform_api.ValidationError) as refused:
        client.oauth_clients.update(registered.id, redirect_uris=["http://sync.example/cb"])
    assert "redirect_uris.0" in str(refused.value)

    rotated = client.oauth_clients.rotate_secret(registered.id)
    assert rotated.client_secret and rotated.client_secret != registered.client_secret
    auth = platform_api.ClientCredentials(
        client_id=registered.id, client_secret=rotated.client_secret, token_url=LIVE.token_url
    )
    with make_client(auth=auth) as machine:
        info = machine.token.retrieve()
        assert (info.type, info.client_id) == ("oauth_access_token", registered.id)

    assert client.oauth_clients.delete(registered.id).deleted is True
    with pytest.raises(platform_api.NotFoundError):
        client.oauth_clients.retrieve(registered.id)


def test_token_retrieve(client: platform_api.PlatformClient) -> None:
    info = client.token.retrieve()
    assert info.type == "personal_access_token" and info.object == "token"
    assert "students:write" in info.scopes
