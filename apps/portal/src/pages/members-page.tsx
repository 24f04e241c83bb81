import { useCallback, useRef, useState, type RefObject } from 'react';
import type {
  Invitation,
  InvitationWithSecret,
  Member,
  MemberRole,
  PlatformClient,
} from '@platform/client';
import { describeError, formatDate } from '../api';
import { useConfirm } from '../components/dialog';
import { useListPage, type ListQuery } from '../components/list';
import { FailureNotice } from '../components/states';
import { Notice, PageHeading, SecretPanel } from '../components/ui';
import { InvitationList, InviteForm, MemberList } from './member-lists';
import type { Abilities } from '../roles';

/** The two lists; the invitations only for those who manage members (others get none). */
function useMemberLists(client: PlatformClient, manage: boolean) {
  const fetchMembers = useCallback(
    (query: ListQuery) =>
      client.members.list({
        page: query.page,
        per_page: query.per_page,
        sort: 'email',
        ...(typeof query.q === 'string' && { q: query.q }),
        ...(typeof query.role === 'string' && { role: query.role as MemberRole }),
      }),
    [client],
  );
  const fetchInvitations = useCallback(
    (query: ListQuery) =>
      manage
        ? client.invitations.list({
            page: query.page,
            per_page: query.per_page,
            sort: '-created_at',
            ...(typeof query.q === 'string' && { q: query.q }),
            ...(typeof query.role === 'string' && { role: query.role as MemberRole }),
          })
        : Promise.resolve({
            data: [] as Invitation[],
            meta: {
              page: 1,
              per_page: query.per_page,
              total: 0,
              total_pages: 0,
              total_exact: true,
            },
          }),
    [client, manage],
  );
  const memberList = useListPage(fetchMembers, { filters: ['q', 'role'] });
  const invitationList = useListPage(fetchInvitations, {
    prefix: 'invitations_',
    filters: ['q', 'role'],
  });
  const reloadMembers = memberList.reload;
  const reloadInvitations = invitationList.reload;
  const load = useCallback(
    () => Promise.all([reloadMembers(), reloadInvitations()]).then(() => undefined),
    [reloadMembers, reloadInvitations],
  );
  return { memberList, invitationList, load };
}

/**
 * The page's error and success notices, and `act`: does `work`, reloads, says what was done and
 * puts focus on `then` (or where it was).
 */
function useNotices(load: () => Promise<void>) {
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const act = async (
    work: () => Promise<string>,
    then?: RefObject<HTMLElement | null> | string,
  ) => {
    setError(null);
    setMessage(null);
    try {
      const done = await work();
      await load();
      setMessage(done);
      if (typeof then === 'string') document.getElementById(then)?.focus();
      else then?.current?.focus();
      return true;
    } catch (e) {
      setError(describeError(e));
      return false;
    }
  };
  return { error, setError, message, setMessage, act };
}

/** The page's notices, lists and actions; each action confirms, acts, reloads and says so. */
function useMembers(client: PlatformClient, manage: boolean) {
  const [created, setCreated] = useState<InvitationWithSecret | null>(null);

  const [confirm, dialog] = useConfirm();
  const memberHeading = useRef<HTMLHeadingElement>(null);
  const invitationHeading = useRef<HTMLHeadingElement>(null);
  const { memberList, invitationList, load } = useMemberLists(client, manage);
  const { error, setError, message, setMessage, act } = useNotices(load);

  /** Whether the role was changed: false when cancelled or refused (the row shows the saved role). */
  const changeRole = async (member: Member, next: MemberRole): Promise<boolean> => {
    const lower =
      ['admin', 'developer', 'viewer'].indexOf(next) >
      ['admin', 'developer', 'viewer'].indexOf(member.role);
    if (lower) {
      let listed: string;
      try {
        listed = await holdings(client, member);
      } catch (e) {
        setError(describeError(e));
        return false;
      }
      const ok = await confirm(roleConfirmation(member, next, listed));
      if (!ok) return false;
    }
    return act(async () => {
      await client.members.update({ params: { id: member.id }, body: { role: next } });
      return `${member.email} is now ${next === 'admin' ? 'an' : 'a'} ${next}.`;
    }, `role-${member.id}`);
  };

  const remove = async (member: Member) => {
    let listed: string;
    try {
      listed = await holdings(client, member);
    } catch (e) {
      setError(describeError(e));
      return;
    }
    const ok = await confirm(removeConfirmation(member, listed));
    if (!ok) return;
    void act(async () => {
      await client.members.delete({ params: { id: member.id } });
      return `${member.email} removed.`;
    }, memberHeading);
  };

  const revoke = async (invitation: Invitation) => {
    const ok = await confirm(revokeConfirmation(invitation));
    if (!ok) return;
    void act(async () => {
      await client.invitations.delete({ params: { id: invitation.id } });
      if (created?.id === invitation.id) setCreated(null);
      return `Invitation for ${invitation.email} revoked.`;
    }, invitationHeading);
  };
  const resend = (invitation: Invitation) =>
    void act(() => resendInvitation(client, invitation, setCreated), invitationHeading);
  return {
    dialog,
    error,
    setError,
    message,
    setMessage,
    created,
    setCreated,
    memberList,
    invitationList,
    load,
    memberHeading,
    invitationHeading,
    changeRole,
    remove,
    revoke,
    resend,
  };
}

/** A new link (the old one stops working): mailed again, or shown once without mail. */
async function resendInvitation(
  client: PlatformClient,
  invitation: Invitation,
  setCreated: (invitation: InvitationWithSecret) => void,
): Promise<string> {
  const renewed = await client.invitations.resend({ params: { id: invitation.id } });
  setCreated(renewed);
  return renewed.delivery === 'email'
    ? `Invitation sent to ${invitation.email} again.`
    : `Invitation for ${invitation.email} renewed: its new link is above.`;
}

/**
 * Members and invitations. Everyone who may read members sees the list; admins (members:write)
 * also change roles, remove members, invite and revoke invitations. The server decides: a
 * refusal (403, or 409 for the last admin) is shown with its own explanation.
 */
export function MembersPage({
  client,
  abilities,
  selfId,
}: {
  client: PlatformClient;
  abilities: Abilities;
  selfId: string;
}) {
  const manage = abilities.can('members:write');
  const {
    dialog,
    error,
    setError,
    message,
    setMessage,
    created,
    setCreated,
    memberList,
    invitationList,
    load,
    memberHeading,
    invitationHeading,
    changeRole,
    remove,
    revoke,
    resend,
  } = useMembers(client, manage);
  return (
    <>
      {dialog}
      <PageHeading>Members</PageHeading>
      <p>
        The people of your organization. A member’s role caps what every token acting for them may
        do, from their next request on.
      </p>
      {error ? <Notice kind="error">{error}</Notice> : null}
      {memberList.failure ? (
        <FailureNotice failure={memberList.failure} onRetry={() => void load()} />
      ) : invitationList.failure ? (
        <FailureNotice failure={invitationList.failure} onRetry={() => void load()} />
      ) : null}
      {message ? <Notice kind="success">{message}</Notice> : null}
      {created ? <InvitationLink invitation={created} /> : null}
      <MemberList
        list={memberList}
        headingRef={memberHeading}
        selfId={selfId}
        manage={manage}
        onChangeRole={changeRole}
        onRemove={(member) => void remove(member)}
      />
      {manage ? (
        <>
          <InviteForm
            client={client}
            onError={setError}
            onMessage={setMessage}
            onCreated={async (invitation) => {
              setCreated(invitation);
              await load();
            }}
          />
          <InvitationList
            list={invitationList}
            headingRef={invitationHeading}
            onRevoke={(invitation) => void revoke(invitation)}
            onResend={resend}
          />
        </>
      ) : null}
    </>
  );
}

/** What acts for the member, in words: what removing them stops, or demoting narrows. */
/**
 * An invitation just created: mailed to the invitee (a server with mail), or its link shown once
 * for the admin to pass on (a server without mail, in development).
 */
function InvitationLink({ invitation }: { invitation: InvitationWithSecret }) {
  if (invitation.accept_url === null) {
    return (
      <section className="secret" aria-label="Invitation sent">
        <h2>Invitation for {invitation.email} sent</h2>
        <p role="status">
          We emailed {invitation.email} a link that works once, until{' '}
          {formatDate(invitation.expires_at)}, to choose a password and join as {invitation.role}.
          Only they can use it.
        </p>
      </section>
    );
  }
  return (
    <SecretPanel
      title={`Invitation for ${invitation.email} created`}
      secret={invitation.accept_url}
      label="Invitation link"
    >
      <p>
        This server sends no mail (development): send the link to {invitation.email} yourself. It
        works once, until {formatDate(invitation.expires_at)}, and lets them choose a password and
        join as {invitation.role}.
      </p>
    </SecretPanel>
  );
}

async function holdings(client: PlatformClient, member: Member): Promise<string> {
  const held = await client.members.credentials({ params: { id: member.id } });
  const named = (what: string, names: string[]) =>
    names.length
      ? [`${names.length} ${what}${names.length === 1 ? '' : 's'} (${names.join(', ')})`]
      : [];
  const parts = [
    ...named(
      'personal access token',
      held.personal_access_tokens.map((t) => t.name),
    ),
    ...named(
      'OAuth app',
      held.oauth_clients.map((c) => c.name),
    ),
    ...named(
      'approved app',
      held.authorized_apps.map((a) => a.name),
    ),
    ...named(
      'webhook endpoint',
      held.webhook_endpoints.map((e) => e.url),
    ),
    ...named(
      'pending invitation',
      held.invitations.map((i) => i.email),
    ),
    ...(held.sessions
      ? [`${held.sessions} signed-in browser${held.sessions === 1 ? '' : 's'}`]
      : []),
  ];
  return parts.length ? parts.join('; ') : 'nothing else';
}

/** Demoting says what acts for the member and is cut to the new role. */
function roleConfirmation(member: Member, next: MemberRole, listed: string) {
  return {
    title: `Make ${member.email} ${next === 'admin' ? 'an' : 'a'} ${next}?`,
    body: (
      <p>
        What acts for <strong className="name">{member.email}</strong> is cut to that role: {listed}
        . Transfer an endpoint or app to another member first to keep it as it is.
      </p>
    ),
    confirm: `Make ${next}`,
  };
}

/** Removing says what stops and wants the email typed. */
function removeConfirmation(member: Member, listed: string) {
  return {
    title: 'Remove this member?',
    body: (
      <p>
        <strong className="name">{member.email}</strong> leaves the organization. This stops, at
        once: {listed}. Transfer an endpoint or app to another member first to keep it.
      </p>
    ),
    confirm: 'Remove member',
    typeToConfirm: member.email,
  };
}

function revokeConfirmation(invitation: Invitation) {
  return {
    title: 'Revoke this invitation?',
    body: (
      <p>
        The invitation for <strong className="name">{invitation.email}</strong> is revoked: its link
        stops working.
      </p>
    ),
    confirm: 'Revoke invitation',
  };
}
