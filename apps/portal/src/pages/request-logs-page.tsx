import { useCallback, useState } from 'react';
import type {
  PageMeta,
  PlatformClient,
  RequestLog,
  RequestLogMethod,
  RequestLogStatusClass,
} from '@platform/client';
import { formatDate } from '../api';
import {
  Breakable,
  FilterSelect,
  Pager,
  TableWrap,
  useListPage,
  type ListQuery,
} from '../components/list';
import { FailureNotice } from '../components/states';
import { PageHeading } from '../components/ui';
import { CREDENTIAL_LABELS, RequestLogDetail, TextFilters } from './request-log-detail';

/** Records over the SDK's types, so a class or method added to the API fails the type-check. */
const STATUS_CLASSES: Record<RequestLogStatusClass, string> = {
  '1xx': '1xx informational',
  '2xx': '2xx success',
  '3xx': '3xx redirect',
  '4xx': '4xx client error',
  '5xx': '5xx server error',
};
const METHODS: Record<RequestLogMethod, true> = {
  GET: true,
  POST: true,
  PATCH: true,
  PUT: true,
  DELETE: true,
  HEAD: true,
  OPTIONS: true,
};

const PER_PAGE = 25;
const FILTERS = [
  'source',
  'status_class',
  'method',
  'route',
  'credential_id',
  'created_at[gte]',
  'created_at[lt]',
] as const;
/** The portal's own calls are shown apart: an integration's requests unless asked. */
const SOURCES = [
  { value: 'portal', label: 'The portal’s own' },
  { value: 'api,portal', label: 'Both' },
];

/** The list's query (page and the URL's filters) as the API's parameters, newest first. */
function requestLogQuery(query: ListQuery) {
  return {
    page: query.page,
    per_page: query.per_page,
    sort: '-created_at' as const,
    ...(typeof query.source === 'string' && { source: query.source as 'api' | 'portal' }),
    ...(typeof query.status_class === 'string' && {
      status_class: query.status_class as RequestLogStatusClass,
    }),
    ...(typeof query.method === 'string' && { method: query.method as RequestLogMethod }),
    ...(typeof query.route === 'string' && { route: query.route }),
    ...(typeof query.credential_id === 'string' && { credential_id: query.credential_id }),
    ...(typeof query['created_at[gte]'] === 'string' && {
      'created_at[gte]': query['created_at[gte]'],
    }),
    ...(typeof query['created_at[lt]'] === 'string' && {
      'created_at[lt]': query['created_at[lt]'],
    }),
  };
}

/**
 * The organization's API requests (admins and developers: request_logs:read), newest first,
 * filtered by status class, method, route template, credential and time, and paged; the filters
 * and the page are in the URL, so a filtered view can be shared or reloaded. A row opens its
 * detail (with the path requested) in a dialog.
 */
export function RequestLogsPage({ client }: { client: PlatformClient }) {
  const fetchPage = useCallback(
    (query: ListQuery) => client.requestLogs.list(requestLogQuery(query)),
    [client],
  );
  const list = useListPage(fetchPage, { filters: FILTERS, perPage: PER_PAGE });
  const rows = list.rows;
  const filtered = FILTERS.some((f) => list.filters[f]);
  const [open, setOpen] = useState<RequestLog | null>(null);

  return (
    <>
      <PageHeading>Request logs</PageHeading>
      <p>
        Your organization’s API requests of the last days, newest first: route, status, time taken
        and the token or app that called; open a request for its path and ids. Bodies, query values
        and secrets are never recorded.
      </p>
      {list.failure ? (
        <FailureNotice failure={list.failure} onRetry={() => void list.reload()} />
      ) : null}
      <div className="filters">
        <FilterSelect
          id="request-source"
          label="Requests"
          value={list.filters.source ?? ''}
          onChange={(source) => list.update({ source })}
          all="Your integrations’ (API)"
          choices={SOURCES}
        />
        <FilterSelect
          id="request-status-class"
          label="Status"
          value={list.filters.status_class ?? ''}
          onChange={(status_class) => list.update({ status_class })}
          all="All statuses"
          choices={Object.entries(STATUS_CLASSES).map(([value, label]) => ({ value, label }))}
        />
        <FilterSelect
          id="request-method"
          label="Method"
          value={list.filters.method ?? ''}
          onChange={(method) => list.update({ method })}
          all="All methods"
          choices={Object.keys(METHODS)}
        />
        <TextFilters filters={list.filters} onApply={(values) => list.update({ ...values })} />
      </div>
      {rows === null ? (
        list.failure ? null : (
          <p>Loading…</p>
        )
      ) : rows.length === 0 ? (
        <p role="status">No requests{filtered ? ' match these filters' : ' yet'}.</p>
      ) : (
        <RequestTable rows={rows} meta={list.meta} onOpen={setOpen} />
      )}
      {list.meta ? (
        <Pager
          meta={list.meta}
          noun="requests"
          label="Request log pages"
          onPage={(page) => list.update({ page })}
        />
      ) : null}
      {open ? <RequestLogDetail entry={open} onClose={() => setOpen(null)} /> : null}
    </>
  );
}

function RequestTable({
  rows,
  meta,
  onOpen,
}: {
  rows: RequestLog[];
  meta: PageMeta | null;
  onOpen: (entry: RequestLog) => void;
}) {
  return (
    <TableWrap label="Request log table">
      <table className="stacking">
        <caption className="visually-hidden">
          Requests, page {meta?.page ?? 1} of {meta?.total_pages ?? 1}
        </caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Request</th>
            <th scope="col">Status</th>
            <th scope="col">Time</th>
            <th scope="col">Caller</th>
            <th scope="col">Request id</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((entry) => (
            <tr key={entry.id}>
              <td data-label="When">{formatDate(entry.created_at)}</td>
              <th scope="row" data-label="Request">
                <button
                  type="button"
                  className="rlog-open"
                  aria-haspopup="dialog"
                  onClick={() => onOpen(entry)}
                >
                  <code>
                    {entry.method} <Breakable text={entry.route} />
                  </code>
                  <span className="visually-hidden">, details</span>
                </button>
              </th>
              <td data-label="Status">
                {entry.status}
                {entry.error_code ? (
                  <>
                    {' '}
                    <code>{entry.error_code}</code>
                  </>
                ) : null}
              </td>
              <td data-label="Time">{entry.latency_ms.toFixed(1)} ms</td>
              <td data-label="Caller">
                {CREDENTIAL_LABELS[entry.credential.type]} <code>{entry.credential.id}</code>
              </td>
              <td data-label="Request id">
                <code>{entry.request_id}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}
