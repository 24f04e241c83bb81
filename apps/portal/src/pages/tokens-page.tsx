import { useCallback, useEffect, useState, type FormEvent } from 'react';
import type {
  PersonalAccessToken,
  PersonalAccessTokenWithSecret,
  PlatformClient,
  Scope,
} from '@platform/client';
import { describeError, formatDate } from '../api';
import { CheckboxGroup, CopyField, Notice, PageHeading, SecretPanel } from '../components/ui';

const EXPIRY_CHOICES = [
  { value: '7', label: '7 days' },
  { value: '30', label: '30 days' },
  { value: '90', label: '90 days' },
  { value: '365', label: '1 year' },
  { value: 'never', label: 'Never' },
] as const;

/**
 * Personal access tokens: create (secret shown once, with a curl line), list, revoke. Creating
 * is offered only to a session that may (tokens:write within the member's role; not a viewer).
 */
export function TokensPage({
  client,
  scopes,
  canCreate,
}: {
  client: PlatformClient;
  scopes: Scope[];
  canCreate: boolean;
}) {
  const [tokens, setTokens] = useState<PersonalAccessToken[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [created, setCreated] = useState<PersonalAccessTokenWithSecret | null>(null);
  const [name, setName] = useState('');
  const [selected, setSelected] = useState<Set<Scope>>(new Set());
  const [expiry, setExpiry] = useState<string>('90');
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    try {
      const page = await client.personalAccessTokens.list({ per_page: 100, sort: '-created_at' });
      setTokens(page.data);
    } catch (e) {
      setError(describeError(e));
    }
  }, [client]);
  useEffect(() => void load(), [load]);

  const create = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setMessage(null);
    if (selected.size === 0) {
      setError('Choose at least one scope.');
      return;
    }
    setBusy(true);
    try {
      const expiresAt =
        expiry === 'never'
          ? null
          : new Date(Date.now() + Number(expiry) * 86_400_000).toISOString();
      const token = await client.personalAccessTokens.create({
        body: { name, scopes: [...selected], expires_at: expiresAt },
      });
      setCreated(token);
      setName('');
      setSelected(new Set());
      await load();
    } catch (e) {
      setError(describeError(e));
    } finally {
      setBusy(false);
    }
  };

  const revoke = async (token: PersonalAccessToken) => {
    if (!window.confirm(`Revoke the token “${token.name}”? Calls made with it fail from now on.`))
      return;
    setError(null);
    try {
      await client.personalAccessTokens.delete({ params: { id: token.id } });
      if (created?.id === token.id) setCreated(null);
      await load();
      setMessage(`Token “${token.name}” revoked.`);
    } catch (e) {
      setError(describeError(e));
    }
  };

  const live = tokens?.filter((t) => !t.revoked_at) ?? [];
  return (
    <>
      <PageHeading>Personal access tokens</PageHeading>
      <p>
        A personal access token calls the API for your organization with the scopes you give it.
        Send it as <code>Authorization: Bearer pat_…</code>.
      </p>
      {error ? <Notice kind="error">{error}</Notice> : null}
      {message ? <Notice kind="success">{message}</Notice> : null}
      {created ? (
        <SecretPanel title={`Token “${created.name}” created`} secret={created.token} label="Token">
          <CopyFieldCurl token={created.token} />
        </SecretPanel>
      ) : null}

      {canCreate ? (
        <section aria-labelledby="create-token">
          <h2 id="create-token">Create a token</h2>
          <form onSubmit={(e) => void create(e)} className="stack">
            <div className="field">
              <label htmlFor="token-name">Name</label>
              <input
                id="token-name"
                required
                maxLength={100}
                value={name}
                onChange={(e) => setName(e.target.value)}
                aria-describedby="token-name-hint"
              />
              <span id="token-name-hint" className="hint">
                What it is for, e.g. “nightly SIS sync”.
              </span>
            </div>
            <CheckboxGroup
              legend="Scopes"
              options={scopes}
              selected={selected}
              onChange={setSelected}
            />
            <div className="field">
              <label htmlFor="token-expiry">Expires</label>
              <select id="token-expiry" value={expiry} onChange={(e) => setExpiry(e.target.value)}>
                {EXPIRY_CHOICES.map((c) => (
                  <option key={c.value} value={c.value}>
                    {c.label}
                  </option>
                ))}
              </select>
            </div>
            <button type="submit" disabled={busy}>
              Create token
            </button>
          </form>
        </section>
      ) : (
        <p className="hint">Your role lets you see tokens, not create them.</p>
      )}

      <section aria-labelledby="token-list">
        <h2 id="token-list">Your organization’s tokens</h2>
        {tokens === null ? (
          <p>Loading…</p>
        ) : live.length === 0 ? (
          <p>No tokens yet.</p>
        ) : (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Prefix</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Expires</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {live.map((token) => (
                  <tr key={token.id}>
                    <th scope="row">{token.name}</th>
                    <td>
                      <code>{token.prefix}…</code>
                    </td>
                    <td className="scopes">{token.scopes.join(', ')}</td>
                    <td>{formatDate(token.created_at)}</td>
                    <td>{token.last_used_at ? formatDate(token.last_used_at) : 'Never'}</td>
                    <td>{token.expires_at ? formatDate(token.expires_at) : 'Never'}</td>
                    <td>
                      <button type="button" className="danger" onClick={() => void revoke(token)}>
                        Revoke<span className="visually-hidden"> {token.name}</span>
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}

/** A ready-to-paste first call with the new token. */
function CopyFieldCurl({ token }: { token: string }) {
  const line = `curl -H "Authorization: Bearer ${token}" "${location.origin}/v1/students?per_page=5"`;
  return <CopyField label="Try it with curl" value={line} />;
}
