"""Sandboxes against the real server: made, listed, a pat_test_ token, a triggered event seen
through that token, reset and deleted."""

from __future__ import annotations

import platform_api

from .conftest import make_client


def test_a_sandbox_its_token_and_a_triggered_event(client: platform_api.PlatformClient) -> None:
    sandbox = client.sandboxes.create(name="Python sandbox", students=20, seed=5)
    assert (sandbox.object, sandbox.students, sandbox.seed, sandbox.reset_at) == ("sandbox", 20, 5, None)
    assert any(s.id == sandbox.id for s in client.sandboxes.list())
    assert client.sandboxes.retrieve(sandbox.id).name == "Python sandbox"

    made = client.sandboxes.create_token(sandbox.id, name="python", scopes=["students:read", "students:write"])
    assert made.token.startswith("pat_test_")
    sandboxed = make_client(token=made.token)
    assert len(list(sandboxed.students.list())) == 20
    triggered = sandboxed.sandbox.trigger(event="student.created", overrides={"first_name": "Py"})
    assert triggered.event.type == "student.created"
    assert sandboxed.students.retrieve(triggered.record.id).first_name == "Py"

    assert client.sandboxes.reset(sandbox.id).reset_at is not None
    assert len(list(sandboxed.students.list())) == 20
    assert client.sandboxes.delete(sandbox.id).deleted is True
