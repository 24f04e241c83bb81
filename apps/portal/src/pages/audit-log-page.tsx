import { useCallback, useEffect, useState } from 'react';
import type {
  AuditEvent,
  AuditEventAction,
  Member,
  PageMeta,
  PlatformClient,
} from '@platform/client';
import { formatDate } from '../api';
import { FilterSelect, Pager, TableWrap, useListPage, type ListQuery } from '../components/list';
import { FailureNotice } from '../components/states';
import { PageHeading } from '../components/ui';

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
  'export.download_link_created': true,
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

function show(value: unknown): string {
  if (value === null || value === undefined || value === '') return 'nothing';
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.length ? value.map(show).join(', ') : 'none';
  if (typeof value === 'object')
    return Object.entries(value as Record<string, unknown>)
      .map(([key, inner]) => `${key} ${show(inner)}`)
      .join(', ');
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : '—';
}

/**
 * `changes` in words, one line a field: "role changed from developer to viewer" for a change
 * (`[old, new]`), "name set to Gradebook" for a new value.
 */
export function Changes({ changes }: { changes: AuditEvent['changes'] }) {
  if (!changes || Object.keys(changes).length === 0) return <>—</>;
  return (
    <ul className="changes-list">
      {Object.entries(changes).map(([field, value]) => (
        <li key={field}>
          <span className="field-name">{field.replaceAll('_', ' ')}</span>{' '}
          {Array.isArray(value) && value.length === 2 ? (
            <>
              changed from <span className="before">{show(value[0])}</span> to{' '}
              <span className="after">{show(value[1])}</span>
            </>
          ) : (
            <>
              set to <span className="after">{show(value)}</span>
            </>
          )}
        </li>
      ))}
    </ul>
  );
}

/**
 * The organization's audit log (admins: audit_log:read), newest first, by action and page (both
 * in the URL). On a narrow screen each entry is a card (the table's cells stack with their
 * column's name).
 */
export function AuditLogPage({ client }: { client: PlatformClient }) {
  const [emails, setEmails] = useState<Map<string, string>>(new Map());
  const fetchPage = useCallback(
    (query: ListQuery) =>
      client.auditEvents.list({
        page: query.page,
        per_page: query.per_page,
        sort: '-created_at',
        ...(typeof query.action === 'string' && { action: query.action as AuditEventAction }),
      }),
    [client],
  );
  const list = useListPage(fetchPage, { filters: ['action'], perPage: PER_PAGE });
  const events = list.rows;
  const action = list.filters.action ?? '';

  // Members' emails make the "user" column readable; without members:read it shows ids.
  useEffect(() => {
    client.members.list({ per_page: 100 }).then(
      (result) => setEmails(new Map(result.data.map((m: Member) => [m.id, m.email]))),
      () => undefined,
    );
  }, [client]);

  return (
    <>
      <PageHeading>Audit log</PageHeading>
      <p>
        Every change to your organization’s credentials, members and settings, newest first. Changes
        never include a secret.
      </p>
      {list.failure ? (
        <FailureNotice failure={list.failure} onRetry={() => void list.reload()} />
      ) : null}
      <FilterSelect
        id="audit-action"
        label="Action"
        value={action}
        onChange={(action) => list.update({ action })}
        all="All actions"
        choices={ACTION_LIST}
      />
      {events === null ? (
        list.failure ? null : (
          <p>Loading…</p>
        )
      ) : events.length === 0 ? (
        <p role="status">No entries{action ? ` for ${action}` : ''}.</p>
      ) : (
        <AuditTable events={events} emails={emails} meta={list.meta} />
      )}
      {list.meta ? (
        <Pager
          meta={list.meta}
          noun="entries"
          label="Audit log pages"
          onPage={(page) => list.update({ page })}
        />
      ) : null}
    </>
  );
}

/** One row an entry; on a narrow screen each row is a card (cells stack with their labels). */
function AuditTable({
  events,
  emails,
  meta,
}: {
  events: AuditEvent[];
  emails: Map<string, string>;
  meta: PageMeta | null;
}) {
  return (
    <TableWrap label="Audit entry table">
      <table className="stacking">
        <caption className="visually-hidden">
          Audit entries, page {meta?.page ?? 1} of {meta?.total_pages ?? 1}
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
              <td data-label="When">{formatDate(event.created_at)}</td>
              <th scope="row" className="nowrap" data-label="Action">
                <code>{event.action}</code>
              </th>
              <td data-label="Actor">
                {ACTOR_LABELS[event.actor.type]}
                {event.actor.credential_id ? (
                  <>
                    {' '}
                    <code>{event.actor.credential_id}</code>
                  </>
                ) : null}
              </td>
              <td data-label="User">
                {event.actor.user_id
                  ? (emails.get(event.actor.user_id) ?? <code>{event.actor.user_id}</code>)
                  : '—'}
              </td>
              <td data-label="IP">{event.actor.ip ?? '—'}</td>
              <td data-label="Target">
                {event.target.type} <code>{event.target.id}</code>
              </td>
              <td className="changes" data-label="Changes">
                <Changes changes={event.changes} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}
