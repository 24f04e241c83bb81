import { useCallback, useRef, useState, type FormEvent, type RefObject } from 'react';
import type {
  PersonalAccessToken,
  PersonalAccessTokenWithSecret,
  PlatformClient,
  Scope,
} from '@platform/client';
import { describeError, formatDate } from '../api';
import { useConfirm } from '../components/dialog';
import {
  FilterSelect,
  emptyListText,
  Pager,
  SearchBox,
  TableWrap,
  useListPage,
  type ListQuery,
  type ListState,
} from '../components/list';
import { FailureNotice } from '../components/states';
import { CheckboxGroup, CopyField, Notice, PageHeading, SecretPanel } from '../components/ui';

/** The API's limit on a token's name (the contract's `text(200)`). */
const NAME_MAX = 200;

const EXPIRY_CHOICES = [
  { value: '7', label: '7 days' },
  { value: '30', label: '30 days' },
  { value: '90', label: '90 days' },
  { value: '365', label: '1 year' },
  { value: 'never', label: 'Never' },
] as const;

/** The list's "Show" filter: the API's `status`, derived from `revoked_at` and `expires_at`. */
const STATUS_FILTERS = [
  { value: '', label: 'All tokens' },
  { value: 'active', label: 'Active' },
  { value: 'expired', label: 'Expired' },
  { value: 'revoked', label: 'Revoked' },
] as const;

type StatusFilter = Exclude<(typeof STATUS_FILTERS)[number]['value'], ''>;

const isStatusFilter = (value: unknown): value is StatusFilter =>
  STATUS_FILTERS.some((f) => f.value !== '' && f.value === value);

/** The list's query (page, search and status from the URL) as the API's parameters. */
function tokenQuery(query: ListQuery) {
  return {
    page: query.page,
    per_page: query.per_page,
    sort: '-created_at' as const,
    ...(typeof query.q === 'string' && { q: query.q }),
    ...(isStatusFilter(query.status) && { status: query.status }),
  };
}

/** Why the form cannot be sent as it is, or null. */
function invalidToken(name: string, selected: Set<Scope>): string | null {
  if (name.length > NAME_MAX)
    return `The name is ${name.length} characters long; at most ${NAME_MAX} are allowed.`;
  if (selected.size === 0) return 'Choose at least one scope.';
  return null;
}

/** The expiry choice as the API's `expires_at`: that many days from now, or never. */
function expiresAt(expiry: string): string | null {
  return expiry === 'never'
    ? null
    : new Date(Date.now() + Number(expiry) * 86_400_000).toISOString();
}

/** Revoking names the token and wants its name typed. */
function revokeConfirmation(token: PersonalAccessToken) {
  return {
    title: 'Revoke this token?',
    body: (
      <p>
        The token <strong className="name">{token.name}</strong> (<code>{token.prefix}…</code>)
        stops working at once: every call made with it fails from now on. This cannot be undone.
      </p>
    ),
    confirm: 'Revoke token',
    typeToConfirm: token.name,
  };
}

/**
 * Personal access tokens: create (secret shown once, with a curl line), list (a page at a time,
 * searched by name and shown by status, revoked and expired ones marked), revoke. Creating and revoking are offered only to a session
 * that may (tokens:write within the member's role; not a viewer).
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
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [created, setCreated] = useState<PersonalAccessTokenWithSecret | null>(null);

  const [confirm, dialog] = useConfirm();
  const listHeading = useRef<HTMLHeadingElement>(null);
  const fetchPage = useCallback(
    (query: ListQuery) => client.personalAccessTokens.list(tokenQuery(query)),
    [client],
  );
  const list = useListPage(fetchPage, { filters: ['q', 'status'] });
  const load = list.reload;

  const revoke = async (token: PersonalAccessToken) => {
    const ok = await confirm(revokeConfirmation(token));
    if (!ok) return;
    setError(null);
    setMessage(null);
    try {
      await client.personalAccessTokens.delete({ params: { id: token.id } });
      if (created?.id === token.id) setCreated(null);
      await load();
      setMessage(`Token “${token.name}” revoked.`);
      // The row's button stays (now "revoked"); the list's heading is where to continue from.
      listHeading.current?.focus();
    } catch (e) {
      setError(describeError(e));
    }
  };

  return (
    <>
      {dialog}
      <PageHeading title="Tokens">Personal access tokens</PageHeading>
      <p>
        A personal access token calls the API for your organization with the scopes you give it.
        Send it as <code>Authorization: Bearer pat_…</code>.
      </p>
      {error ? <Notice kind="error">{error}</Notice> : null}
      {list.failure ? (
        <FailureNotice failure={list.failure} onRetry={() => void list.reload()} />
      ) : null}
      {message ? <Notice kind="success">{message}</Notice> : null}
      {created ? (
        <SecretPanel title={`Token “${created.name}” created`} secret={created.token} label="Token">
          <CopyFieldCurl token={created.token} />
        </SecretPanel>
      ) : null}
      {canCreate ? (
        <CreateToken
          client={client}
          scopes={scopes}
          onError={setError}
          onMessage={setMessage}
          onCreated={async (token) => {
            setCreated(token);
            await load();
          }}
        />
      ) : (
        <p className="hint">Your role lets you see tokens, not create them.</p>
      )}
      <TokenList
        list={list}
        headingRef={listHeading}
        canRevoke={canCreate}
        onRevoke={(token) => void revoke(token)}
      />
    </>
  );
}

/** Creating a token: its name, scopes and expiry; the secret is shown by the page. */
function CreateToken({
  client,
  scopes,
  onError,
  onMessage,
  onCreated,
}: {
  client: PlatformClient;
  scopes: Scope[];
  onError: (error: string | null) => void;
  onMessage: (message: string | null) => void;
  onCreated: (token: PersonalAccessTokenWithSecret) => Promise<void>;
}) {
  const [name, setName] = useState('');
  const [selected, setSelected] = useState<Set<Scope>>(new Set());
  const [expiry, setExpiry] = useState<string>('90');
  const [busy, setBusy] = useState(false);

  const create = async (event: FormEvent) => {
    event.preventDefault();
    onError(null);
    onMessage(null);
    const invalid = invalidToken(name, selected);
    if (invalid) {
      onError(invalid);
      return;
    }
    setBusy(true);
    try {
      const token = await client.personalAccessTokens.create({
        body: { name, scopes: [...selected], expires_at: expiresAt(expiry) },
      });
      setName('');
      setSelected(new Set());
      await onCreated(token);
    } catch (e) {
      onError(describeError(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="create-token">
      <h2 id="create-token">Create a token</h2>
      <form onSubmit={(e) => void create(e)} className="stack">
        <div className="field">
          <label htmlFor="token-name">Name</label>
          <input
            id="token-name"
            required
            value={name}
            onChange={(e) => setName(e.target.value)}
            aria-describedby="token-name-hint"
          />
          <span id="token-name-hint" className="hint">
            What it is for, e.g. “nightly SIS sync”; up to {NAME_MAX} characters.
          </span>
        </div>
        <CheckboxGroup
          legend="Scopes"
          options={scopes}
          selected={selected}
          onChange={setSelected}
        />
        <ExpirySelect value={expiry} onChange={setExpiry} />
        <button type="submit" disabled={busy}>
          Create token
        </button>
      </form>
    </section>
  );
}

function ExpirySelect({ value, onChange }: { value: string; onChange: (value: string) => void }) {
  return (
    <div className="field">
      <label htmlFor="token-expiry">Expires</label>
      <select id="token-expiry" value={value} onChange={(e) => onChange(e.target.value)}>
        {EXPIRY_CHOICES.map((c) => (
          <option key={c.value} value={c.value}>
            {c.label}
          </option>
        ))}
      </select>
    </div>
  );
}

/** The tokens by page, searched by name and shown by status. */
function TokenList({
  list,
  headingRef,
  canRevoke,
  onRevoke,
}: {
  list: ListState<PersonalAccessToken>;
  headingRef: RefObject<HTMLHeadingElement | null>;
  canRevoke: boolean;
  onRevoke: (token: PersonalAccessToken) => void;
}) {
  const tokens = list.rows;
  return (
    <section aria-labelledby="token-list">
      <h2 id="token-list" tabIndex={-1} ref={headingRef}>
        Your organization’s tokens
      </h2>
      <div className="filters">
        <SearchBox
          id="token-search"
          label="Search tokens"
          value={list.filters.q ?? ''}
          onSearch={(q) => list.update({ q })}
        />
        <FilterSelect
          id="token-filter"
          label="Show"
          value={isStatusFilter(list.filters.status) ? list.filters.status : ''}
          onChange={(status) => list.update({ status })}
          choices={STATUS_FILTERS}
        />
      </div>
      {tokens === null ? (
        list.failure ? null : (
          <p>Loading…</p>
        )
      ) : tokens.length === 0 ? (
        <p>{emptyListText('tokens', list.filters.q, Boolean(list.filters.status))}</p>
      ) : (
        <TokenTable tokens={tokens} canRevoke={canRevoke} onRevoke={onRevoke} />
      )}
      {list.meta ? (
        <Pager
          meta={list.meta}
          noun="tokens"
          label="Token pages"
          onPage={(page) => list.update({ page })}
        />
      ) : null}
    </section>
  );
}

/** A row a token, revoked and expired ones marked; "Revoke" for those who may. */
function TokenTable({
  tokens,
  canRevoke,
  onRevoke,
}: {
  tokens: PersonalAccessToken[];
  canRevoke: boolean;
  onRevoke: (token: PersonalAccessToken) => void;
}) {
  return (
    <TableWrap label="Token table">
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Prefix</th>
            <th scope="col">Scopes</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">Expires</th>
            {canRevoke ? (
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>
          {tokens.map((token) => (
            <tr key={token.id}>
              <th scope="row" className="name">
                {token.name}
                {token.revoked_at ? (
                  <span className="badge"> revoked {formatDate(token.revoked_at)}</span>
                ) : token.expires_at && Date.parse(token.expires_at) <= Date.now() ? (
                  <span className="badge"> expired</span>
                ) : null}
              </th>
              <td>
                <code>{token.prefix}…</code>
              </td>
              <td className="scopes">{token.scopes.join(', ')}</td>
              <td>{formatDate(token.created_at)}</td>
              <td>{token.last_used_at ? formatDate(token.last_used_at) : 'Never'}</td>
              <td>{token.expires_at ? formatDate(token.expires_at) : 'Never'}</td>
              {canRevoke ? (
                <td>
                  {token.revoked_at ? null : (
                    <button type="button" className="danger" onClick={() => onRevoke(token)}>
                      Revoke
                      <span className="visually-hidden">
                        {' '}
                        token {token.name} ({token.prefix}…)
                      </span>
                    </button>
                  )}
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

/** A ready-to-paste first call with the new token. */
function CopyFieldCurl({ token }: { token: string }) {
  const line = `curl -H "Authorization: Bearer ${token}" "${location.origin}/v1/students?per_page=5"`;
  return <CopyField label="Try it with curl" value={line} />;
}
