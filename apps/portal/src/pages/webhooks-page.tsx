import { useCallback, useEffect, useState, type FormEvent } from 'react';
import type {
  PlatformClient,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
} from '@platform/client';
import { classifyError, describeError, type Failure, WEBHOOK_SECRET_OVERLAP_HOURS } from '../api';
import { useConfirm } from '../components/dialog';
import {
  FilterSelect,
  emptyListText,
  Pager,
  SearchBox,
  useListPage,
  type ListQuery,
  type ListState,
} from '../components/list';
import { FailureNotice } from '../components/states';
import { Notice, PageHeading, SecretPanel } from '../components/ui';
import { Link, navigate } from '../router';
import { Deliveries, EndpointHealth } from './webhook-deliveries';
import {
  chosenEvents,
  CreateEndpoint,
  EndpointFields,
  type EventChoice,
} from './webhook-endpoint-fields';

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
      <EndpointList list={list} />
      {canWrite ? (
        <CreateEndpoint
          client={client}
          onError={setError}
          onCreated={async (endpoint) => {
            setCreated(endpoint);
            await load();
          }}
        />
      ) : (
        <p className="hint">Your role lets you see endpoints, not add or change them.</p>
      )}
    </>
  );
}

/** The endpoints by page, searched by URL and shown by enabled. */
function EndpointList({ list }: { list: ListState<WebhookEndpoint> }) {
  const endpoints = list.rows;
  return (
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
            <EndpointCard key={endpoint.id} endpoint={endpoint} />
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
  );
}

function EndpointCard({ endpoint }: { endpoint: WebhookEndpoint }) {
  return (
    <li className="card">
      <Link to={`/webhooks/${endpoint.id}`}>
        <span className="url">{endpoint.url}</span>
      </Link>
      <p>
        {endpoint.enabled ? 'Enabled' : `Disabled (${endpoint.disabled_reason ?? 'requested'})`} ·{' '}
        {endpoint.events.join(', ')}
        {endpoint.description ? ` · ${endpoint.description}` : ''}
      </p>
    </li>
  );
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

      <Deliveries
        client={client}
        id={id}
        list={list}
        canWrite={canWrite}
        canReadEvents={canReadEvents}
        enabled={endpoint.enabled}
        onRefresh={() => void act(loadDeliveries)}
        onReplayed={async (said) => {
          setError(null);
          setMessage(said);
          await loadDeliveries();
        }}
        onRedeliver={redeliver}
      />

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
