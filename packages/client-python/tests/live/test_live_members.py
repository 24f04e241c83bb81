"""The organization, its audit log, members, invitations and the calling member, against the real
server: each change is checked where a user would see it (a later read, the audit log, the
invitation page)."""

from __future__ import annotations

import http.client
import json
import os
import urllib.parse
from html.parser import HTMLParser
from typing import Dict, List, Optional, Tuple

import pytest

import platform_api
from platform_api import types

from .conftest import LIVE, make_client, unique

FIXTURES = json.loads(open(os.environ["PLATFORM_FIXTURES"], encoding="utf-8").read())
ORGANIZATION_ID: str = FIXTURES["organization_id"]
MEMBER_TOKEN = os.environ["PLATFORM_MEMBER_TOKEN"]
MEMBER_EMAIL = os.environ["PLATFORM_MEMBER_EMAIL"]
MEMBER_PASSWORD = os.environ["PLATFORM_MEMBER_PASSWORD"]


class _HiddenInputs(HTMLParser):
    """The hidden inputs of a page's form, as a browser would submit them."""

    def __init__(self) -> None:
        super().__init__()
        self.values: Dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        found = dict(attrs)
        if tag == "input" and found.get("type") == "hidden" and found.get("name"):
            self.values[found["name"] or ""] = found.get("value") or ""


def _get(url: str) -> Tuple[int, str]:
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=10)
    try:
        conn.request("GET", f"{parts.path}?{parts.query}")
        response = conn.getresponse()
        return response.status, response.read().decode("utf-8")
    finally:
        conn.close()


def accept_invitation(accept_url: str, *, name: str, password: str) -> Tuple[int, Optional[str]]:
    """Opens the link and sends its form the way a browser does: the status and Location."""
    status, page = _get(accept_url)
    assert status == 200, page
    hidden = _HiddenInputs()
    hidden.feed(page)
    assert hidden.values.get("token"), "the accept page carries no token input"
    body = urllib.parse.urlencode(
        {"token": hidden.values["token"], "name": name, "password": password, "password_confirmation": password}
    )
    parts = urllib.parse.urlsplit(LIVE.base_url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=10)
    try:
        conn.request(
            "POST",
            "/invitations/accept",
            body=body,
            headers={"content-type": "application/x-www-form-urlencoded", "origin": LIVE.base_url},
        )
        response = conn.getresponse()
        response.read()
        return response.status, response.getheader("location")
    finally:
        conn.close()


def test_organization_retrieve_shows_the_fixture_organization_and_its_rate_limit(
    client: platform_api.PlatformClient,
) -> None:
    raw = client.organization.with_raw_response.retrieve()
    org = raw.parse()
    assert isinstance(org, types.Organization)
    assert (org.id, org.object, org.plan) == (ORGANIZATION_ID, "organization", "standard")
    assert org.name.startswith("SDK Live School A")
    limit = org.rate_limit
    # The body's numbers are the window as this very request left it: its headers say the same.
    assert limit.limit_per_minute == int(raw.headers["x-ratelimit-limit"])
    assert limit.remaining == int(raw.headers["x-ratelimit-remaining"])
    assert limit.used >= 1 and limit.used + limit.remaining == limit.limit_per_minute
    assert limit.resets_at.tzinfo is not None
    # The next call is charged too. The window slides: a request of a minute ago may leave it
    # between two calls, so a few tries are allowed; a call that is never charged fails them all.
    again = limit
    for _ in range(3):
        again = client.organization.retrieve().rate_limit
        if again.used > limit.used and again.remaining < limit.remaining:
            break
        limit = again
    assert again.used > limit.used and again.remaining < limit.remaining


def test_renaming_the_organization_is_recorded_in_the_audit_log(client: platform_api.PlatformClient) -> None:
    before = client.organization.retrieve().name
    new_name = unique("SDK Live School A (renamed ") + ")"
    try:
        renamed = client.organization.update(name=new_name)
        assert (renamed.id, renamed.name) == (ORGANIZATION_ID, new_name)
        assert renamed.updated_at >= renamed.created_at
        assert client.organization.retrieve().name == new_name

        entries = list(client.audit_events.list(action="organization.updated", target_id=ORGANIZATION_ID))
        entry = next(e for e in entries if e.changes == {"name": [before, new_name]})
        assert entry.id.startswith("aud_") and entry.object == "audit_event"
        assert (entry.target.type, entry.target.id) == ("organization", ORGANIZATION_ID)
        # Made with the fixture PAT, an operator's: no member behind it, the caller's IP recorded.
        token = client.token.retrieve()
        assert entry.actor.type == "personal_access_token"
        assert entry.actor.credential_id == token.personal_access_token_id
        assert entry.actor.user_id is None and entry.actor.ip
        assert client.audit_events.retrieve(entry.id) == entry
    finally:
        client.organization.update(name=before)
    assert client.organization.retrieve().name == before

    # The plan is an operator's to change: the field is named in the 400.
    with pytest.raises(platform_api.ValidationError) as caught:
        client.organization.with_raw_response.update(name=before, request_options={"extra_body": {"plan": "enterprise"}})
    assert [e.path for e in caught.value.errors] == ["body.plan"]


def test_invitations_are_created_listed_without_the_link_and_revoked(
    client: platform_api.PlatformClient,
) -> None:
    email = unique("invitee-") + "@school.test"
    invitation = client.invitations.create(email=email, role="viewer")
    assert invitation.id.startswith("inv_") and (invitation.email, invitation.role) == (email, "viewer")
    # The live server sends no mail, so the link comes back to the caller.
    assert invitation.delivery == "link" and invitation.accept_url is not None
    assert invitation.accept_url.startswith(f"{LIVE.base_url}/invitations/accept?token=")
    assert invitation.expires_at > invitation.created_at

    listed = [i for i in client.invitations.list() if i.id == invitation.id]
    assert len(listed) == 1 and listed[0].email == email
    assert "accept_url" not in listed[0].to_dict() and invitation.accept_url not in json.dumps(
        listed[0].to_dict(), default=str
    )
    fetched = client.invitations.retrieve(invitation.id)
    assert (fetched.id, fetched.email, fetched.role) == (invitation.id, email, "viewer")
    assert "accept_url" not in fetched.to_dict()
    assert _get(invitation.accept_url)[0] == 200

    # Resent: a new link; the old one stops working.
    resent = client.invitations.resend(invitation.id)
    assert resent.id == invitation.id and resent.accept_url not in (None, invitation.accept_url)
    assert _get(invitation.accept_url)[0] == 404
    invitation = resent
    assert invitation.accept_url is not None

    deleted = client.invitations.delete(invitation.id)
    assert (deleted.id, deleted.deleted) == (invitation.id, True)
    # Revoked: no longer pending, and its link shows a page saying so.
    assert invitation.id not in [i.id for i in client.invitations.list()]
    status, page = _get(invitation.accept_url)
    assert status == 410 and "withdrawn" in page


def test_an_invitee_who_accepts_becomes_a_member_who_can_be_changed_and_removed(
    client: platform_api.PlatformClient,
) -> None:
    email = unique("member-") + "@school.test"
    invitation = client.invitations.create(email=email, role="developer")
    assert invitation.accept_url is not None
    status, location = accept_invitation(
        invitation.accept_url, name="Grace Hopper", password="a long enough password"
    )
    assert status == 303 and location == f"{LIVE.base_url}/portal/"
    # The link worked once.
    assert _get(invitation.accept_url)[0] == 410

    found = [m for m in client.members.list(role="developer") if m.email == email]
    assert len(found) == 1
    member = found[0]
    assert member.id.startswith("usr_") and member.object == "member"
    assert (member.name, member.role, member.organization_id) == ("Grace Hopper", "developer", ORGANIZATION_ID)
    assert email not in [m.email for m in client.members.list(role="viewer")]
    assert client.members.retrieve(member.id) == member

    updated = client.members.update(member.id, role="viewer", name="Grace B. Hopper")
    assert (updated.id, updated.role, updated.name) == (member.id, "viewer", "Grace B. Hopper")
    assert client.members.retrieve(member.id).role == "viewer"
    changed = list(client.audit_events.list(action="member.role_changed", target_id=member.id))
    assert [e.changes for e in changed] == [{"role": ["developer", "viewer"]}]

    deleted = client.members.delete(member.id)
    assert (deleted.id, deleted.deleted) == (member.id, True)
    with pytest.raises(platform_api.NotFoundError):
        client.members.retrieve(member.id)
    assert email not in [m.email for m in client.members.list()]
    assert [e.action for e in client.audit_events.list(target_id=member.id, action="member.removed")] == [
        "member.removed"
    ]


def test_the_calling_member_and_their_password(client: platform_api.PlatformClient) -> None:
    # The fixture token is an operator's: it acts for no member.
    with pytest.raises(platform_api.PermissionDeniedError) as caught:
        client.user.retrieve()
    assert caught.value.status_code == 403 and caught.value.code == "forbidden"
    assert "acts for no member" in caught.value.detail

    member = make_client(token=MEMBER_TOKEN)
    me = member.user.retrieve()
    assert isinstance(me, types.User)
    assert (me.email, me.role, me.organization_id) == (MEMBER_EMAIL, "admin", ORGANIZATION_ID)
    # The person's account, and each organization it belongs to: here, this one.
    assert me.account_id.startswith("acc_")
    assert [(m.organization_id, m.role, m.member_id) for m in me.memberships] == [
        (ORGANIZATION_ID, "admin", me.id)
    ]
    as_member = client.members.retrieve(me.id)
    assert (as_member.id, as_member.email, as_member.role) == (me.id, me.email, me.role)

    with pytest.raises(platform_api.ValidationError) as wrong:
        member.user.change_password(current_password="not my password", new_password="whatever it is now")
    assert [e.path for e in wrong.value.errors] == ["body.current_password"]

    new_password = unique("a new password ")
    assert member.user.change_password(current_password=MEMBER_PASSWORD, new_password=new_password) is None
    try:
        # Tokens already issued keep working, and the change is in the audit log (no password).
        assert member.user.retrieve().id == me.id
        entries = list(client.audit_events.list(action="user.password_changed", user_id=me.id))
        assert entries and entries[0].target.id == me.id and entries[0].actor.user_id == me.id
        assert new_password not in json.dumps(entries[0].to_dict(), default=str)
        # The old password is no longer the current one.
        with pytest.raises(platform_api.ValidationError):
            member.user.change_password(current_password=MEMBER_PASSWORD, new_password=unique("another one "))
    finally:
        member.user.change_password(current_password=new_password, new_password=MEMBER_PASSWORD)


def test_changing_the_email_waits_for_the_new_address(client: platform_api.PlatformClient) -> None:
    member = make_client(token=MEMBER_TOKEN)
    with pytest.raises(platform_api.ValidationError) as wrong:
        member.user.change_email(email=unique("moved-") + "@school.test", current_password="not my password")
    assert [e.path for e in wrong.value.errors] == ["body.current_password"]

    new_email = unique("moved-") + "@school.test"
    pending = member.user.change_email(email=new_email, current_password=MEMBER_PASSWORD)
    # The live server sends no mail (development): the link comes back instead of going out, and
    # the email stays as it is until the link is opened.
    assert (pending.object, pending.email, pending.delivery) == ("email_change", new_email, "link")
    assert pending.confirm_url is not None
    assert pending.confirm_url.startswith(os.environ["PLATFORM_BASE_URL"] + "/email-change?token=")
    assert member.user.retrieve().email == MEMBER_EMAIL


def test_what_acts_for_a_member_and_handing_it_to_another(client: platform_api.PlatformClient) -> None:
    member = make_client(token=MEMBER_TOKEN)
    me = member.user.retrieve()
    endpoint = member.webhook_endpoints.create(url="https://127.0.0.1:9/python-credentials", events=["student.created"])
    app = member.oauth_clients.create(
        name=unique("python app "), type="confidential", scopes=["students:read"], grant_types=["client_credentials"]
    )
    try:
        # Made by the member: theirs, and listed with what removing them would stop.
        assert endpoint.member_id == me.id and app.member_id == me.id
        held = client.members.credentials(me.id)
        assert isinstance(held, types.MemberCredentials)
        assert held.member_id == me.id
        assert endpoint.id in [e.id for e in held.webhook_endpoints]
        assert app.id in [c.id for c in held.oauth_clients]

        # An admin hands them over (here to the same member): bound to the member, no credential.
        moved = client.webhook_endpoints.transfer(endpoint.id, member_id=me.id)
        assert (moved.member_id, moved.owner) == (me.id, None)
        assert client.oauth_clients.transfer(app.id, member_id=me.id).member_id == me.id
        actions = [e.action for e in client.audit_events.list(target_id=endpoint.id)]
        assert "webhook_endpoint.transferred" in actions
    finally:
        client.webhook_endpoints.delete(endpoint.id)
        client.oauth_clients.delete(app.id)
