import { useEffect, useRef, useState, type FormEvent } from 'react';
import type { PlatformClient, WebhookDelivery, WebhookEndpointStats } from '@platform/client';
import { describeError, EVENT_TYPES, formatDate } from '../api';
import { FilterSelect, Pager, TableWrap, type ListState } from '../components/list';
import { FailureNotice } from '../components/states';
import { Notice } from '../components/ui';

const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

/**
 * A delivery's message: the event it carries (read from the event log when the session may read
 * events) and the headers every attempt is sent with (the timestamp and signature are made per
 * attempt; the signature is not kept).
 */
function DeliveryDetails({
  client,
  delivery,
  canReadEvents,
}: {
  client: PlatformClient;
  delivery: WebhookDelivery;
  canReadEvents: boolean;
}) {
  const [payload, setPayload] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const load = () => {
    if (payload !== null || !canReadEvents) return;
    client.events.retrieve({ params: { id: delivery.event_id } }).then(
      (event) => setPayload(JSON.stringify(event, null, 2)),
      (e: unknown) => setProblem(describeError(e)),
    );
  };
  return (
    <details
      className="delivery-details"
      onToggle={(e) => (e.currentTarget.open ? load() : undefined)}
    >
      <summary>
        Payload and headers<span className="visually-hidden"> of {delivery.id}</span>
      </summary>
      <h4>Headers</h4>
      <pre className="excerpt">
        {[
          'content-type: application/json',
          `webhook-id: ${delivery.id}`,
          'webhook-timestamp: the attempt’s time, in Unix seconds',
          'webhook-signature: v1,… (one per live signing secret; not kept)',
        ].join('\n')}
      </pre>
      <h4>Payload</h4>
      {!canReadEvents ? (
        <p className="hint">
          Reading the payload needs the events:read scope, and the read scope of the event’s
          resource (students:read for student events).
        </p>
      ) : problem ? (
        <p className="hint">{problem}</p>
      ) : payload === null ? (
        <p>Loading…</p>
      ) : (
        <pre className="excerpt payload" tabIndex={0} aria-label={`Payload of ${delivery.id}`}>
          {payload}
        </pre>
      )}
    </details>
  );
}

/** The endpoint's health over the last 24 hours, in words (from the stats operation). */
export function EndpointHealth({
  client,
  id,
  version,
}: {
  client: PlatformClient;
  id: string;
  version: number;
}) {
  const [stats, setStats] = useState<WebhookEndpointStats | null>(null);
  useEffect(() => {
    client.webhookEndpoints.stats({ params: { id } }).then(setStats, () => setStats(null));
  }, [client, id, version]);
  if (!stats) return null;
  return (
    <section aria-labelledby="endpoint-health">
      <h2 id="endpoint-health">Last 24 hours</h2>
      {stats.attempts === 0 ? (
        <p>No delivery attempts in the last 24 hours.</p>
      ) : (
        <dl className="facts health">
          <div>
            <dt>Success rate</dt>
            <dd data-testid="success-rate">
              {Math.round((stats.success_rate ?? 0) * 100)}% ({stats.succeeded} of {stats.attempts}{' '}
              attempts)
            </dd>
          </div>
          <div>
            <dt>Median latency</dt>
            <dd>{stats.latency_ms.p50} ms</dd>
          </div>
          <div>
            <dt>95th percentile latency</dt>
            <dd>{stats.latency_ms.p95} ms</dd>
          </div>
          <div>
            <dt>Slowest</dt>
            <dd>{stats.latency_ms.max} ms</dd>
          </div>
        </dl>
      )}
    </section>
  );
}

/** "Replay every failed delivery since …": a time (24 hours ago by default) and a button. */
function ReplayFailed({
  client,
  id,
  onReplayed,
}: {
  client: PlatformClient;
  id: string;
  onReplayed: (message: string) => Promise<void>;
}) {
  const [since, setSince] = useState(() => toLocalInput(new Date(Date.now() - 86_400_000)));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const replay = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setBusy(true);
    try {
      const result = await client.webhookEndpoints.replayFailed({
        params: { id },
        body: { since: new Date(since).toISOString() },
      });
      await onReplayed(
        result.queued === 0
          ? 'No failed deliveries since then: nothing to replay.'
          : `${result.queued} failed deliver${result.queued === 1 ? 'y' : 'ies'} queued again.`,
      );
    } catch (e) {
      setError(describeError(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="inline-form replay" onSubmit={(e) => void replay(e)}>
      <div className="field">
        <label htmlFor="replay-since">Replay failed deliveries since</label>
        <input
          id="replay-since"
          type="datetime-local"
          required
          value={since}
          onChange={(e) => setSince(e.target.value)}
          aria-describedby="replay-since-hint"
        />
        <span id="replay-since-hint" className="hint">
          Your local time; at most 30 days ago. Each goes out once more with its webhook-id.
        </span>
      </div>
      <button type="submit" disabled={busy}>
        Replay failed deliveries
      </button>
      {error ? <Notice kind="error">{error}</Notice> : null}
    </form>
  );
}

/** A Date as a `datetime-local` input's value (local time, to the minute). */
function toLocalInput(date: Date): string {
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

/** An endpoint's deliveries by page, status and event type, with refresh and replay. */
export function Deliveries({
  client,
  id,
  list,
  canWrite,
  canReadEvents,
  enabled,
  onRefresh,
  onReplayed,
  onRedeliver,
}: {
  client: PlatformClient;
  id: string;
  list: ListState<WebhookDelivery>;
  canWrite: boolean;
  canReadEvents: boolean;
  enabled: boolean;
  onRefresh: () => void;
  onReplayed: (said: string) => Promise<void>;
  onRedeliver: (delivery: WebhookDelivery) => void;
}) {
  const deliveriesHeading = useRef<HTMLHeadingElement>(null);
  return (
    <section aria-labelledby="deliveries">
      <h2 id="deliveries" tabIndex={-1} ref={deliveriesHeading}>
        Deliveries
      </h2>
      <DeliveryFilters list={list} onRefresh={onRefresh} />
      {canWrite && enabled ? (
        <ReplayFailed client={client} id={id} onReplayed={onReplayed} />
      ) : null}
      {list.failure ? (
        <FailureNotice failure={list.failure} onRetry={() => void list.reload()} />
      ) : null}
      {list.rows === null ? (
        list.failure ? null : (
          <p>Loading…</p>
        )
      ) : list.rows.length === 0 ? (
        <p>
          {list.filters.status || list.filters.event_type
            ? 'No deliveries match.'
            : 'No deliveries yet. Send a test event to see one.'}
        </p>
      ) : (
        <ul className="cards" aria-live="polite">
          {list.rows.map((delivery) => (
            <DeliveryCard
              key={delivery.id}
              client={client}
              delivery={delivery}
              canWrite={canWrite}
              canReadEvents={canReadEvents}
              onRedeliver={onRedeliver}
            />
          ))}
        </ul>
      )}
      {list.meta ? (
        <Pager
          meta={list.meta}
          noun="deliveries"
          label="Delivery pages"
          onPage={(page) => {
            list.update({ page });
            deliveriesHeading.current?.focus();
          }}
        />
      ) : null}
    </section>
  );
}

function DeliveryCard({
  client,
  delivery,
  canWrite,
  canReadEvents,
  onRedeliver,
}: {
  client: PlatformClient;
  delivery: WebhookDelivery;
  canWrite: boolean;
  canReadEvents: boolean;
  onRedeliver: (delivery: WebhookDelivery) => void;
}) {
  return (
    <li className="card delivery" data-status={delivery.status}>
      <h3>
        <code>{delivery.event_type}</code> · <span className="status">{delivery.status}</span>
      </h3>
      <p>
        {delivery.id} · created {formatDate(delivery.created_at)} · {delivery.attempt_count} attempt
        {delivery.attempt_count === 1 ? '' : 's'}
        {delivery.next_attempt_at ? ` · next ${formatDate(delivery.next_attempt_at)}` : ''}
      </p>
      {delivery.attempts.length ? <AttemptTable delivery={delivery} /> : null}
      <DeliveryDetails client={client} delivery={delivery} canReadEvents={canReadEvents} />
      {canWrite ? (
        <button type="button" onClick={() => onRedeliver(delivery)}>
          Redeliver<span className="visually-hidden"> {delivery.id}</span>
        </button>
      ) : null}
    </li>
  );
}

function AttemptTable({ delivery }: { delivery: WebhookDelivery }) {
  return (
    <TableWrap label={`Attempts of ${delivery.id}`}>
      <table>
        <caption className="visually-hidden">Attempts of {delivery.id}</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Status</th>
            <th scope="col">Latency</th>
            <th scope="col">Response</th>
          </tr>
        </thead>
        <tbody>
          {delivery.attempts.map((attempt, index) => (
            <tr key={index}>
              <td>{formatDate(attempt.attempted_at)}</td>
              <td>{attempt.status_code ?? 'no response'}</td>
              <td>{attempt.latency_ms} ms</td>
              <td>
                <code className="excerpt">
                  {attempt.error ?? (attempt.response_body || '(empty)').slice(0, 200)}
                </code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

function DeliveryFilters({
  list,
  onRefresh,
}: {
  list: ListState<WebhookDelivery>;
  onRefresh: () => void;
}) {
  return (
    <div className="filters">
      <FilterSelect
        id="delivery-status"
        label="Status"
        value={list.filters.status ?? ''}
        onChange={(status) => list.update({ status })}
        all="Any status"
        choices={DELIVERY_STATUSES}
      />
      <FilterSelect
        id="delivery-event"
        label="Event type"
        value={list.filters.event_type ?? ''}
        onChange={(event_type) => list.update({ event_type })}
        all="Any event type"
        choices={['ping', ...EVENT_TYPES]}
      />
      <button type="button" onClick={onRefresh}>
        Refresh deliveries
      </button>
    </div>
  );
}
