import { useCallback, useEffect, useState, type FormEvent } from 'react';
import type { PlatformClient, WebhookDelivery, WebhookEndpoint } from '@platform/client';
import { classifyError, describeError, type Failure, WEBHOOK_SECRET_OVERLAP_HOURS } from '../api';
import { useConfirm } from '../components/dialog';
import { useListPage, type ListQuery } from '../components/list';
import { FailureNotice } from '../components/states';
import { Notice, PageHeading, SecretPanel } from '../components/ui';
import { Link, navigate } from '../router';
import { Deliveries, EndpointHealth } from './webhook-deliveries';
import { chosenEvents, EndpointFields, type EventChoice } from './webhook-endpoint-fields';
import { flashDeleted } from './webhooks-page';

interface PageProps {
  client: PlatformClient;
  id: string;
  canWrite: boolean;
  canReadEvents: boolean;
}

/**
 * One endpoint: its deliveries (a page at a time, by status and event type, in the URL) with
 * redelivery; for writers also edit, rotate its secret, send a test event and delete.
 */
export function WebhookEndpointPage({ client, id, canWrite, canReadEvents }: PageProps) {
  const form = useEndpointForm(client, id);
  const list = useDeliveries(client, id);
  const actions = useEndpointActions(client, id, form, list.reload);
  const { endpoint, failure, load } = form;
  const deliveries = list.rows;

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
      <p className="url">{endpoint.url}</p>
      <p>
        {endpoint.enabled ? 'Enabled' : `Disabled (${endpoint.disabled_reason ?? 'requested'})`}
      </p>
      {actions.error ? <Notice kind="error">{actions.error}</Notice> : null}
      {actions.message ? <Notice kind="success">{actions.message}</Notice> : null}
      {actions.rotated ? <RotatedSecret {...actions.rotated} /> : null}
      {canWrite ? (
        <div className="actions">
          <button type="button" onClick={actions.test} disabled={!endpoint.enabled}>
            Send test event
          </button>
          <button type="button" onClick={actions.rotate}>
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
        onRefresh={() => void actions.act(list.reload)}
        onReplayed={actions.replayed}
        onRedeliver={actions.redeliver}
      />

      {canWrite ? (
        <EditAndDelete form={form} onSave={actions.save} onDelete={actions.remove} />
      ) : null}
    </>
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

  return {
    ...{ endpoint, setEndpoint, failure, load },
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

/** What a writer does to the endpoint, each saying how it went; the confirmation dialog. */
function useEndpointActions(
  client: PlatformClient,
  id: string,
  form: EndpointForm,
  loadDeliveries: () => Promise<void>,
) {
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [rotated, setRotated] = useState<{ secret: string; until: Date } | null>(null);
  const [confirm, dialog] = useConfirm();
  const { endpoint } = form;

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
      if (form.events.size === 0) throw new Error('Choose at least one event type.');
      const updated = await client.webhookEndpoints.update({
        params: { id },
        body: updateBody(form),
      });
      form.setEndpoint(updated);
      setMessage('Endpoint saved.');
    });
  };

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

  return { error, message, rotated, dialog, act, save, rotate, remove, test, redeliver, replayed };
}

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

/** A writer's edit form and delete button. */
function EditAndDelete({
  form,
  onSave,
  onDelete,
}: {
  form: EndpointForm;
  onSave: (event: FormEvent) => void;
  onDelete: () => void;
}) {
  const { url, setUrl, description, setDescription, events, setEvents } = form;
  return (
    <>
      <section aria-labelledby="edit-endpoint">
        <h2 id="edit-endpoint">Edit</h2>
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
      </section>
      <section aria-labelledby="delete-endpoint">
        <h2 id="delete-endpoint">Delete</h2>
        <p>
          Deleting stops every delivery to this endpoint and frees its place (an organization has at
          most 16 endpoints).
        </p>
        <button type="button" className="danger" onClick={onDelete}>
          Delete endpoint
        </button>
      </section>
    </>
  );
}
