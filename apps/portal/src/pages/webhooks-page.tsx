import { useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import type {
  PlatformClient,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointEvent,
  WebhookEndpointStats,
  WebhookEndpointWithSecret,
} from '@platform/client';
import {
  classifyError,
  describeError,
  EVENT_TYPES,
  type Failure,
  formatDate,
  WEBHOOK_SECRET_OVERLAP_HOURS,
} from '../api';
import { useConfirm } from '../components/dialog';
import {
  FilterSelect,
  emptyListText,
  Pager,
  SearchBox,
  TableWrap,
  useListPage,
  type ListQuery,
} from '../components/list';
import { FailureNotice } from '../components/states';
import { CheckboxGroup, Notice, PageHeading, SecretPanel } from '../components/ui';
import { Link, navigate } from '../router';

type EventChoice = WebhookEndpointEvent;
const ALL_EVENTS: EventChoice = '*';
const EVENT_CHOICES: readonly EventChoice[] = [ALL_EVENTS, ...EVENT_TYPES];

function describeEvent(choice: EventChoice): string | undefined {
  return choice === ALL_EVENTS ? 'every event type, including ones added later' : undefined;
}

/** URL, description and event types: shared by the create and edit forms. */
function EndpointFields({
  url,
  setUrl,
  description,
  setDescription,
  events,
  setEvents,
}: {
  url: string;
  setUrl: (v: string) => void;
  description: string;
  setDescription: (v: string) => void;
  events: Set<EventChoice>;
  setEvents: (v: Set<EventChoice>) => void;
}) {
  return (
    <>
      <div className="field">
        <label htmlFor="endpoint-url">Endpoint URL</label>
        <input
          id="endpoint-url"
          type="url"
          required
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          aria-describedby="endpoint-url-hint"
        />
        <span id="endpoint-url-hint" className="hint">
          An https address on the public internet that accepts POST requests. A server set up for
          development may also accept http and private addresses such as 127.0.0.1.
        </span>
      </div>
      <div className="field">
        <label htmlFor="endpoint-description">Description (optional)</label>
        <input
          id="endpoint-description"
          maxLength={500}
          value={description}
          onChange={(e) => setDescription(e.target.value)}
        />
      </div>
      <CheckboxGroup
        legend="Event types"
        options={EVENT_CHOICES}
        selected={events}
        onChange={setEvents}
        describe={describeEvent}
        disabled={(choice) => choice !== ALL_EVENTS && events.has(ALL_EVENTS)}
      />
    </>
  );
}

function chosenEvents(events: Set<EventChoice>): EventChoice[] {
  return events.has(ALL_EVENTS) ? [ALL_EVENTS] : [...events];
}

/** What the endpoint page just deleted, said once by the list it returns to. */
let deletedFlash: string | null = null;

const ENABLED_FILTERS = [
  { value: '', label: 'All endpoints' },
  { value: 'true', label: 'Enabled' },
  { value: 'false', label: 'Disabled' },
] as const;

/** Webhook endpoints: the list (a page at a time, by enabled) and, for writers, the create form. */
export function WebhooksPage({ client, canWrite }: { client: PlatformClient; canWrite: boolean }) {
  const [error, setError] = useState<string | null>(null);
  const [message] = useState(() => {
    const said = deletedFlash;
    deletedFlash = null;
    return said;
  });
  const [created, setCreated] = useState<WebhookEndpointWithSecret | null>(null);
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<Set<EventChoice>>(new Set());
  const [busy, setBusy] = useState(false);

  const fetchPage = useCallback(
    (query: ListQuery) =>
      client.webhookEndpoints.list({
        page: query.page,
        per_page: query.per_page,
        ...(typeof query.q === 'string' && { q: query.q }),
        ...(query.enabled === 'true' || query.enabled === 'false'
          ? { enabled: query.enabled }
          : {}),
      }),
    [client],
  );
  const list = useListPage(fetchPage, { filters: ['q', 'enabled'] });
  const load = list.reload;
  const endpoints = list.rows;

  const create = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    if (events.size === 0) return setError('Choose at least one event type.');
    setBusy(true);
    try {
      const endpoint = await client.webhookEndpoints.create({
        body: { url, description: description || null, events: chosenEvents(events) },
      });
      setCreated(endpoint);
      setUrl('');
      setDescription('');
      setEvents(new Set());
      await load();
    } catch (e) {
      setError(describeError(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <PageHeading>Webhook endpoints</PageHeading>
      <p>
        The platform POSTs signed events (Standard Webhooks) to your endpoints as records change.
      </p>
      {error ? <Notice kind="error">{error}</Notice> : null}
      {message ? <Notice kind="success">{message}</Notice> : null}
      {list.failure ? (
        <FailureNotice failure={list.failure} onRetry={() => void list.reload()} />
      ) : null}
      {created ? (
        <SecretPanel title="Endpoint created" secret={created.secret} label="Signing secret">
          <p>
            Verify deliveries with it (<code>verifyWebhook</code> in the SDKs).{' '}
            <Link to={`/webhooks/${created.id}`}>Manage the endpoint and send a test event</Link>.
          </p>
        </SecretPanel>
      ) : null}
      <section aria-labelledby="endpoint-list">
        <h2 id="endpoint-list">Endpoints</h2>
        <div className="filters">
          <SearchBox
            id="endpoint-search"
            label="Search endpoints"
            value={list.filters.q ?? ''}
            onSearch={(q) => list.update({ q })}
          />
          <FilterSelect
            id="endpoint-filter"
            label="Show"
            value={list.filters.enabled ?? ''}
            onChange={(enabled) => list.update({ enabled })}
            choices={ENABLED_FILTERS}
          />
        </div>
        {endpoints === null ? (
          list.failure ? null : (
            <p>Loading…</p>
          )
        ) : endpoints.length === 0 ? (
          <p>{emptyListText('endpoints', list.filters.q, Boolean(list.filters.enabled))}</p>
        ) : (
          <ul className="cards">
            {endpoints.map((endpoint) => (
              <li key={endpoint.id} className="card">
                <Link to={`/webhooks/${endpoint.id}`}>
                  <span className="url">{endpoint.url}</span>
                </Link>
                <p>
                  {endpoint.enabled
                    ? 'Enabled'
                    : `Disabled (${endpoint.disabled_reason ?? 'requested'})`}{' '}
                  · {endpoint.events.join(', ')}
                  {endpoint.description ? ` · ${endpoint.description}` : ''}
                </p>
              </li>
            ))}
          </ul>
        )}
        {list.meta ? (
          <Pager
            meta={list.meta}
            noun="endpoints"
            label="Endpoint pages"
            onPage={(page) => list.update({ page })}
          />
        ) : null}
      </section>
      {canWrite ? (
        <section aria-labelledby="create-endpoint">
          <h2 id="create-endpoint">Add an endpoint</h2>
          <form className="stack" onSubmit={(e) => void create(e)}>
            <EndpointFields {...{ url, setUrl, description, setDescription, events, setEvents }} />
            <button type="submit" disabled={busy}>
              Add endpoint
            </button>
          </form>
        </section>
      ) : (
        <p className="hint">Your role lets you see endpoints, not add or change them.</p>
      )}
    </>
  );
}

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
function EndpointHealth({
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

/**
 * One endpoint: its deliveries (a page at a time, by status and event type, in the URL) with
 * redelivery; for writers also edit, rotate its secret, send a test event and delete.
 */
export function WebhookEndpointPage({
  client,
  id,
  canWrite,
  canReadEvents,
}: {
  client: PlatformClient;
  id: string;
  canWrite: boolean;
  canReadEvents: boolean;
}) {
  const [endpoint, setEndpoint] = useState<WebhookEndpoint | null>(null);
  const [failure, setFailure] = useState<Failure | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [rotated, setRotated] = useState<{ secret: string; until: Date } | null>(null);
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<Set<EventChoice>>(new Set());
  const [enabled, setEnabled] = useState(true);
  const [confirm, dialog] = useConfirm();
  const deliveriesHeading = useRef<HTMLHeadingElement>(null);

  const fetchDeliveries = useCallback(
    (query: ListQuery) =>
      client.webhookEndpoints.deliveries({
        params: { id },
        query: {
          page: query.page,
          per_page: query.per_page,
          sort: '-created_at',
          ...(typeof query.status === 'string' && {
            status: query.status as WebhookDelivery['status'],
          }),
          ...(typeof query.event_type === 'string' && {
            event_type: query.event_type as WebhookDelivery['event_type'],
          }),
        },
      }),
    [client, id],
  );
  const list = useListPage(fetchDeliveries, { filters: ['status', 'event_type'], perPage: 20 });
  const deliveries = list.rows;
  const loadDeliveries = list.reload;

  const load = useCallback(async () => {
    setFailure(null);
    try {
      const found = await client.webhookEndpoints.retrieve({ params: { id } });
      setEndpoint(found);
      setUrl(found.url);
      setDescription(found.description ?? '');
      setEvents(new Set(found.events));
      setEnabled(found.enabled);
    } catch (e) {
      setFailure(classifyError(e));
    }
  }, [client, id]);
  useEffect(() => void load(), [load]);

  // While a delivery is pending, look again every 2 seconds (attempts arrive in the background).
  const pending = deliveries?.some((d) => d.status === 'pending') ?? false;
  useEffect(() => {
    if (!pending) return;
    const timer = setInterval(() => void loadDeliveries().catch(() => undefined), 2000);
    return () => clearInterval(timer);
  }, [pending, loadDeliveries]);

  const act = async (what: () => Promise<void>) => {
    setError(null);
    setMessage(null);
    try {
      await what();
    } catch (e) {
      setError(describeError(e));
    }
  };

  const save = (event: FormEvent) => {
    event.preventDefault();
    void act(async () => {
      if (events.size === 0) throw new Error('Choose at least one event type.');
      const updated = await client.webhookEndpoints.update({
        params: { id },
        body: { url, description: description || null, events: chosenEvents(events), enabled },
      });
      setEndpoint(updated);
      setMessage('Endpoint saved.');
    });
  };

  const rotate = () =>
    void act(async () => {
      const ok = await confirm({
        title: 'Rotate the signing secret?',
        body: (
          <p>
            A new secret signs deliveries to <span className="url">{endpoint?.url}</span> from now
            on; the current one keeps working for {WEBHOOK_SECRET_OVERLAP_HOURS} hours.
          </p>
        ),
        confirm: 'Rotate secret',
      });
      if (!ok) return;
      const result = await client.webhookEndpoints.rotateSecret({ params: { id } });
      setRotated({
        secret: result.secret,
        until: new Date(Date.now() + WEBHOOK_SECRET_OVERLAP_HOURS * 3_600_000),
      });
    });

  const remove = () =>
    void act(async () => {
      if (!endpoint) return;
      const ok = await confirm({
        title: 'Delete this endpoint?',
        body: (
          <p>
            The endpoint <span className="url">{endpoint.url}</span> is deleted with its pending
            deliveries: nothing more is sent to it. This cannot be undone.
          </p>
        ),
        confirm: 'Delete endpoint',
        typeToConfirm: endpoint.url,
      });
      if (!ok) return;
      await client.webhookEndpoints.delete({ params: { id } });
      deletedFlash = `Endpoint ${endpoint.url} deleted.`;
      // The list's heading takes focus (an in-app move), with the message below it.
      navigate('/webhooks');
    });

  const test = () =>
    void act(async () => {
      await client.webhookEndpoints.test({ params: { id } });
      setMessage('Test event queued; its delivery appears below.');
      await loadDeliveries();
    });

  const redeliver = (delivery: WebhookDelivery) =>
    void act(async () => {
      await client.webhookDeliveries.retry({ params: { id: delivery.id } });
      setMessage(`Delivery ${delivery.id} queued again.`);
      await loadDeliveries();
    });

  if (!endpoint)
    return (
      <>
        <PageHeading>Webhook endpoint</PageHeading>
        {failure ? (
          <FailureNotice failure={failure} onRetry={() => void load()} />
        ) : (
          <p>Loading…</p>
        )}
      </>
    );
  return (
    <>
      {dialog}
      <p>
        <Link to="/webhooks">← All endpoints</Link>
      </p>
      <PageHeading>Webhook endpoint</PageHeading>
      <p className="url">{endpoint.url}</p>
      <p>
        {endpoint.enabled ? 'Enabled' : `Disabled (${endpoint.disabled_reason ?? 'requested'})`}
      </p>
      {error ? <Notice kind="error">{error}</Notice> : null}
      {message ? <Notice kind="success">{message}</Notice> : null}
      {rotated ? (
        <SecretPanel title="New signing secret" secret={rotated.secret} label="New signing secret">
          <p>
            Until {rotated.until.toLocaleString()} ({WEBHOOK_SECRET_OVERLAP_HOURS} hours) every
            delivery carries two signatures, one with the previous secret and one with this one, so
            you can switch your receiver without missing a delivery.
          </p>
        </SecretPanel>
      ) : null}
      {canWrite ? (
        <div className="actions">
          <button type="button" onClick={test} disabled={!endpoint.enabled}>
            Send test event
          </button>
          <button type="button" onClick={rotate}>
            Rotate secret
          </button>
        </div>
      ) : null}

      <EndpointHealth
        client={client}
        id={id}
        version={
          (list.meta?.total ?? 0) + (deliveries ?? []).reduce((n, d) => n + d.attempt_count, 0)
        }
      />

      <section aria-labelledby="deliveries">
        <h2 id="deliveries" tabIndex={-1} ref={deliveriesHeading}>
          Deliveries
        </h2>
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
          <button type="button" onClick={() => void act(loadDeliveries)}>
            Refresh deliveries
          </button>
        </div>
        {canWrite && endpoint.enabled ? (
          <ReplayFailed
            client={client}
            id={id}
            onReplayed={async (said) => {
              setError(null);
              setMessage(said);
              await loadDeliveries();
            }}
          />
        ) : null}
        {list.failure ? (
          <FailureNotice failure={list.failure} onRetry={() => void list.reload()} />
        ) : null}
        {deliveries === null ? (
          list.failure ? null : (
            <p>Loading…</p>
          )
        ) : deliveries.length === 0 ? (
          <p>
            {list.filters.status || list.filters.event_type
              ? 'No deliveries match.'
              : 'No deliveries yet. Send a test event to see one.'}
          </p>
        ) : (
          <ul className="cards" aria-live="polite">
            {deliveries.map((delivery) => (
              <li key={delivery.id} className="card delivery" data-status={delivery.status}>
                <h3>
                  <code>{delivery.event_type}</code> ·{' '}
                  <span className="status">{delivery.status}</span>
                </h3>
                <p>
                  {delivery.id} · created {formatDate(delivery.created_at)} ·{' '}
                  {delivery.attempt_count} attempt{delivery.attempt_count === 1 ? '' : 's'}
                  {delivery.next_attempt_at
                    ? ` · next ${formatDate(delivery.next_attempt_at)}`
                    : ''}
                </p>
                {delivery.attempts.length ? (
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
                                {attempt.error ??
                                  (attempt.response_body || '(empty)').slice(0, 200)}
                              </code>
                            </td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </TableWrap>
                ) : null}
                <DeliveryDetails
                  client={client}
                  delivery={delivery}
                  canReadEvents={canReadEvents}
                />
                {canWrite ? (
                  <button type="button" onClick={() => redeliver(delivery)}>
                    Redeliver<span className="visually-hidden"> {delivery.id}</span>
                  </button>
                ) : null}
              </li>
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

      {canWrite ? (
        <>
          <section aria-labelledby="edit-endpoint">
            <h2 id="edit-endpoint">Edit</h2>
            <form className="stack" onSubmit={save}>
              <EndpointFields
                {...{ url, setUrl, description, setDescription, events, setEvents }}
              />
              <label className="inline">
                <input
                  type="checkbox"
                  checked={enabled}
                  onChange={(e) => setEnabled(e.target.checked)}
                />{' '}
                Enabled
              </label>
              <button type="submit">Save changes</button>
            </form>
          </section>
          <section aria-labelledby="delete-endpoint">
            <h2 id="delete-endpoint">Delete</h2>
            <p>
              Deleting stops every delivery to this endpoint and frees its place (an organization
              has at most 16 endpoints).
            </p>
            <button type="button" className="danger" onClick={remove}>
              Delete endpoint
            </button>
          </section>
        </>
      ) : null}
    </>
  );
}
