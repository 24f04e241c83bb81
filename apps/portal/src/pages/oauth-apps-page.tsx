import { useCallback, useRef, useState, type RefObject } from 'react';
import type { OAuthClient, OAuthClientWithSecret, PlatformClient, Scope } from '@platform/client';
import { describeError, formatDate } from '../api';
import { EditApp } from './oauth-app-edit';
import { RegisterApp } from './oauth-app-form';
import { useConfirm } from '../components/dialog';
import {
  emptyListText,
  FilterSelect,
  Pager,
  SearchBox,
  useListPage,
  type ListQuery,
  type ListState,
} from '../components/list';
import { FailureNotice } from '../components/states';
import { CopyField, Notice, PageHeading, SecretPanel } from '../components/ui';

/** A client secret, shown once after registering or rotating. */
interface Secret {
  name: string;
  clientId: string;
  secret: string;
}

/** The list's query (page, search and type from the URL) as the API's parameters. */
function appQuery(query: ListQuery) {
  const type = (['confidential', 'public'] as const).find((t) => t === query.type);
  return {
    page: query.page,
    per_page: query.per_page,
    sort: '-created_at' as const,
    ...(typeof query.q === 'string' && { q: query.q }),
    ...(type && { type }),
  };
}

function rotateConfirmation(app: OAuthClient) {
  return {
    title: 'Rotate the client secret?',
    body: (
      <p>
        The current secret of <strong className="name">{app.name}</strong> (<code>{app.id}</code>)
        stops working at once; the app needs the new one.
      </p>
    ),
    confirm: 'Rotate secret',
  };
}

/** Deleting names the app and wants its name typed. */
function deleteConfirmation(app: OAuthClient) {
  return {
    title: 'Delete this app?',
    body: (
      <p>
        The app <strong className="name">{app.name}</strong> (<code>{app.id}</code>) is deleted and
        every token it holds stops working at once. This cannot be undone.
      </p>
    ),
    confirm: 'Delete app',
    typeToConfirm: app.name,
  };
}

/** Which app the edit dialog is open for; after saving or closing, focus returns to its Edit button. */
function useAppEditor(
  load: () => Promise<void>,
  setError: (error: string | null) => void,
  setMessage: (message: string | null) => void,
) {
  const [editing, setEditing] = useState<OAuthClient | null>(null);
  const focusEdit = (id: string) => document.getElementById(`edit-${id}`)?.focus();
  const onSaved = async (app: OAuthClient) => {
    setEditing(null);
    setError(null);
    await load();
    setMessage(`“${app.name}” saved.`);
    focusEdit(app.id);
  };
  const closeEditor = () => {
    const id = editing?.id;
    setEditing(null);
    if (id) focusEdit(id);
  };
  return { editing, setEditing, onSaved, closeEditor };
}

/** The page's state: its notices, the list, the secret just shown, rotating and deleting. */
function useOAuthApps(client: PlatformClient) {
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [secret, setSecret] = useState<Secret | null>(null);
  const [registered, setRegistered] = useState<OAuthClient | null>(null);

  const [confirm, dialog] = useConfirm();
  const listHeading = useRef<HTMLHeadingElement>(null);
  const fetchPage = useCallback(
    (query: ListQuery) => client.oauthClients.list(appQuery(query)),
    [client],
  );
  const list = useListPage(fetchPage, { filters: ['q', 'type'] });
  const load = list.reload;

  const rotate = async (app: OAuthClient) => {
    const ok = await confirm(rotateConfirmation(app));
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
    const ok = await confirm(deleteConfirmation(app));
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

  const editor = useAppEditor(load, setError, setMessage);

  const onRegistered = async (app: OAuthClientWithSecret) => {
    setRegistered(app);
    setSecret(
      app.client_secret ? { name: app.name, clientId: app.id, secret: app.client_secret } : null,
    );
    await load();
  };
  return {
    dialog,
    error,
    setError,
    message,
    setMessage,
    list,
    secret,
    registered,
    listHeading,
    rotate,
    remove,
    onRegistered,
    ...editor,
  };
}

/** OAuth apps: the list a page at a time; for writers also register, edit, rotate a secret, delete. */
export function OAuthAppsPage({
  client,
  scopes,
  canWrite,
}: {
  client: PlatformClient;
  scopes: Scope[];
  canWrite: boolean;
}) {
  const {
    dialog,
    error,
    setError,
    message,
    setMessage,
    list,
    secret,
    registered,
    listHeading,
    rotate,
    remove,
    onRegistered,
    editing,
    setEditing,
    onSaved,
    closeEditor,
  } = useOAuthApps(client);
  return (
    <>
      {dialog}
      {editing ? (
        <EditApp client={client} app={editing} onClose={closeEditor} onSaved={onSaved} />
      ) : null}
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
      <Credentials registered={registered} secret={secret} />
      <AppList
        list={list}
        headingRef={listHeading}
        canWrite={canWrite}
        onEdit={setEditing}
        onRotate={(app) => void rotate(app)}
        onRemove={(app) => void remove(app)}
      />
      {canWrite ? (
        <RegisterApp
          client={client}
          scopes={scopes}
          onError={setError}
          onMessage={setMessage}
          onRegistered={onRegistered}
        />
      ) : (
        <p className="hint">Your role lets you see apps, not register or change them.</p>
      )}
    </>
  );
}

/** What was just registered or rotated: the client ID, and the secret when there is one. */
function Credentials({
  registered,
  secret,
}: {
  registered: OAuthClient | null;
  secret: Secret | null;
}) {
  return (
    <>
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
    </>
  );
}

/** The apps by page, searched by name and filtered by type. */
function AppList({
  list,
  headingRef,
  canWrite,
  onEdit,
  onRotate,
  onRemove,
}: {
  list: ListState<OAuthClient>;
  headingRef: RefObject<HTMLHeadingElement | null>;
  canWrite: boolean;
  onEdit: (app: OAuthClient) => void;
  onRotate: (app: OAuthClient) => void;
  onRemove: (app: OAuthClient) => void;
}) {
  const apps = list.rows;
  return (
    <section aria-labelledby="app-list">
      <h2 id="app-list" tabIndex={-1} ref={headingRef}>
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
            <AppCard
              key={app.id}
              app={app}
              canWrite={canWrite}
              onEdit={onEdit}
              onRotate={onRotate}
              onRemove={onRemove}
            />
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
  );
}

function AppCard({
  app,
  canWrite,
  onEdit,
  onRotate,
  onRemove,
}: {
  app: OAuthClient;
  canWrite: boolean;
  onEdit: (app: OAuthClient) => void;
  onRotate: (app: OAuthClient) => void;
  onRemove: (app: OAuthClient) => void;
}) {
  return (
    <li className="card">
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
          <button type="button" id={`edit-${app.id}`} onClick={() => onEdit(app)}>
            Edit
            <span className="visually-hidden">
              {' '}
              app {app.name} ({app.id})
            </span>
          </button>
          {app.type === 'confidential' ? (
            <button type="button" onClick={() => onRotate(app)}>
              Rotate secret
              <span className="visually-hidden">
                {' '}
                of app {app.name} ({app.id})
              </span>
            </button>
          ) : null}
          <button type="button" className="danger" onClick={() => onRemove(app)}>
            Delete
            <span className="visually-hidden">
              {' '}
              app {app.name} ({app.id})
            </span>
          </button>
        </div>
      ) : null}
    </li>
  );
}
