import { useCallback, useState } from 'react';
import type {
  AuditActorType,
  AuditEvent,
  AuditEventAction,
  PlatformClient,
} from '@platform/client';
import { describeError } from '../api';
import { FilterSelect, Pager, useListPage, type ListQuery } from '../components/list';
import { FailureNotice } from '../components/states';
import { Notice, PageHeading } from '../components/ui';
import { AUDIT_CSV_MAX_ROWS, auditCsv, saveFile } from './audit-csv';
import { DateRange } from './audit-date-range';
import { ACTOR_LABELS, AuditTable, show, useActorNames } from './audit-table';

/**
 * Every action as a record over the SDK's type, so an action added to the API fails the
 * portal's type-check until the filter offers it.
 */
const ACTIONS: Record<AuditEventAction, true> = {
  'token.created': true,
  'token.revoked': true,
  'oauth_client.created': true,
  'oauth_client.updated': true,
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
  'invitation.resent': true,
  'invitation.revoked': true,
  'invitation.accepted': true,
  'user.password_changed': true,
  'user.password_reset': true,
  'user.email_changed': true,
  'user.password_check_failed': true,
  'user.signed_out': true,
  'user.session_revoked': true,
  'export.created': true,
  'import.created': true,
  'export.download_link_created': true,
  'sandbox.created': true,
  'sandbox.reset': true,
  'sandbox.deleted': true,
};
const ACTION_LIST = Object.keys(ACTIONS) as AuditEventAction[];

const PER_PAGE = 25;

/** The list's filters, as the API and the URL name them. */
const FILTERS = ['action', 'actor_type', 'user_id', 'created_at[gte]', 'created_at[lt]'] as const;

/** The API's query for the filters set (the URL's values, passed on as they are). */
function apiFilters(filters: Record<string, string | number>) {
  return Object.fromEntries(
    FILTERS.flatMap((name) => (typeof filters[name] === 'string' ? [[name, filters[name]]] : [])),
  ) as { action?: AuditEventAction; actor_type?: AuditActorType; user_id?: `usr_${string}` };
}

/**
 * The organization's audit log (admins: audit_log:read), newest first, by action, actor, member,
 * date range and page (all in the URL), with a CSV file of what the filters select. On a narrow
 * screen each entry is a card (the table's cells stack with their column's name).
 */
export function AuditLogPage({ client }: { client: PlatformClient }) {
  const fetchPage = useCallback(
    (query: ListQuery) =>
      client.auditEvents.list({
        page: query.page,
        per_page: query.per_page,
        sort: '-created_at',
        ...apiFilters(query),
      }),
    [client],
  );
  const list = useListPage(fetchPage, { filters: FILTERS, perPage: PER_PAGE });
  const events = list.rows;
  const names = useActorNames(client, events);
  const filtered = Object.keys(list.filters).length > 0;

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
      <AuditFilters filters={list.filters} onChange={list.update} members={names.members} />
      <CsvExport client={client} filters={list.filters} names={names} />
      {events === null ? (
        list.failure ? null : (
          <p>Loading…</p>
        )
      ) : events.length === 0 ? (
        <p role="status">{filtered ? 'No entries match these filters.' : 'No entries yet.'}</p>
      ) : (
        <AuditTable events={events} names={names} meta={list.meta} />
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

/** Action, kind of actor, member and dates: each a control whose value lives in the URL. */
function AuditFilters({
  filters,
  onChange,
  members,
}: {
  filters: Record<string, string>;
  onChange: (changes: Record<string, string | null>) => void;
  members: readonly { value: string; label: string }[];
}) {
  return (
    <div className="filters audit-filters">
      <FilterSelect
        id="audit-action"
        label="Action"
        value={filters.action ?? ''}
        onChange={(action) => onChange({ action })}
        all="All actions"
        choices={ACTION_LIST}
      />
      <FilterSelect
        id="audit-actor-type"
        label="Acted through"
        value={filters.actor_type ?? ''}
        onChange={(value) => onChange({ actor_type: value })}
        all="Anything"
        choices={Object.entries(ACTOR_LABELS).map(([value, label]) => ({ value, label }))}
      />
      <FilterSelect
        id="audit-user"
        label="Member"
        value={filters.user_id ?? ''}
        onChange={(value) => onChange({ user_id: value })}
        all="Anyone"
        choices={
          filters.user_id && !members.some((m) => m.value === filters.user_id)
            ? [...members, { value: filters.user_id, label: filters.user_id }]
            : members
        }
      />
      <DateRange
        from={filters['created_at[gte]'] ?? null}
        until={filters['created_at[lt]'] ?? null}
        onChange={(gte, lt) => onChange({ 'created_at[gte]': gte, 'created_at[lt]': lt })}
      />
    </div>
  );
}

/**
 * "Download CSV": every entry the filters select, read page by page (100 a request) up to
 * AUDIT_CSV_MAX_ROWS, written in the browser; a capped file says so.
 */
function CsvExport({
  client,
  filters,
  names,
}: {
  client: PlatformClient;
  filters: Record<string, string>;
  names: ReturnType<typeof useActorNames>;
}) {
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const download = async () => {
    setBusy(true);
    setMessage(null);
    setError(null);
    try {
      const rows: AuditEvent[] = [];
      let total = 0;
      for (let page = 1; rows.length < AUDIT_CSV_MAX_ROWS; page++) {
        const found = await client.auditEvents.list({
          page,
          per_page: 100,
          sort: '-created_at',
          ...apiFilters(filters),
        });
        total = found.meta.total;
        rows.push(...found.data);
        if (found.data.length === 0 || page >= found.meta.total_pages) break;
      }
      const kept = rows.slice(0, AUDIT_CSV_MAX_ROWS);
      await names.resolve(kept);
      saveFile(
        `audit-log-${new Date().toISOString().slice(0, 10)}.csv`,
        auditCsv(kept, names, show),
        'text/csv',
      );
      setMessage(
        total > kept.length
          ? `The file holds the newest ${kept.length.toLocaleString()} of ${total.toLocaleString()} entries (at most ${AUDIT_CSV_MAX_ROWS.toLocaleString()} a file). Narrow the dates to export the rest.`
          : `The file holds all ${kept.length.toLocaleString()} ${kept.length === 1 ? 'entry' : 'entries'} these filters select.`,
      );
    } catch (e) {
      setError(describeError(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="audit-export">
      <button type="button" onClick={() => void download()} disabled={busy}>
        {busy ? 'Preparing CSV…' : 'Download CSV'}
      </button>
      {error ? <Notice kind="error">{error}</Notice> : null}
      {message ? <Notice kind="success">{message}</Notice> : null}
    </div>
  );
}
