import { useCallback, useEffect, useState, type FormEvent } from 'react';
import type {
  PlatformClient,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointEvent,
  WebhookEndpointWithSecret,
} from '@platform/client';
import { describeError, EVENT_TYPES, formatDate, WEBHOOK_SECRET_OVERLAP_HOURS } from '../api';
import { CheckboxGroup, Notice, PageHeading, SecretPanel } from '../components/ui';
import { Link } from '../router';

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
          An https address that accepts POST requests.
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

/** Webhook endpoints: the list and the create form. */
export function WebhooksPage({ client }: { client: PlatformClient }) {
  const [endpoints, setEndpoints] = useState<WebhookEndpoint[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<WebhookEndpointWithSecret | null>(null);
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<Set<EventChoice>>(new Set());
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    try {
      setEndpoints((await client.webhookEndpoints.list({ per_page: 100 })).data);
    } catch (e) {
      setError(describeError(e));
    }
  }, [client]);
  useEffect(() => void load(), [load]);

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
        {endpoints === null ? (
          <p>Loading…</p>
        ) : endpoints.length === 0 ? (
          <p>No endpoints yet.</p>
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
      </section>
      <section aria-labelledby="create-endpoint">
        <h2 id="create-endpoint">Add an endpoint</h2>
        <form className="stack" onSubmit={(e) => void create(e)}>
          <EndpointFields {...{ url, setUrl, description, setDescription, events, setEvents }} />
          <button type="submit" disabled={busy}>
            Add endpoint
          </button>
        </form>
      </section>
    </>
  );
}

/** One endpoint: edit, rotate its secret, send a test event, its deliveries and redelivery. */
export function WebhookEndpointPage({ client, id }: { client: PlatformClient; id: string }) {
  const [endpoint, setEndpoint] = useState<WebhookEndpoint | null>(null);
  const [deliveries, setDeliveries] = useState<WebhookDelivery[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [rotated, setRotated] = useState<{ secret: string; until: Date } | null>(null);
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<Set<EventChoice>>(new Set());
  const [enabled, setEnabled] = useState(true);

  const loadDeliveries = useCallback(async () => {
    const page = await client.webhookEndpoints.deliveries({
      params: { id },
      query: { per_page: 20, sort: '-created_at' },
    });
    setDeliveries(page.data);
  }, [client, id]);

  const load = useCallback(async () => {
    try {
      const found = await client.webhookEndpoints.retrieve({ params: { id } });
      setEndpoint(found);
      setUrl(found.url);
      setDescription(found.description ?? '');
      setEvents(new Set(found.events));
      setEnabled(found.enabled);
      await loadDeliveries();
    } catch (e) {
      setError(describeError(e));
    }
  }, [client, id, loadDeliveries]);
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
      if (!window.confirm('Rotate the signing secret? The old one keeps working for 24 hours.'))
        return;
      const result = await client.webhookEndpoints.rotateSecret({ params: { id } });
      setRotated({
        secret: result.secret,
        until: new Date(Date.now() + WEBHOOK_SECRET_OVERLAP_HOURS * 3_600_000),
      });
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
        {error ? <Notice kind="error">{error}</Notice> : <p>Loading…</p>}
      </>
    );
  return (
    <>
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
      <div className="actions">
        <button type="button" onClick={test} disabled={!endpoint.enabled}>
          Send test event
        </button>
        <button type="button" onClick={rotate}>
          Rotate secret
        </button>
      </div>

      <section aria-labelledby="deliveries">
        <h2 id="deliveries">Deliveries</h2>
        <button type="button" onClick={() => void act(loadDeliveries)}>
          Refresh deliveries
        </button>
        {deliveries === null ? (
          <p>Loading…</p>
        ) : deliveries.length === 0 ? (
          <p>No deliveries yet. Send a test event to see one.</p>
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
                  <div className="table-wrap">
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
                  </div>
                ) : null}
                <button type="button" onClick={() => redeliver(delivery)}>
                  Redeliver<span className="visually-hidden"> {delivery.id}</span>
                </button>
              </li>
            ))}
          </ul>
        )}
      </section>

      <section aria-labelledby="edit-endpoint">
        <h2 id="edit-endpoint">Edit</h2>
        <form className="stack" onSubmit={save}>
          <EndpointFields {...{ url, setUrl, description, setDescription, events, setEvents }} />
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
    </>
  );
}
