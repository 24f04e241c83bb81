import { type FormEvent, useState } from 'react';
import type { RequestLog } from '@platform/client';
import { InfoDialog } from '../components/dialog';

export const CREDENTIAL_LABELS: Record<RequestLog['credential']['type'], string> = {
  personal_access_token: 'Token',
  oauth_access_token: 'OAuth app',
};

/** `2026-12-02T13:05:00.000Z` as a `datetime-local` value in the browser's time zone. */
function toLocalInput(iso: string | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(
    date.getHours(),
  )}:${pad(date.getMinutes())}`;
}

/** A `datetime-local` value (the browser's time zone) as the API's UTC timestamp. */
function fromLocalInput(value: string): string | null {
  if (!value) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

export interface TextFilterValues {
  route: string | null;
  credential_id: string | null;
  'created_at[gte]': string | null;
  'created_at[lt]': string | null;
}

/**
 * The route, credential and time filters, typed and then applied together. The times are shown
 * in the browser's time zone and kept in the URL as the API's UTC `created_at[gte]` (from,
 * included) and `created_at[lt]` (until, excluded).
 */
export function TextFilters({
  filters,
  onApply,
}: {
  filters: Record<string, string>;
  onApply: (values: TextFilterValues) => void;
}) {
  const [route, setRoute] = useState(filters.route ?? '');
  const [credential, setCredential] = useState(filters.credential_id ?? '');
  const [from, setFrom] = useState(toLocalInput(filters['created_at[gte]']));
  const [until, setUntil] = useState(toLocalInput(filters['created_at[lt]']));

  function applyText(event: FormEvent) {
    event.preventDefault();
    onApply({
      route: route.trim() || null,
      credential_id: credential.trim() || null,
      'created_at[gte]': fromLocalInput(from),
      'created_at[lt]': fromLocalInput(until),
    });
  }

  return (
    <form className="filter-form" onSubmit={applyText}>
      <div className="field filter">
        <label htmlFor="request-route">Route</label>
        <input
          id="request-route"
          placeholder="/v1/students/:id"
          value={route}
          onChange={(e) => setRoute(e.target.value)}
        />
      </div>
      <div className="field filter">
        <label htmlFor="request-credential">Token or app id</label>
        <input
          id="request-credential"
          placeholder="tok_… or oac_…"
          value={credential}
          onChange={(e) => setCredential(e.target.value)}
        />
      </div>
      <div className="field filter rlog-time">
        <label htmlFor="request-from">From</label>
        <input
          id="request-from"
          type="datetime-local"
          value={from}
          onChange={(e) => setFrom(e.target.value)}
        />
      </div>
      <div className="field filter rlog-time">
        <label htmlFor="request-until">Until</label>
        <input
          id="request-until"
          type="datetime-local"
          value={until}
          onChange={(e) => setUntil(e.target.value)}
        />
      </div>
      <button type="submit">Apply</button>
    </form>
  );
}

/** One request in full: the row's fields, its concrete path (never a query) and its ids. */
export function RequestLogDetail({ entry, onClose }: { entry: RequestLog; onClose: () => void }) {
  return (
    <InfoDialog title={`${entry.method} ${entry.route}`} className="rlog-detail" onClose={onClose}>
      <dl className="facts rlog-fields">
        <dt>Time</dt>
        <dd>
          <time dateTime={entry.created_at}>
            {new Date(entry.created_at).toLocaleString(undefined, {
              dateStyle: 'medium',
              timeStyle: 'medium',
            })}
          </time>{' '}
          <span className="rlog-utc">({entry.created_at})</span>
        </dd>
        <dt>Method</dt>
        <dd>
          <code>{entry.method}</code>
        </dd>
        <dt>Route</dt>
        <dd>
          <code>{entry.route}</code>
        </dd>
        <dt>Path</dt>
        <dd>
          {entry.path ? <code>{entry.path}</code> : 'Not recorded (before paths were kept)'}
          <br />
          <span className="rlog-note">Query strings are never recorded.</span>
        </dd>
        <dt>Status</dt>
        <dd>
          {entry.status}
          {entry.error_code ? (
            <>
              {' '}
              <code>{entry.error_code}</code>
            </>
          ) : null}
        </dd>
        <dt>Latency</dt>
        <dd>{entry.latency_ms.toFixed(1)} ms</dd>
        <dt>{CREDENTIAL_LABELS[entry.credential.type]}</dt>
        <dd>
          <code>{entry.credential.id}</code>
        </dd>
        <dt>Request id</dt>
        <dd>
          <code>{entry.request_id}</code>
        </dd>
        <dt>Entry id</dt>
        <dd>
          <code>{entry.id}</code>
        </dd>
      </dl>
    </InfoDialog>
  );
}
