import { useState, type FormEvent } from 'react';
import type {
  PlatformClient,
  WebhookEndpointEvent,
  WebhookEndpointWithSecret,
} from '@platform/client';
import { describeError, EVENT_TYPES } from '../api';
import { CheckboxGroup } from '../components/ui';

export type EventChoice = WebhookEndpointEvent;
const ALL_EVENTS: EventChoice = '*';
const EVENT_CHOICES: readonly EventChoice[] = [ALL_EVENTS, ...EVENT_TYPES];

function describeEvent(choice: EventChoice): string | undefined {
  return choice === ALL_EVENTS ? 'every event type, including ones added later' : undefined;
}

/** URL, description and event types: shared by the create and edit forms. */
export function EndpointFields({
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

export function chosenEvents(events: Set<EventChoice>): EventChoice[] {
  return events.has(ALL_EVENTS) ? [ALL_EVENTS] : [...events];
}

/** Adding an endpoint; its signing secret is shown by the page. */
export function CreateEndpoint({
  client,
  onError,
  onCreated,
}: {
  client: PlatformClient;
  onError: (error: string | null) => void;
  onCreated: (endpoint: WebhookEndpointWithSecret) => Promise<void>;
}) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<Set<EventChoice>>(new Set());
  const [busy, setBusy] = useState(false);

  const create = async (event: FormEvent) => {
    event.preventDefault();
    onError(null);
    if (events.size === 0) return onError('Choose at least one event type.');
    setBusy(true);
    try {
      const endpoint = await client.webhookEndpoints.create({
        body: { url, description: description || null, events: chosenEvents(events) },
      });
      setUrl('');
      setDescription('');
      setEvents(new Set());
      await onCreated(endpoint);
    } catch (e) {
      onError(describeError(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="create-endpoint">
      <h2 id="create-endpoint">Add an endpoint</h2>
      <form className="stack" onSubmit={(e) => void create(e)}>
        <EndpointFields {...{ url, setUrl, description, setDescription, events, setEvents }} />
        <button type="submit" disabled={busy}>
          Add endpoint
        </button>
      </form>
    </section>
  );
}
