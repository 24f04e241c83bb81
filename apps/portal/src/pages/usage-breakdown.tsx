import { Fragment, type ReactNode } from 'react';
import type { Usage } from '@platform/client';
import { TableWrap } from '../components/list';

type Counts = { requests: number; errors: number };

/** One breakdown: its top rows, then "Other …" when the rest is not empty. */
function BreakdownTable<T extends Counts>({
  id,
  title,
  column,
  rows,
  other,
  otherLabel,
  keyOf,
  cell,
}: {
  id: string;
  title: string;
  column: string;
  rows: T[];
  other: Counts;
  otherLabel: string;
  keyOf: (row: T) => string;
  cell: (row: T) => ReactNode;
}) {
  return (
    <section aria-labelledby={`${id}-heading`} className="usage-breakdown">
      <h3 id={`${id}-heading`}>{title}</h3>
      {rows.length === 0 ? (
        <p>No requests in this range.</p>
      ) : (
        <TableWrap label={`${title} table`}>
          <table>
            <caption className="visually-hidden">{title}, most requests first</caption>
            <thead>
              <tr>
                <th scope="col">{column}</th>
                <th scope="col" className="usage-num">
                  Requests
                </th>
                <th scope="col" className="usage-num">
                  Errors
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={keyOf(row)}>
                  <th scope="row">{cell(row)}</th>
                  <td className="usage-num">{row.requests}</td>
                  <td className="usage-num">{row.errors}</td>
                </tr>
              ))}
              {other.requests > 0 ? (
                <tr>
                  <th scope="row">{otherLabel}</th>
                  <td className="usage-num">{other.requests}</td>
                  <td className="usage-num">{other.errors}</td>
                </tr>
              ) : null}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  );
}

/** A route template that may wrap after each `/` only, never inside a segment. */
function Route({ method, route }: { method: string; route: string }) {
  const parts = route.split('/');
  return (
    <code className="usage-route">
      {method}{' '}
      {parts.map((part, i) => (
        <Fragment key={i}>
          {i > 0 ? (
            <>
              /<wbr />
            </>
          ) : null}
          {part}
        </Fragment>
      ))}
    </code>
  );
}

const CREDENTIAL_TYPES = { personal_access_token: 'token', oauth_access_token: 'OAuth app' };

/** The range's requests by token (or OAuth app), route and status: the top 10 and the rest. */
export function UsageBreakdowns({ breakdown }: { breakdown: Usage['breakdown'] }) {
  return (
    <section aria-labelledby="usage-breakdowns-heading" className="usage-breakdowns">
      <h2 id="usage-breakdowns-heading">Requests by token, route and status</h2>
      <div className="usage-breakdown-grid">
        <BreakdownTable
          id="usage-by-credential"
          title="By token or app"
          column="Token or app"
          rows={breakdown.credentials.data}
          other={breakdown.credentials.other}
          otherLabel="Other tokens and apps"
          keyOf={(row) => row.id}
          cell={(row) => (
            <>
              <span className="usage-name">
                {row.name ?? `Deleted ${CREDENTIAL_TYPES[row.type]}`}
              </span>{' '}
              <code className="usage-id">{row.id}</code>
            </>
          )}
        />
        <BreakdownTable
          id="usage-by-route"
          title="By route"
          column="Route"
          rows={breakdown.routes.data}
          other={breakdown.routes.other}
          otherLabel="Other routes"
          keyOf={(row) => `${row.method} ${row.route}`}
          cell={(row) => <Route method={row.method} route={row.route} />}
        />
        <BreakdownTable
          id="usage-by-status"
          title="By status"
          column="Status"
          rows={breakdown.statuses.data}
          other={breakdown.statuses.other}
          otherLabel="Other statuses"
          keyOf={(row) => String(row.status)}
          cell={(row) => row.status}
        />
      </div>
    </section>
  );
}
