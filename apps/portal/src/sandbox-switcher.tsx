import { useEffect, useState } from 'react';
import type { Client, Sandbox, TokenInfo } from '@platform/client';
import { describeError } from './api';
import { openSandbox, type SandboxMode } from './sandbox-mode';

const CHANGED = 'platform:sandboxes-changed';

/** Tells the header's switcher that sandboxes were made, reset or deleted (the Sandboxes page). */
export function publishSandboxesChanged(): void {
  window.dispatchEvent(new Event(CHANGED));
}

/**
 * The header's switcher: live data or one of the organization's sandboxes, from any page. Read
 * with the session's own client (the parent's); shown only when there is a sandbox to go to.
 */
export function SandboxSwitcher({
  client,
  info,
  mode,
}: {
  client: Client;
  info: TokenInfo | null;
  mode: SandboxMode;
}) {
  const [sandboxes, setSandboxes] = useState<Sandbox[]>([]);
  const [error, setError] = useState<string | null>(null);
  const reads = info?.scopes.includes('organization:read') ?? false;
  useEffect(() => {
    if (!reads) return;
    const load = () => {
      client.sandboxes.list({ per_page: 100 }).then(
        (page) => setSandboxes(page.data),
        () => setSandboxes([]),
      );
    };
    load();
    window.addEventListener(CHANGED, load);
    return () => window.removeEventListener(CHANGED, load);
  }, [client, reads]);
  if (!info || sandboxes.length === 0) return null;

  const choose = async (id: string) => {
    setError(null);
    const sandbox = sandboxes.find((s) => s.id === id);
    if (!sandbox) return mode.leave();
    try {
      mode.enter(await openSandbox(client, info, sandbox));
    } catch (e) {
      setError(describeError(e));
    }
  };
  return (
    <span className="sandbox-switcher">
      <label htmlFor="sandbox-switcher">Data</label>{' '}
      <select
        id="sandbox-switcher"
        value={mode.active?.id ?? ''}
        onChange={(e) => void choose(e.target.value)}
      >
        <option value="">Live</option>
        {sandboxes.map((s) => (
          <option key={s.id} value={s.id}>
            Sandbox: {s.name}
          </option>
        ))}
      </select>
      {error ? <span role="alert"> {error}</span> : null}
    </span>
  );
}
