import { useState } from 'react';
import {
  WEBHOOK_EVENT_TYPES,
  type Client,
  type Sandbox,
  type SandboxTriggerEvent,
  type TokenInfo,
} from '@platform/client';
import { describeError } from './api';
import { Notice } from './components/ui';
import type { Abilities } from './roles';
import { currentSession } from './session';

/**
 * Working in a sandbox (docs/sandboxes.md): the portal holds a `pat_test_` token of it, made for
 * the signed-in member with the session's own scopes and expiry, and every page but Sandboxes and
 * Account reads and writes through it. Kept in sessionStorage beside the session: a reload stays
 * in the sandbox, a new tab or a sign-out does not.
 */
const KEY = 'platform.portal.sandbox';

export interface ActiveSandbox {
  id: string;
  name: string;
  token: string;
  expiresAt: string | null;
}

export function currentSandbox(): ActiveSandbox | null {
  try {
    const found = JSON.parse(sessionStorage.getItem(KEY) ?? 'null') as ActiveSandbox | null;
    if (found?.expiresAt && Date.parse(found.expiresAt) <= Date.now()) return null;
    return found;
  } catch {
    return null;
  }
}

/** The sandbox the portal works in, if any, and how to enter one or leave it. */
export function useSandboxMode() {
  const [active, setActive] = useState<ActiveSandbox | null>(() => currentSandbox());
  return {
    active,
    enter: (sandbox: ActiveSandbox) => {
      sessionStorage.setItem(KEY, JSON.stringify(sandbox));
      setActive(sandbox);
    },
    leave: () => {
      sessionStorage.removeItem(KEY);
      setActive(null);
    },
  };
}

export type SandboxMode = ReturnType<typeof useSandboxMode>;

/**
 * A token of `sandbox` for this session: its scopes, expiring with it. The portal's own token
 * reports no expiry (what a member makes there is theirs, not the session's), so the session's
 * end is given explicitly: switching in never leaves a token behind that outlives the sign-in.
 */
export async function openSandbox(
  client: Client,
  info: TokenInfo,
  sandbox: Sandbox,
): Promise<ActiveSandbox> {
  const session = currentSession();
  const expiresAt = session ? new Date(session.expiresAt).toISOString() : info.expires_at;
  const made = await client.sandboxes.createToken(sandbox.id, {
    body: { name: 'Portal session', scopes: info.scopes, expires_at: expiresAt },
  });
  return { id: sandbox.id, name: sandbox.name, token: made.token, expiresAt: made.expires_at };
}

/** Every event a trigger can make: the webhook event types (a ping is a webhook test only). */
const TRIGGER_TYPES: readonly SandboxTriggerEvent[] = WEBHOOK_EVENT_TYPES;

/** The banner while in a sandbox, nothing otherwise; a session that cannot write gets no trigger. */
export function ActiveSandboxBanner({
  mode,
  client,
  abilities,
}: {
  mode: SandboxMode;
  client: Client;
  abilities: Abilities | null;
}) {
  if (!mode.active) return null;
  return (
    <SandboxBanner
      active={mode.active}
      client={client}
      onLeave={mode.leave}
      readOnly={!abilities?.writes}
    />
  );
}

/** Shown on every page while in a sandbox: what it is, a trigger, and the way back. */
export function SandboxBanner({
  active,
  client,
  onLeave,
  readOnly,
}: {
  active: ActiveSandbox;
  client: Client;
  onLeave: () => void;
  /** A viewer's session: no write scope, so no trigger (the server would refuse it). */
  readOnly: boolean;
}) {
  const [event, setEvent] = useState<SandboxTriggerEvent>('enrollment.completed');
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<{ kind: 'error' | 'success'; text: string } | null>(null);
  async function trigger() {
    setBusy(true);
    setResult(null);
    try {
      const done = await client.sandbox.trigger({ body: { event } });
      setResult({ kind: 'success', text: `Sent ${done.event.type} (${done.event.id}).` });
    } catch (e) {
      setResult({ kind: 'error', text: describeError(e) });
    } finally {
      setBusy(false);
    }
  }
  return (
    <section className="sandbox-banner" aria-label="Sandbox">
      <p>
        <strong>Sandbox: {active.name}.</strong> Test data, not your school’s records; its own
        tokens, webhooks and events.
      </p>
      <div className="sandbox-actions">
        {readOnly ? (
          <p>Your role reads only: triggering an event needs a write scope.</p>
        ) : (
          <TriggerControls event={event} setEvent={setEvent} busy={busy} trigger={trigger} />
        )}
        <button type="button" onClick={onLeave}>
          Back to live data
        </button>
      </div>
      {result ? <Notice kind={result.kind}>{result.text}</Notice> : null}
    </section>
  );
}

function TriggerControls({
  event,
  setEvent,
  busy,
  trigger,
}: {
  event: SandboxTriggerEvent;
  setEvent: (event: SandboxTriggerEvent) => void;
  busy: boolean;
  trigger: () => Promise<void>;
}) {
  return (
    <>
      <label htmlFor="trigger-event">Event</label>
      <select
        id="trigger-event"
        value={event}
        onChange={(e) => setEvent(e.target.value as SandboxTriggerEvent)}
      >
        {TRIGGER_TYPES.map((type) => (
          <option key={type} value={type}>
            {type}
          </option>
        ))}
      </select>
      <button type="button" disabled={busy} onClick={() => void trigger()}>
        Trigger event
      </button>
    </>
  );
}
