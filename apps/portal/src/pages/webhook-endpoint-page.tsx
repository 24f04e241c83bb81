import { useCallback, useEffect, useState, type FormEvent } from 'react';
import type {
  PlatformClient,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointStats,
} from '@platform/client';
import { classifyError, describeError, type Failure, WEBHOOK_SECRET_OVERLAP_HOURS } from '../api';
import { Panel, useConfirm } from '../components/dialog';
import { useListPage, type ListQuery } from '../components/list';
import { FailureNotice } from '../components/states';
import { Notice, PageHeading, SecretPanel } from '../components/ui';
import { Link, navigate } from '../router';
import { Deliveries } from './webhook-deliveries';
import { DisableWarning, HealthBadge, healthOf, useEndpointStats } from './webhook-health';
import { chosenEvents, EndpointFields, type EventChoice } from './webhook-endpoint-fields';
import { flashDeleted } from './webhooks-page';

interface PageProps {
  client: PlatformClient;
  id: string;
  canWrite: boolean;
  canReadEvents: boolean;
}

/**
 * One endpoint, compact: its summary (health, 24-hour success rate and latency, the warning
 * before an automatic disable) and, for writers, its actions at the top (send test, edit in a
 * panel, rotate, disable or enable, delete); then its deliveries as a paged table (status and
 * event type in the URL), each opening in a side panel with its attempts and Redeliver.
 */
export function WebhookEndpointPage({ client, id, canWrite, canReadEvents }: PageProps) {
  const form = useEndpointForm(client, id);
  const list = useDeliveries(client, id);
  const actions = useEndpointActions(client, id, form, list.reload);
  const { endpoint, failure, load } = form;
  const deliveries = list.rows;
  // The stats again whenever the deliveries' count or attempts change.
  const version =
    (list.meta?.total ?? 0) + (deliveries ?? []).reduce((n, d) => n + d.attempt_count, 0);
  const stats = useEndpointStats(client, [id], version)[id] ?? null;

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
      {actions.dialog}
      <p>
        <Link to="/webhooks">← All endpoints</Link>
      </p>
      <PageHeading>Webhook endpoint</PageHeading>
      <EndpointSummary endpoint={endpoint} stats={stats} />
      {actions.error ? <Notice kind="error">{actions.error}</Notice> : null}
      {actions.message ? <Notice kind="success">{actions.message}</Notice> : null}
      {actions.rotated ? <RotatedSecret {...actions.rotated} /> : null}
      {canWrite ? <EndpointActions endpoint={endpoint} actions={actions} /> : null}
      {actions.editing ? (
        <Panel title="Edit endpoint" onClose={actions.closeEdit} className="hook-panel">
          <EditForm form={form} onSave={actions.save} />
        </Panel>
      ) : null}

      <Deliveries
        client={client}
        id={id}
        list={list}
        canWrite={canWrite}
        canReadEvents={canReadEvents}
        enabled={endpoint.enabled}
        onRefresh={() => void actions.act(list.reload)}
        onReplayed={actions.replayed}
        onRedeliver={actions.redeliver}
      />
    </>
  );
}

/** URL, health, events and the last 24 hours, in a few lines. */
function EndpointSummary({
  endpoint,
  stats,
}: {
  endpoint: WebhookEndpoint;
  stats: WebhookEndpointStats | null;
}) {
  return (
    <section className="hook-summary" aria-label="Summary">
      <p className="hook-endpoint-head">
        <span className="url">{endpoint.url}</span>
        <HealthBadge health={healthOf(endpoint, stats)} />
      </p>
      {endpoint.description ? <p>{endpoint.description}</p> : null}
      <DisableWarning endpoint={endpoint} />
      <dl className="hook-facts">
        <div>
          <dt>Events</dt>
          <dd>{endpoint.events.join(', ')}</dd>
        </div>
        <div>
          <dt>Success, 24 h</dt>
          <dd data-testid="success-rate">
            {stats
              ? stats.attempts === 0
                ? 'no attempts'
                : `${Math.round((stats.success_rate ?? 0) * 100)}% (${stats.succeeded} of ${stats.attempts} attempts)`
              : '…'}
          </dd>
        </div>
        {stats?.attempts ? (
          <div>
            <dt>Latency, 24 h</dt>
            <dd>
              median {stats.latency_ms.p50} ms · p95 {stats.latency_ms.p95} ms · slowest{' '}
              {stats.latency_ms.max} ms
            </dd>
          </div>
        ) : null}
      </dl>
    </section>
  );
}

/** A writer's buttons: send test, edit, rotate, disable or enable, delete. */
function EndpointActions({
  endpoint,
  actions,
}: {
  endpoint: WebhookEndpoint;
  actions: EndpointActionSet;
}) {
  return (
    <div className="actions hook-actions">
      <button type="button" onClick={actions.test} disabled={!endpoint.enabled}>
        Send test event
      </button>
      <button type="button" onClick={actions.openEdit}>
        Edit
      </button>
      <button type="button" onClick={actions.rotate}>
        Rotate secret
      </button>
      <button type="button" onClick={() => actions.setEnabled(!endpoint.enabled)}>
        {endpoint.enabled ? 'Disable' : 'Enable'}
      </button>
      <button type="button" className="danger" onClick={actions.remove}>
        Delete endpoint
      </button>
    </div>
  );
}

/** The endpoint, and its edit form's fields (filled from it when it loads). */
function useEndpointForm(client: PlatformClient, id: string) {
  const [endpoint, setEndpoint] = useState<WebhookEndpoint | null>(null);
  const [failure, setFailure] = useState<Failure | null>(null);
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<Set<EventChoice>>(new Set());
  const [enabled, setEnabled] = useState(true);

  /** Shows the endpoint, its fields in the edit form. */
  const fill = useCallback((found: WebhookEndpoint) => {
    setEndpoint(found);
    setUrl(found.url);
    setDescription(found.description ?? '');
    setEvents(new Set(found.events));
    setEnabled(found.enabled);
  }, []);
  const load = useCallback(async () => {
    setFailure(null);
    try {
      fill(await client.webhookEndpoints.retrieve({ params: { id } }));
    } catch (e) {
      setFailure(classifyError(e));
    }
  }, [client, id, fill]);
  useEffect(() => void load(), [load]);

  return {
    ...{ endpoint, fill, failure, load },
    ...{ url, setUrl, description, setDescription, events, setEvents, enabled, setEnabled },
  };
}
type EndpointForm = ReturnType<typeof useEndpointForm>;

/** The endpoint's deliveries by page, looked at again every 2 s while one is pending. */
function useDeliveries(client: PlatformClient, id: string) {
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
  const loadDeliveries = list.reload;

  // While a delivery is pending, look again every 2 seconds (attempts arrive in the background).
  const pending = list.rows?.some((d) => d.status === 'pending') ?? false;
  useEffect(() => {
    if (!pending) return;
    const timer = setInterval(() => void loadDeliveries().catch(() => undefined), 2000);
    return () => clearInterval(timer);
  }, [pending, loadDeliveries]);
  return list;
}

/** What the last action said: its error or its message; `act` runs one and says how it went. */
function useOutcome() {
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const act = async (what: () => Promise<void>) => {
    setError(null);
    setMessage(null);
    try {
      await what();
    } catch (e) {
      setError(describeError(e));
    }
  };
  return { error, setError, message, setMessage, act };
}

const ENABLED_SAID = 'Endpoint enabled; what is still pending goes out now.';

/** Whether the edit panel is open; opening it fills the form from the endpoint as it is. */
function useEditPanel(form: EndpointForm) {
  const [editing, setEditing] = useState(false);
  const openEdit = () => {
    if (form.endpoint) form.fill(form.endpoint);
    setEditing(true);
  };
  return { editing, openEdit, closeEdit: () => setEditing(false) };
}

/** What a writer does to the endpoint, each saying how it went; the confirmation dialog. */
function useEndpointActions(
  client: PlatformClient,
  id: string,
  form: EndpointForm,
  loadDeliveries: () => Promise<void>,
) {
  const { error, setError, message, setMessage, act } = useOutcome();
  const [rotated, setRotated] = useState<{ secret: string; until: Date } | null>(null);
  const edit = useEditPanel(form);
  const [confirm, dialog] = useConfirm();
  const { endpoint } = form;

  const save = (event: FormEvent) => {
    event.preventDefault();
    void act(async () => {
      if (form.events.size === 0) throw new Error('Choose at least one event type.');
      const updated = await client.webhookEndpoints.update({
        params: { id },
        body: updateBody(form),
      });
      form.fill(updated);
      edit.closeEdit();
      setMessage('Endpoint saved.');
    });
  };

  const setEnabled = (enabled: boolean) =>
    void act(async () => {
      const updated = await client.webhookEndpoints.update({ params: { id }, body: { enabled } });
      form.fill(updated);
      setMessage(enabled ? ENABLED_SAID : 'Endpoint disabled.');
      await loadDeliveries();
    });

  const rotate = () =>
    void act(async () => {
      if (!(await confirm(rotateQuestion(endpoint?.url)))) return;
      const result = await client.webhookEndpoints.rotateSecret({ params: { id } });
      setRotated({
        secret: result.secret,
        until: new Date(Date.now() + WEBHOOK_SECRET_OVERLAP_HOURS * 3_600_000),
      });
    });

  const remove = () =>
    void act(async () => {
      if (!endpoint) return;
      if (!(await confirm(deleteQuestion(endpoint.url)))) return;
      await client.webhookEndpoints.delete({ params: { id } });
      flashDeleted(`Endpoint ${endpoint.url} deleted.`);
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

  const replayed = async (said: string) => {
    setError(null);
    setMessage(said);
    await loadDeliveries();
  };

  return {
    ...{ error, message, rotated, dialog, act, save, rotate, remove, test, redeliver, replayed },
    ...{ ...edit, setEnabled },
  };
}
type EndpointActionSet = ReturnType<typeof useEndpointActions>;

/** The edit form as an update's body. */
function updateBody(form: EndpointForm) {
  const { url, description, events, enabled } = form;
  return { url, description: description || null, events: chosenEvents(events), enabled };
}

/** What rotating asks first. */
function rotateQuestion(url: string | undefined) {
  return {
    title: 'Rotate the signing secret?',
    body: (
      <p>
        A new secret signs deliveries to <span className="url">{url}</span> from now on; the current
        one keeps working for {WEBHOOK_SECRET_OVERLAP_HOURS} hours.
      </p>
    ),
    confirm: 'Rotate secret',
  };
}

/** What deleting asks first: the URL typed to confirm. */
function deleteQuestion(url: string) {
  return {
    title: 'Delete this endpoint?',
    body: (
      <p>
        The endpoint <span className="url">{url}</span> is deleted with its pending deliveries:
        nothing more is sent to it. This cannot be undone.
      </p>
    ),
    confirm: 'Delete endpoint',
    typeToConfirm: url,
  };
}

function RotatedSecret({ secret, until }: { secret: string; until: Date }) {
  return (
    <SecretPanel title="New signing secret" secret={secret} label="New signing secret">
      <p>
        Until {until.toLocaleString()} ({WEBHOOK_SECRET_OVERLAP_HOURS} hours) every delivery carries
        two signatures, one with the previous secret and one with this one, so you can switch your
        receiver without missing a delivery.
      </p>
    </SecretPanel>
  );
}

/** A writer's edit form (in a panel): URL, description, events, enabled. */
function EditForm({ form, onSave }: { form: EndpointForm; onSave: (event: FormEvent) => void }) {
  const { url, setUrl, description, setDescription, events, setEvents } = form;
  return (
    <form className="stack" onSubmit={onSave}>
      <EndpointFields {...{ url, setUrl, description, setDescription, events, setEvents }} />
      <label className="inline">
        <input
          type="checkbox"
          checked={form.enabled}
          onChange={(e) => form.setEnabled(e.target.checked)}
        />{' '}
        Enabled
      </label>
      <button type="submit">Save changes</button>
    </form>
  );
}
