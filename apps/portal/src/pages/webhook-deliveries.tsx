import { useRef, useState, type FormEvent } from 'react';
import type { PlatformClient, WebhookDelivery } from '@platform/client';
import { describeError, EVENT_TYPES, formatDate } from '../api';
import { FilterSelect, Pager, TableWrap, type ListState } from '../components/list';
import { FailureNotice } from '../components/states';
import { Notice } from '../components/ui';
import { DeliveryPanel } from './webhook-delivery-panel';

const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

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

/**
 * An endpoint's deliveries by page, status and event type, with refresh and replay: a compact
 * table, one row each; a row opens its delivery in a side panel (`DeliveryPanel`).
 */
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
  const [openId, setOpenId] = useState<string | null>(null);
  const [opened, setOpened] = useState<WebhookDelivery | null>(null);
  // The open delivery as the list last read it (attempts arrive while it is open).
  const shown = list.rows?.find((d) => d.id === openId) ?? opened;
  const open = (delivery: WebhookDelivery) => {
    setOpenId(delivery.id);
    setOpened(delivery);
  };
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
        <NoDeliveries list={list} />
      ) : (
        <DeliveryTable rows={list.rows} onOpen={open} />
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
      {shown && openId ? (
        <DeliveryPanel
          key={shown.id}
          client={client}
          delivery={shown}
          canWrite={canWrite}
          canReadEvents={canReadEvents}
          enabled={enabled}
          onRedeliver={onRedeliver}
          onClose={() => setOpenId(null)}
        />
      ) : null}
    </section>
  );
}

function NoDeliveries({ list }: { list: ListState<WebhookDelivery> }) {
  return (
    <p>
      {list.filters.status || list.filters.event_type
        ? 'No deliveries match.'
        : 'No deliveries yet. Send a test event to see one.'}
    </p>
  );
}

/** The last attempt's answer: its status (or why none came) and latency; "—" before any. */
function lastResponse(delivery: WebhookDelivery): string {
  const last = delivery.attempts.at(-1);
  if (!last) return '—';
  return `${last.status_code ?? 'no response'} · ${last.latency_ms} ms`;
}

function DeliveryTable({
  rows,
  onOpen,
}: {
  rows: WebhookDelivery[];
  onOpen: (delivery: WebhookDelivery) => void;
}) {
  return (
    <TableWrap label="Deliveries table">
      <table className="stacking hook-deliveries" aria-live="polite">
        <caption className="visually-hidden">
          Deliveries, newest first; open one for its payload, headers and attempts
        </caption>
        <thead>
          <tr>
            <th scope="col">Status</th>
            <th scope="col">Event type</th>
            <th scope="col">Created</th>
            <th scope="col">Attempts</th>
            <th scope="col">Last response</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((delivery) => (
            <tr
              key={delivery.id}
              className="hook-row"
              data-status={delivery.status}
              onClick={(e) => {
                if (!(e.target as HTMLElement).closest('button')) onOpen(delivery);
              }}
            >
              <td data-label="Status">
                <span className="hook-status" data-status={delivery.status}>
                  {delivery.status}
                </span>
              </td>
              <td data-label="Event type">
                <button type="button" className="hook-open" onClick={() => onOpen(delivery)}>
                  {delivery.event_type}
                  <span className="visually-hidden"> delivery {delivery.id}</span>
                </button>
              </td>
              <td data-label="Created" className="nowrap">
                {formatDate(delivery.created_at)}
              </td>
              <td data-label="Attempts">{delivery.attempt_count}</td>
              <td data-label="Last response" className="nowrap">
                {lastResponse(delivery)}
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
