import { useEffect, useState, type FormEvent, type RefObject } from 'react';
import type {
  Invitation,
  InvitationWithSecret,
  Member,
  MemberRole,
  PlatformClient,
} from '@platform/client';
import { describeError, formatDate } from '../api';
import {
  emptyListText,
  FilterSelect,
  Pager,
  SearchBox,
  TableWrap,
  type ListState,
} from '../components/list';

export const ROLE_CHOICES: readonly { value: MemberRole; label: string }[] = [
  { value: 'admin', label: 'Admin: everything, including members and the audit log' },
  { value: 'developer', label: 'Developer: tokens, webhooks, OAuth apps and data' },
  { value: 'viewer', label: 'Viewer: read only' },
];

/** The members by page, searched and filtered by role; admins change roles and remove. */
export function MemberList({
  list,
  headingRef,
  selfId,
  manage,
  onChangeRole,
  onRemove,
}: {
  list: ListState<Member>;
  headingRef: RefObject<HTMLHeadingElement | null>;
  selfId: string;
  manage: boolean;
  onChangeRole: (member: Member, next: MemberRole) => Promise<boolean>;
  onRemove: (member: Member) => void;
}) {
  return (
    <section aria-labelledby="member-list">
      <h2 id="member-list" tabIndex={-1} ref={headingRef}>
        Members
      </h2>
      <div className="filters">
        <SearchBox
          id="member-search"
          label="Search members"
          value={list.filters.q ?? ''}
          onSearch={(q) => list.update({ q })}
        />
        <FilterSelect
          id="member-role-filter"
          label="Filter by role"
          value={list.filters.role ?? ''}
          onChange={(role) => list.update({ role })}
          all="Every role"
          choices={ROLE_CHOICES.map((c) => c.value)}
        />
      </div>
      {list.rows === null ? (
        list.failure ? null : (
          <p>Loading…</p>
        )
      ) : list.rows.length === 0 ? (
        <p>{emptyListText('members', list.filters.q, Boolean(list.filters.role))}</p>
      ) : (
        <MemberTable
          members={list.rows}
          selfId={selfId}
          manage={manage}
          onChangeRole={onChangeRole}
          onRemove={onRemove}
        />
      )}
      {list.meta ? (
        <Pager
          meta={list.meta}
          noun="members"
          label="Member pages"
          onPage={(page) => list.update({ page })}
        />
      ) : null}
    </section>
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
  onChangeRole: (role: MemberRole) => Promise<boolean>;
  onRemove: () => void;
}) {
  const [role, setRole] = useState<MemberRole>(member.role);
  useEffect(() => setRole(member.role), [member.role]);
  // Cancelled or refused: the select shows the role the member has, not the one not saved.
  const change = () =>
    void onChangeRole(role).then((changed) => {
      if (!changed) setRole(member.role);
    });
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
            <button type="button" disabled={role === member.role} onClick={change}>
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

/** Inviting someone by email with a role; the link is shown by the page. */
export function InviteForm({
  client,
  onError,
  onMessage,
  onCreated,
}: {
  client: PlatformClient;
  onError: (error: string | null) => void;
  onMessage: (message: string | null) => void;
  onCreated: (invitation: InvitationWithSecret) => Promise<void>;
}) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<MemberRole>('developer');
  const [busy, setBusy] = useState(false);

  const invite = async (event: FormEvent) => {
    event.preventDefault();
    onError(null);
    onMessage(null);
    setBusy(true);
    try {
      const invitation = await client.invitations.create({ body: { email, role } });
      setEmail('');
      await onCreated(invitation);
    } catch (e) {
      onError(describeError(e));
    } finally {
      setBusy(false);
    }
  };

  return (
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
  );
}

/** The pending invitations by page, searched and filtered by role, each revocable. */
export function InvitationList({
  list,
  headingRef,
  onRevoke,
  onResend,
}: {
  list: ListState<Invitation>;
  headingRef: RefObject<HTMLHeadingElement | null>;
  onRevoke: (invitation: Invitation) => void;
  onResend: (invitation: Invitation) => void;
}) {
  return (
    <section aria-labelledby="invitation-list">
      <h2 id="invitation-list" tabIndex={-1} ref={headingRef}>
        Pending invitations
      </h2>
      <div className="filters">
        <SearchBox
          id="invitation-search"
          label="Search invitations"
          value={list.filters.q ?? ''}
          onSearch={(q) => list.update({ q })}
        />
        <FilterSelect
          id="invitation-role-filter"
          label="Filter invitations by role"
          value={list.filters.role ?? ''}
          onChange={(role) => list.update({ role })}
          all="Every role"
          choices={ROLE_CHOICES.map((c) => c.value)}
        />
      </div>
      {list.rows === null ? (
        list.failure ? null : (
          <p>Loading…</p>
        )
      ) : list.rows.length === 0 ? (
        <p>
          {list.filters.q || list.filters.role
            ? emptyListText('invitations', list.filters.q, Boolean(list.filters.role))
            : 'No pending invitations.'}
        </p>
      ) : (
        <InvitationTable invitations={list.rows} onRevoke={onRevoke} onResend={onResend} />
      )}
      {list.meta ? (
        <Pager
          meta={list.meta}
          noun="invitations"
          label="Invitation pages"
          onPage={(page) => list.update({ page })}
        />
      ) : null}
    </section>
  );
}

function MemberTable({
  members,
  selfId,
  manage,
  onChangeRole,
  onRemove,
}: {
  members: Member[];
  selfId: string;
  manage: boolean;
  onChangeRole: (member: Member, next: MemberRole) => Promise<boolean>;
  onRemove: (member: Member) => void;
}) {
  return (
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
              onChangeRole={(next) => onChangeRole(member, next)}
              onRemove={() => onRemove(member)}
            />
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

function InvitationTable({
  invitations,
  onRevoke,
  onResend,
}: {
  invitations: Invitation[];
  onRevoke: (invitation: Invitation) => void;
  onResend: (invitation: Invitation) => void;
}) {
  return (
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
                <button type="button" onClick={() => onResend(invitation)}>
                  Resend
                  <span className="visually-hidden"> invitation to {invitation.email}</span>
                </button>{' '}
                <button type="button" className="danger" onClick={() => onRevoke(invitation)}>
                  Revoke
                  <span className="visually-hidden"> invitation for {invitation.email}</span>
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}
