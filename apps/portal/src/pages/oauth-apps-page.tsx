import { useCallback, useRef, useState, type FormEvent } from 'react';
import type {
  OAuthClient,
  OAuthClientGrantType,
  OAuthClientType,
  PlatformClient,
  Scope,
} from '@platform/client';
import { describeError, formatDate } from '../api';
import { useConfirm } from '../components/dialog';
import {
  emptyListText,
  FilterSelect,
  Pager,
  SearchBox,
  useListPage,
  type ListQuery,
} from '../components/list';
import { FailureNotice } from '../components/states';
import { CheckboxGroup, CopyField, Notice, PageHeading, SecretPanel } from '../components/ui';

/** The API's limit on an app's name (the contract's `text(100)`). */
const NAME_MAX = 100;

const GRANT_TYPES: readonly OAuthClientGrantType[] = [
  'authorization_code',
  'refresh_token',
  'client_credentials',
];

const GRANT_HINTS: Record<OAuthClientGrantType, string> = {
  authorization_code: 'users sign in and approve the app (PKCE)',
  refresh_token: 'the app renews access without the user (with authorization_code)',
  client_credentials: 'the app acts for your organization itself (confidential only)',
};

/** OAuth apps: the list a page at a time; for writers also register, rotate a secret, delete. */
export function OAuthAppsPage({
  client,
  scopes,
  canWrite,
}: {
  client: PlatformClient;
  scopes: Scope[];
  canWrite: boolean;
}) {
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [secret, setSecret] = useState<{ name: string; clientId: string; secret: string } | null>(
    null,
  );
  const [registered, setRegistered] = useState<OAuthClient | null>(null);
  const [name, setName] = useState('');
  const [type, setType] = useState<OAuthClientType>('confidential');
  const [redirects, setRedirects] = useState('');
  const [selected, setSelected] = useState<Set<Scope>>(new Set());
  const [grants, setGrants] = useState<Set<OAuthClientGrantType>>(
    new Set(['authorization_code', 'refresh_token']),
  );
  const [busy, setBusy] = useState(false);

  const [confirm, dialog] = useConfirm();
  const listHeading = useRef<HTMLHeadingElement>(null);
  const fetchPage = useCallback(
    (query: ListQuery) =>
      client.oauthClients.list({
        page: query.page,
        per_page: query.per_page,
        sort: '-created_at',
        ...(typeof query.q === 'string' && { q: query.q }),
        ...((query.type === 'confidential' || query.type === 'public') && { type: query.type }),
      }),
    [client],
  );
  const list = useListPage(fetchPage, { filters: ['q', 'type'] });
  const load = list.reload;
  const apps = list.rows;

  const chooseType = (next: OAuthClientType) => {
    setType(next);
    if (next === 'public') {
      const without = new Set(grants);
      without.delete('client_credentials');
      setGrants(without);
    }
  };

  const register = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setMessage(null);
    if (name.length > NAME_MAX)
      return setError(
        `The name is ${name.length} characters long; at most ${NAME_MAX} are allowed.`,
      );
    if (selected.size === 0) return setError('Choose at least one scope.');
    if (grants.size === 0) return setError('Choose at least one grant type.');
    setBusy(true);
    try {
      const app = await client.oauthClients.create({
        body: {
          name,
          type,
          redirect_uris: redirects
            .split('\n')
            .map((uri) => uri.trim())
            .filter(Boolean),
          scopes: [...selected],
          grant_types: [...grants],
        },
      });
      setRegistered(app);
      setSecret(
        app.client_secret ? { name: app.name, clientId: app.id, secret: app.client_secret } : null,
      );
      setName('');
      setRedirects('');
      setSelected(new Set());
      await load();
    } catch (e) {
      setError(describeError(e));
    } finally {
      setBusy(false);
    }
  };

  const rotate = async (app: OAuthClient) => {
    const ok = await confirm({
      title: 'Rotate the client secret?',
      body: (
        <p>
          The current secret of <strong className="name">{app.name}</strong> (<code>{app.id}</code>)
          stops working at once; the app needs the new one.
        </p>
      ),
      confirm: 'Rotate secret',
    });
    if (!ok) return;
    setError(null);
    try {
      const result = await client.oauthClients.rotateSecret({ params: { id: app.id } });
      setRegistered(null);
      if (result.client_secret)
        setSecret({ name: app.name, clientId: app.id, secret: result.client_secret });
    } catch (e) {
      setError(describeError(e));
    }
  };

  const remove = async (app: OAuthClient) => {
    const ok = await confirm({
      title: 'Delete this app?',
      body: (
        <p>
          The app <strong className="name">{app.name}</strong> (<code>{app.id}</code>) is deleted
          and every token it holds stops working at once. This cannot be undone.
        </p>
      ),
      confirm: 'Delete app',
      typeToConfirm: app.name,
    });
    if (!ok) return;
    setError(null);
    setMessage(null);
    try {
      await client.oauthClients.delete({ params: { id: app.id } });
      if (secret?.clientId === app.id) setSecret(null);
      await load();
      setMessage(`“${app.name}” deleted.`);
      listHeading.current?.focus();
    } catch (e) {
      setError(describeError(e));
    }
  };

  return (
    <>
      {dialog}
      <PageHeading>OAuth apps</PageHeading>
      <p>
        Register an app that signs your organization’s members in with the platform (authorization
        code with PKCE) or calls the API as your organization (client credentials).
      </p>
      {error ? <Notice kind="error">{error}</Notice> : null}
      {list.failure ? (
        <FailureNotice failure={list.failure} onRetry={() => void list.reload()} />
      ) : null}
      {message ? <Notice kind="success">{message}</Notice> : null}
      {registered && !secret ? (
        <section className="secret" aria-labelledby="registered-title">
          <h2 id="registered-title">“{registered.name}” registered</h2>
          <p>A public app has no secret: it proves itself with PKCE.</p>
          <CopyField label="Client ID" value={registered.id} />
        </section>
      ) : null}
      {secret ? (
        <SecretPanel
          title={`Client secret of “${secret.name}”`}
          secret={secret.secret}
          label="Client secret"
        >
          <CopyField label="Client ID" value={secret.clientId} />
        </SecretPanel>
      ) : null}

      <section aria-labelledby="app-list">
        <h2 id="app-list" tabIndex={-1} ref={listHeading}>
          Registered apps
        </h2>
        <div className="filters">
          <SearchBox
            id="app-search"
            label="Search apps"
            value={list.filters.q ?? ''}
            onSearch={(q) => list.update({ q })}
          />
          <FilterSelect
            id="app-type-filter"
            label="Filter by type"
            value={list.filters.type ?? ''}
            onChange={(type) => list.update({ type })}
            all="Every type"
            choices={['confidential', 'public']}
          />
        </div>
        {apps === null ? (
          list.failure ? null : (
            <p>Loading…</p>
          )
        ) : apps.length === 0 ? (
          <p>{emptyListText('apps', list.filters.q, Boolean(list.filters.type))}</p>
        ) : (
          <ul className="cards">
            {apps.map((app) => (
              <li key={app.id} className="card">
                <h3 className="name">{app.name}</h3>
                <dl className="facts">
                  <dt>Client ID</dt>
                  <dd>
                    <code>{app.id}</code>
                  </dd>
                  <dt>Type</dt>
                  <dd>{app.type}</dd>
                  <dt>Redirect URIs</dt>
                  <dd>{app.redirect_uris.length ? app.redirect_uris.join(', ') : '—'}</dd>
                  <dt>Scopes</dt>
                  <dd className="scopes">{app.scopes.join(', ')}</dd>
                  <dt>Grants</dt>
                  <dd>{app.grant_types.join(', ')}</dd>
                  <dt>Created</dt>
                  <dd>{formatDate(app.created_at)}</dd>
                  <dt>Expires</dt>
                  <dd>{app.expires_at ? formatDate(app.expires_at) : 'Never'}</dd>
                </dl>
                {canWrite ? (
                  <div className="actions">
                    {app.type === 'confidential' ? (
                      <button type="button" onClick={() => void rotate(app)}>
                        Rotate secret
                        <span className="visually-hidden">
                          {' '}
                          of app {app.name} ({app.id})
                        </span>
                      </button>
                    ) : null}
                    <button type="button" className="danger" onClick={() => void remove(app)}>
                      Delete
                      <span className="visually-hidden">
                        {' '}
                        app {app.name} ({app.id})
                      </span>
                    </button>
                  </div>
                ) : null}
              </li>
            ))}
          </ul>
        )}
        {list.meta ? (
          <Pager
            meta={list.meta}
            noun="apps"
            label="App pages"
            onPage={(page) => list.update({ page })}
          />
        ) : null}
      </section>

      {canWrite ? (
        <section aria-labelledby="register-app">
          <h2 id="register-app">Register an app</h2>
          <form className="stack" onSubmit={(e) => void register(e)}>
            <div className="field">
              <label htmlFor="app-name">Name</label>
              <input
                id="app-name"
                required
                value={name}
                onChange={(e) => setName(e.target.value)}
                aria-describedby="app-name-hint"
              />
              <span id="app-name-hint" className="hint">
                Shown to users when they sign in to it; up to {NAME_MAX} characters.
              </span>
            </div>
            <fieldset className="checkbox-group">
              <legend>Type</legend>
              <label className="inline">
                <input
                  type="radio"
                  name="app-type"
                  checked={type === 'confidential'}
                  onChange={() => chooseType('confidential')}
                />{' '}
                Confidential <span className="hint">a server that keeps a secret</span>
              </label>
              <label className="inline">
                <input
                  type="radio"
                  name="app-type"
                  checked={type === 'public'}
                  onChange={() => chooseType('public')}
                />{' '}
                Public <span className="hint">a browser or mobile app: PKCE, no secret</span>
              </label>
            </fieldset>
            <div className="field">
              <label htmlFor="app-redirects">Redirect URIs (one per line)</label>
              <textarea
                id="app-redirects"
                rows={3}
                value={redirects}
                onChange={(e) => setRedirects(e.target.value)}
                aria-describedby="app-redirects-hint"
              />
              <span id="app-redirects-hint" className="hint">
                Exact URIs: https, or http on localhost / 127.0.0.1. Needed for authorization_code.
              </span>
            </div>
            <CheckboxGroup
              legend="Scopes"
              options={scopes}
              selected={selected}
              onChange={setSelected}
            />
            <CheckboxGroup
              legend="Grant types"
              options={GRANT_TYPES}
              selected={grants}
              onChange={setGrants}
              describe={(grant) => GRANT_HINTS[grant]}
              disabled={(grant) => grant === 'client_credentials' && type === 'public'}
            />
            <button type="submit" disabled={busy}>
              Register app
            </button>
          </form>
        </section>
      ) : (
        <p className="hint">Your role lets you see apps, not register or change them.</p>
      )}
    </>
  );
}
