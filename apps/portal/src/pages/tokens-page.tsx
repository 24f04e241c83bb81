import { useCallback, useEffect, useRef, useState, type RefObject } from 'react';
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
import { CopyField, Notice, PageHeading, SecretPanel } from '../components/ui';
import { CreateTokenDialog } from './token-create';

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
 * Personal access tokens: the list first (a page at a time, searched by name and shown by status,
 * revoked and expired ones marked), "New token" (a dialog with scope presets; the secret shown
 * once, with a curl line), revoke. Creating and revoking are offered only to a session that may
 * (tokens:write within the member's role; not a viewer).
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

  const revoke = async (token: PersonalAccessToken) => {
    const ok = await confirm(revokeConfirmation(token));
    if (!ok) return;
    setError(null);
    setMessage(null);
    try {
      await client.personalAccessTokens.delete({ params: { id: token.id } });
      if (created?.id === token.id) setCreated(null);
      await list.reload();
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
      {canCreate ? (
        <NewToken
          client={client}
          scopes={scopes}
          onOpen={() => {
            setError(null);
            setMessage(null);
          }}
          onCreated={async (token) => {
            setCreated(token);
            await list.reload();
          }}
        />
      ) : (
        <p className="hint">Your role lets you see tokens, not create them.</p>
      )}
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
      <TokenList
        list={list}
        headingRef={listHeading}
        canRevoke={canCreate}
        onRevoke={(token) => void revoke(token)}
      />
    </>
  );
}

/**
 * "New token" and its dialog. A cancelled dialog gives focus back to the button once it has left
 * (a created token's secret panel, shown by the page, takes focus itself).
 */
function NewToken({
  client,
  scopes,
  onOpen,
  onCreated,
}: {
  client: PlatformClient;
  scopes: Scope[];
  onOpen: () => void;
  onCreated: (token: PersonalAccessTokenWithSecret) => Promise<void>;
}) {
  const [creating, setCreating] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  const refocus = useRef(false);
  useEffect(() => {
    if (creating || !refocus.current) return;
    refocus.current = false;
    button.current?.focus();
  }, [creating]);
  return (
    <>
      <p>
        <button
          type="button"
          className="primary"
          ref={button}
          onClick={() => {
            onOpen();
            setCreating(true);
          }}
        >
          New token
        </button>
      </p>
      {creating ? (
        <CreateTokenDialog
          client={client}
          scopes={scopes}
          onClose={() => {
            refocus.current = true;
            setCreating(false);
          }}
          onCreated={async (token) => {
            setCreating(false);
            await onCreated(token);
          }}
        />
      ) : null}
    </>
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

/** A row a token, revoked and expired ones marked; "Revoke" on active ones, for those who may. */
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
              <th scope="row">
                <span className="name">{token.name}</span>
                <TokenState token={token} />
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
                  {token.revoked_at || isExpired(token) ? null : (
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

const isExpired = (token: PersonalAccessToken) =>
  token.expires_at !== null && Date.parse(token.expires_at) <= Date.now();

/**
 * "Revoked <date>" or "Expired" after a token's name, as a pill of its own (an expired token
 * cannot be revoked: it offers nothing to do).
 */
function TokenState({ token }: { token: PersonalAccessToken }) {
  if (token.revoked_at)
    return <span className="badge state"> Revoked {formatDate(token.revoked_at)}</span>;
  return isExpired(token) ? <span className="badge state"> Expired</span> : null;
}

/** A ready-to-paste first call with the new token. */
function CopyFieldCurl({ token }: { token: string }) {
  const line = `curl -H "Authorization: Bearer ${token}" "${location.origin}/v1/students?per_page=5"`;
  return <CopyField label="Try it with curl" value={line} />;
}
