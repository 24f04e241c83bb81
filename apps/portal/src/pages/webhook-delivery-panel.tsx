import { useEffect, useState } from 'react';
import type { PlatformClient, WebhookAttempt, WebhookDelivery } from '@platform/client';
import { describeError, formatDate } from '../api';
import { Panel } from '../components/dialog';

/** Characters of a response body shown per attempt (the API keeps up to 4 KiB). */
const EXCERPT = 500;

/**
 * One delivery in a side panel: its state, Redeliver, every attempt (time, status, latency,
 * response excerpt and the headers it sent, signatures withheld) and the payload (the event, read
 * from the event log when the session may read events).
 */
export function DeliveryPanel({
  client,
  delivery,
  canWrite,
  canReadEvents,
  enabled,
  onRedeliver,
  onClose,
}: {
  client: PlatformClient;
  delivery: WebhookDelivery;
  canWrite: boolean;
  canReadEvents: boolean;
  enabled: boolean;
  onRedeliver: (delivery: WebhookDelivery) => void;
  onClose: () => void;
}) {
  return (
    <Panel title={`Delivery ${delivery.id}`} onClose={onClose} className="hook-panel">
      <dl className="hook-facts">
        <div>
          <dt>Status</dt>
          <dd>
            <span className="hook-status" data-status={delivery.status}>
              {delivery.status}
            </span>
          </dd>
        </div>
        <div>
          <dt>Event</dt>
          <dd>
            <code>{delivery.event_type}</code> {delivery.event_id}
          </dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>{formatDate(delivery.created_at)}</dd>
        </div>
        {delivery.next_attempt_at ? (
          <div>
            <dt>Next attempt</dt>
            <dd>{formatDate(delivery.next_attempt_at)}</dd>
          </div>
        ) : null}
      </dl>
      {canWrite ? (
        <p className="actions">
          <button type="button" onClick={() => onRedeliver(delivery)} disabled={!enabled}>
            Redeliver
          </button>
          {enabled ? null : <span className="hint">A disabled endpoint sends nothing.</span>}
        </p>
      ) : null}
      <h3>
        {delivery.attempts.length} attempt{delivery.attempts.length === 1 ? '' : 's'}
      </h3>
      {delivery.attempts.length === 0 ? (
        <p>Not attempted yet.</p>
      ) : (
        <ol className="hook-attempts">
          {delivery.attempts.map((attempt, index) => (
            <Attempt key={index} attempt={attempt} number={index + 1} />
          ))}
        </ol>
      )}
      <h3>Payload</h3>
      <Payload client={client} delivery={delivery} canReadEvents={canReadEvents} />
    </Panel>
  );
}

function Attempt({ attempt, number }: { attempt: WebhookAttempt; number: number }) {
  const ok =
    attempt.status_code !== null && attempt.status_code >= 200 && attempt.status_code < 300;
  const headers = attempt.request_headers;
  return (
    <li className="hook-attempt" data-ok={ok}>
      <p className="hook-attempt-head">
        <strong>#{number}</strong> {formatDate(attempt.attempted_at)} ·{' '}
        <span className="hook-code">{attempt.status_code ?? 'no response'}</span> ·{' '}
        {attempt.latency_ms} ms
      </p>
      <h4>Response</h4>
      <pre className="excerpt">
        {attempt.error ?? (attempt.response_body || '(empty)').slice(0, EXCERPT)}
      </pre>
      <h4>Headers sent</h4>
      {headers ? (
        <pre className="excerpt hook-headers" aria-label={`Headers sent with attempt ${number}`}>
          {Object.entries(headers)
            .map(([name, value]) => `${name}: ${value}`)
            .join('\n')}
        </pre>
      ) : (
        <p className="hint">Not recorded for this attempt.</p>
      )}
    </li>
  );
}

function Payload({
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
  useEffect(() => {
    if (!canReadEvents) return;
    let live = true;
    client.events.retrieve({ params: { id: delivery.event_id } }).then(
      (event) => live && setPayload(JSON.stringify(event, null, 2)),
      (e: unknown) => live && setProblem(describeError(e)),
    );
    return () => {
      live = false;
    };
  }, [client, delivery.event_id, canReadEvents]);
  if (!canReadEvents)
    return (
      <p className="hint">
        Reading the payload needs the events:read scope, and the read scope of the event’s resource
        (students:read for student events).
      </p>
    );
  if (problem) return <p className="hint">{problem}</p>;
  if (payload === null) return <p>Loading…</p>;
  return (
    <pre className="excerpt payload" tabIndex={0} aria-label={`Payload of ${delivery.id}`}>
      {payload}
    </pre>
  );
}
