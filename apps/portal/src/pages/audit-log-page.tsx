import { useEffect, useState } from 'react';
import type {
  AuditEvent,
  AuditEventAction,
  Member,
  PageMeta,
  PlatformClient,
} from '@platform/client';
import { describeError, formatDate } from '../api';
import { Notice, PageHeading } from '../components/ui';

/**
 * Every action as a record over the SDK's type, so an action added to the API fails the
 * portal's type-check until the filter offers it.
 */
const ACTIONS: Record<AuditEventAction, true> = {
  'token.created': true,
  'token.revoked': true,
  'oauth_client.created': true,
  'oauth_client.secret_rotated': true,
  'oauth_client.deleted': true,
  'webhook_endpoint.created': true,
  'webhook_endpoint.updated': true,
  'webhook_endpoint.deleted': true,
  'webhook_endpoint.secret_rotated': true,
  'webhook_endpoint.transferred': true,
  'oauth_client.transferred': true,
  'oauth_client.approved': true,
  'oauth_token.revoked': true,
  'organization.updated': true,
  'organization.plan_changed': true,
  'organization.rate_limit_changed': true,
  'member.added': true,
  'member.role_changed': true,
  'member.updated': true,
  'member.removed': true,
  'invitation.created': true,
  'invitation.revoked': true,
  'invitation.accepted': true,
  'user.password_changed': true,
  'user.password_check_failed': true,
  'user.signed_out': true,
  'export.created': true,
};
const ACTION_LIST = Object.keys(ACTIONS) as AuditEventAction[];

const PER_PAGE = 25;

const ACTOR_LABELS: Record<AuditEvent['actor']['type'], string> = {
  personal_access_token: 'Personal access token',
  oauth_access_token: 'OAuth access token',
  operator: 'Operator (CLI)',
  invitation: 'Invitation link',
  sign_in: 'Sign-in page',
  oauth_client: 'OAuth client',
};

/** `changes` in one line: `field: before → after` for a change, `field: value` for a new value. */
export function summariseChanges(changes: AuditEvent['changes']): string {
  if (!changes || Object.keys(changes).length === 0) return '—';
  const show = (value: unknown) =>
    value === null || value === undefined
      ? '—'
      : typeof value === 'string'
        ? value
        : JSON.stringify(value);
  return Object.entries(changes)
    .map(([field, value]) =>
      Array.isArray(value) && value.length === 2
        ? `${field}: ${show(value[0])} → ${show(value[1])}`
        : `${field}: ${show(value)}`,
    )
    .join('; ');
}

/** The organization's audit log (admins: audit_log:read), newest first, by action and page. */
export function AuditLogPage({ client }: { client: PlatformClient }) {
  const [action, setAction] = useState<AuditEventAction | ''>('');
  const [page, setPage] = useState(1);
  const [events, setEvents] = useState<AuditEvent[] | null>(null);
  const [meta, setMeta] = useState<PageMeta | null>(null);
  const [emails, setEmails] = useState<Map<string, string>>(new Map());
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let current = true;
    setError(null);
    client.auditEvents
      .list({ per_page: PER_PAGE, page, sort: '-created_at', ...(action && { action }) })
      .then(
        (result) => {
          if (!current) return;
          setEvents(result.data);
          setMeta(result.meta);
        },
        (e: unknown) => current && setError(describeError(e)),
      );
    return () => {
      current = false;
    };
  }, [client, action, page]);

  // Members' emails make the "user" column readable; without members:read it shows ids.
  useEffect(() => {
    client.members.list({ per_page: 100 }).then(
      (result) => setEmails(new Map(result.data.map((m: Member) => [m.id, m.email]))),
      () => undefined,
    );
  }, [client]);

  const totalPages = meta?.total_pages ?? 1;
  return (
    <>
      <PageHeading>Audit log</PageHeading>
      <p>
        Every change to your organization’s credentials, members and settings, newest first. Changes
        never include a secret.
      </p>
      {error ? <Notice kind="error">{error}</Notice> : null}
      <div className="field">
        <label htmlFor="audit-action">Action</label>
        <select
          id="audit-action"
          value={action}
          onChange={(e) => {
            setAction(e.target.value as AuditEventAction | '');
            setPage(1);
          }}
        >
          <option value="">All actions</option>
          {ACTION_LIST.map((a) => (
            <option key={a} value={a}>
              {a}
            </option>
          ))}
        </select>
      </div>
      {events === null ? (
        error ? null : (
          <p>Loading…</p>
        )
      ) : events.length === 0 ? (
        <p role="status">No entries{action ? ` for ${action}` : ''}.</p>
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">
              Audit entries, page {meta?.page ?? 1} of {totalPages}
            </caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Action</th>
                <th scope="col">Actor</th>
                <th scope="col">User</th>
                <th scope="col">IP</th>
                <th scope="col">Target</th>
                <th scope="col">Changes</th>
              </tr>
            </thead>
            <tbody>
              {events.map((event) => (
                <tr key={event.id}>
                  <td>{formatDate(event.created_at)}</td>
                  <th scope="row" className="nowrap">
                    <code>{event.action}</code>
                  </th>
                  <td>
                    {ACTOR_LABELS[event.actor.type]}
                    {event.actor.credential_id ? (
                      <>
                        {' '}
                        <code>{event.actor.credential_id}</code>
                      </>
                    ) : null}
                  </td>
                  <td>
                    {event.actor.user_id
                      ? (emails.get(event.actor.user_id) ?? <code>{event.actor.user_id}</code>)
                      : '—'}
                  </td>
                  <td>{event.actor.ip ?? '—'}</td>
                  <td>
                    {event.target.type} <code>{event.target.id}</code>
                  </td>
                  <td className="changes">{summariseChanges(event.changes)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {meta && totalPages > 1 ? (
        <nav aria-label="Audit log pages" className="pager">
          <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
            Newer
          </button>
          <span>
            Page {meta.page} of {totalPages} ({meta.total} entries)
          </span>
          <button type="button" disabled={page >= totalPages} onClick={() => setPage(page + 1)}>
            Older
          </button>
        </nav>
      ) : meta ? (
        <p className="hint">{meta.total} entries.</p>
      ) : null}
    </>
  );
}
