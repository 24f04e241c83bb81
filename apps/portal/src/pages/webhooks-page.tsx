import { useCallback, useState } from 'react';
import type {
  PlatformClient,
  WebhookEndpoint,
  WebhookEndpointStats,
  WebhookEndpointWithSecret,
} from '@platform/client';
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
import { Link } from '../router';
import { CreateEndpoint } from './webhook-endpoint-fields';
import {
  DisableWarning,
  HealthBadge,
  healthOf,
  successRate,
  useEndpointStats,
} from './webhook-health';

/** What the endpoint page just deleted, said once by the list it returns to. */
let deletedFlash: string | null = null;

/** The endpoint page deleted an endpoint: the list it returns to says so, once. */
export function flashDeleted(said: string): void {
  deletedFlash = said;
}

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
      <EndpointList client={client} list={list} />
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
function EndpointList({
  client,
  list,
}: {
  client: PlatformClient;
  list: ListState<WebhookEndpoint>;
}) {
  const endpoints = list.rows;
  // One stats request per endpoint shown: at most 16 (MAX_WEBHOOK_ENDPOINTS), in parallel.
  const stats = useEndpointStats(client, endpoints?.map((e) => e.id) ?? [], endpoints);
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
        <ul className="cards hook-endpoints">
          {endpoints.map((endpoint) => (
            <EndpointCard
              key={endpoint.id}
              endpoint={endpoint}
              stats={stats[endpoint.id] ?? null}
            />
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

/** An endpoint: its URL, health badge and 24-hour success rate, events, and any warning. */
function EndpointCard({
  endpoint,
  stats,
}: {
  endpoint: WebhookEndpoint;
  stats: WebhookEndpointStats | null;
}) {
  return (
    <li className="card hook-endpoint" data-endpoint={endpoint.id}>
      <div className="hook-endpoint-head">
        <Link to={`/webhooks/${endpoint.id}`}>
          <span className="url">{endpoint.url}</span>
        </Link>
        <HealthBadge health={healthOf(endpoint, stats)} />
      </div>
      <p className="hook-meta">
        {stats ? <span className="hook-rate">{successRate(stats)}</span> : null}
        <span>{endpoint.events.join(', ')}</span>
        {endpoint.description ? <span>{endpoint.description}</span> : null}
      </p>
      <DisableWarning endpoint={endpoint} />
    </li>
  );
}
