import { useCallback, useEffect, useRef, useState, type FormEvent, type RefObject } from 'react';
import type {
  Invitation,
  InvitationWithSecret,
  Member,
  MemberRole,
  PlatformClient,
} from '@platform/client';
import { describeError, formatDate } from '../api';
import { useConfirm } from '../components/dialog';
import {
  FilterSelect,
  emptyListText,
  Pager,
  SearchBox,
  TableWrap,
  useListPage,
  type ListQuery,
} from '../components/list';
import { FailureNotice } from '../components/states';
import { Notice, PageHeading, SecretPanel } from '../components/ui';
import type { Abilities } from '../roles';

export const ROLE_CHOICES: readonly { value: MemberRole; label: string }[] = [
  { value: 'admin', label: 'Admin: everything, including members and the audit log' },
  { value: 'developer', label: 'Developer: tokens, webhooks, OAuth apps and data' },
  { value: 'viewer', label: 'Viewer: read only' },
];

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
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [created, setCreated] = useState<InvitationWithSecret | null>(null);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<MemberRole>('developer');
  const [busy, setBusy] = useState(false);

  const [confirm, dialog] = useConfirm();
  const memberHeading = useRef<HTMLHeadingElement>(null);
  const invitationHeading = useRef<HTMLHeadingElement>(null);
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
  const members = memberList.rows;
  const invitations = invitationList.rows;
  const reloadMembers = memberList.reload;
  const reloadInvitations = invitationList.reload;
  const load = useCallback(
    () => Promise.all([reloadMembers(), reloadInvitations()]).then(() => undefined),
    [reloadMembers, reloadInvitations],
  );

  /** Does `work`, reloads, says what was done and puts focus on `then` (or where it was). */
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
    } catch (e) {
      setError(describeError(e));
    }
  };

  const invite = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setMessage(null);
    setBusy(true);
    try {
      const invitation = await client.invitations.create({ body: { email, role } });
      setCreated(invitation);
      setEmail('');
      await load();
    } catch (e) {
      setError(describeError(e));
    } finally {
      setBusy(false);
    }
  };

  /** What acts for the member, in words: what removing them stops, or demoting narrows. */
  const holdings = async (member: Member): Promise<string> => {
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
  };

  const changeRole = async (member: Member, next: MemberRole) => {
    const lower =
      ['admin', 'developer', 'viewer'].indexOf(next) >
      ['admin', 'developer', 'viewer'].indexOf(member.role);
    if (lower) {
      let listed: string;
      try {
        listed = await holdings(member);
      } catch (e) {
        setError(describeError(e));
        return;
      }
      const ok = await confirm({
        title: `Make ${member.email} ${next === 'admin' ? 'an' : 'a'} ${next}?`,
        body: (
          <p>
            What acts for <strong className="name">{member.email}</strong> is cut to that role:{' '}
            {listed}. Transfer an endpoint or app to another member first to keep it as it is.
          </p>
        ),
        confirm: `Make ${next}`,
      });
      if (!ok) return;
    }
    await act(async () => {
      await client.members.update({ params: { id: member.id }, body: { role: next } });
      return `${member.email} is now ${next === 'admin' ? 'an' : 'a'} ${next}.`;
    }, `role-${member.id}`);
  };

  const remove = async (member: Member) => {
    let listed: string;
    try {
      listed = await holdings(member);
    } catch (e) {
      setError(describeError(e));
      return;
    }
    const ok = await confirm({
      title: 'Remove this member?',
      body: (
        <p>
          <strong className="name">{member.email}</strong> leaves the organization. This stops, at
          once: {listed}. Transfer an endpoint or app to another member first to keep it.
        </p>
      ),
      confirm: 'Remove member',
      typeToConfirm: member.email,
    });
    if (!ok) return;
    void act(async () => {
      await client.members.delete({ params: { id: member.id } });
      return `${member.email} removed.`;
    }, memberHeading);
  };

  const revoke = async (invitation: Invitation) => {
    const ok = await confirm({
      title: 'Revoke this invitation?',
      body: (
        <p>
          The invitation for <strong className="name">{invitation.email}</strong> is revoked: its
          link stops working.
        </p>
      ),
      confirm: 'Revoke invitation',
    });
    if (!ok) return;
    void act(async () => {
      await client.invitations.delete({ params: { id: invitation.id } });
      if (created?.id === invitation.id) setCreated(null);
      return `Invitation for ${invitation.email} revoked.`;
    }, invitationHeading);
  };

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
      {created ? (
        <SecretPanel
          title={`Invitation for ${created.email} created`}
          secret={created.accept_url}
          label="Invitation link"
        >
          <p>
            Send it to {created.email}: it works once, until {formatDate(created.expires_at)}, and
            lets them choose a password and join as {created.role}.
          </p>
        </SecretPanel>
      ) : null}

      <section aria-labelledby="member-list">
        <h2 id="member-list" tabIndex={-1} ref={memberHeading}>
          Members
        </h2>
        <div className="filters">
          <SearchBox
            id="member-search"
            label="Search members"
            value={memberList.filters.q ?? ''}
            onSearch={(q) => memberList.update({ q })}
          />
          <FilterSelect
            id="member-role-filter"
            label="Filter by role"
            value={memberList.filters.role ?? ''}
            onChange={(role) => memberList.update({ role })}
            all="Every role"
            choices={ROLE_CHOICES.map((c) => c.value)}
          />
        </div>
        {members === null ? (
          memberList.failure ? null : (
            <p>Loading…</p>
          )
        ) : members.length === 0 ? (
          <p>{emptyListText('members', memberList.filters.q, Boolean(memberList.filters.role))}</p>
        ) : (
          <TableWrap label="Member table">
            <table>
              <thead>
                <tr>
                  <th scope="col">Email</th>
                  <th scope="col">Name</th>
                  <th scope="col">Role</th>
                  <th scope="col">Joined</th>
                  {manage ? (
                    <th scope="col">
                      <span className="visually-hidden">Actions</span>
                    </th>
                  ) : null}
                </tr>
              </thead>
              <tbody>
                {members.map((member) => (
                  <MemberRow
                    key={member.id}
                    member={member}
                    self={member.id === selfId}
                    manage={manage}
                    onChangeRole={(next) => void changeRole(member, next)}
                    onRemove={() => void remove(member)}
                  />
                ))}
              </tbody>
            </table>
          </TableWrap>
        )}
        {memberList.meta ? (
          <Pager
            meta={memberList.meta}
            noun="members"
            label="Member pages"
            onPage={(page) => memberList.update({ page })}
          />
        ) : null}
      </section>

      {manage ? (
        <>
          <section aria-labelledby="invite">
            <h2 id="invite">Invite a member</h2>
            <form onSubmit={(e) => void invite(e)} className="stack">
              <div className="field">
                <label htmlFor="invite-email">Email</label>
                <input
                  id="invite-email"
                  type="email"
                  required
                  autoComplete="off"
                  value={email}
                  onChange={(e) => setEmail(e.target.value)}
                />
              </div>
              <div className="field">
                <label htmlFor="invite-role">Role</label>
                <select
                  id="invite-role"
                  value={role}
                  onChange={(e) => setRole(e.target.value as MemberRole)}
                >
                  {ROLE_CHOICES.map((c) => (
                    <option key={c.value} value={c.value}>
                      {c.label}
                    </option>
                  ))}
                </select>
              </div>
              <button type="submit" disabled={busy}>
                Create invitation
              </button>
            </form>
          </section>

          <section aria-labelledby="invitation-list">
            <h2 id="invitation-list" tabIndex={-1} ref={invitationHeading}>
              Pending invitations
            </h2>
            <div className="filters">
              <SearchBox
                id="invitation-search"
                label="Search invitations"
                value={invitationList.filters.q ?? ''}
                onSearch={(q) => invitationList.update({ q })}
              />
              <FilterSelect
                id="invitation-role-filter"
                label="Filter invitations by role"
                value={invitationList.filters.role ?? ''}
                onChange={(role) => invitationList.update({ role })}
                all="Every role"
                choices={ROLE_CHOICES.map((c) => c.value)}
              />
            </div>
            {invitations === null ? (
              invitationList.failure ? null : (
                <p>Loading…</p>
              )
            ) : invitations.length === 0 ? (
              <p>
                {invitationList.filters.q || invitationList.filters.role
                  ? emptyListText(
                      'invitations',
                      invitationList.filters.q,
                      Boolean(invitationList.filters.role),
                    )
                  : 'No pending invitations.'}
              </p>
            ) : (
              <TableWrap label="Invitation table">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Email</th>
                      <th scope="col">Role</th>
                      <th scope="col">Sent</th>
                      <th scope="col">Expires</th>
                      <th scope="col">
                        <span className="visually-hidden">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {invitations.map((invitation) => (
                      <tr key={invitation.id}>
                        <th scope="row">{invitation.email}</th>
                        <td>{invitation.role}</td>
                        <td>{formatDate(invitation.created_at)}</td>
                        <td>{formatDate(invitation.expires_at)}</td>
                        <td>
                          <button
                            type="button"
                            className="danger"
                            onClick={() => void revoke(invitation)}
                          >
                            Revoke
                            <span className="visually-hidden">
                              {' '}
                              invitation for {invitation.email}
                            </span>
                          </button>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
            )}
            {invitationList.meta ? (
              <Pager
                meta={invitationList.meta}
                noun="invitations"
                label="Invitation pages"
                onPage={(page) => invitationList.update({ page })}
              />
            ) : null}
          </section>
        </>
      ) : null}
    </>
  );
}

/** A role is changed with its own button, not on selection, so choosing is never acting. */
function MemberRow({
  member,
  self,
  manage,
  onChangeRole,
  onRemove,
}: {
  member: Member;
  self: boolean;
  manage: boolean;
  onChangeRole: (role: MemberRole) => void;
  onRemove: () => void;
}) {
  const [role, setRole] = useState<MemberRole>(member.role);
  useEffect(() => setRole(member.role), [member.role]);
  const selectId = `role-${member.id}`;
  return (
    <tr>
      <th scope="row">
        {member.email}
        {self ? <span className="hint"> (you)</span> : null}
      </th>
      <td>{member.name ?? '—'}</td>
      <td>
        {manage ? (
          <div className="inline-form">
            <label htmlFor={selectId} className="visually-hidden">
              Role of {member.email}
            </label>
            <select
              id={selectId}
              value={role}
              onChange={(e) => setRole(e.target.value as MemberRole)}
            >
              {ROLE_CHOICES.map((c) => (
                <option key={c.value} value={c.value}>
                  {c.value}
                </option>
              ))}
            </select>
            <button
              type="button"
              disabled={role === member.role}
              onClick={() => onChangeRole(role)}
            >
              Change role<span className="visually-hidden"> of {member.email}</span>
            </button>
          </div>
        ) : (
          member.role
        )}
      </td>
      <td>{formatDate(member.created_at)}</td>
      {manage ? (
        <td>
          <button type="button" className="danger" onClick={onRemove}>
            Remove<span className="visually-hidden"> member {member.email}</span>
          </button>
        </td>
      ) : null}
    </tr>
  );
}
