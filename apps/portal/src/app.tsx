import { useEffect, useMemo, useRef, useState, type KeyboardEvent, type ReactNode } from 'react';
import type { Client, Member, Scope, TokenInfo, User } from '@platform/client';
import { apiClient, classifyError, describeError, type Failure } from './api';
import { FailureNotice, NoAccess } from './components/states';
import { Notice, PageHeading } from './components/ui';
// Each page its own chunk, fetched when first shown (lazy-pages.tsx).
import {
  AccountPage,
  AuditLogPage,
  ExportsPage,
  ImportsPage,
  MembersPage,
  OAuthAppsPage,
  OrganizationPage,
  PageSuspense,
  RequestLogsPage,
  SandboxesPage,
  TokensPage,
  UsagePage,
  WebhookEndpointPage,
  WebhooksPage,
} from './lazy-pages';
import { publishOrganizationName, useOrganizationName } from './page-title';
import { Link, navigate, usePath } from './router';
import { abilitiesOf, type Abilities } from './roles';
import { ActiveSandboxBanner, type SandboxMode, useSandboxMode } from './sandbox-mode';
import { SandboxSwitcher } from './sandbox-switcher';
import { completeSignIn, currentSession, signIn, signOut, type Session } from './session';

/**
 * The pages, each shown in the navigation only when the member's role (from /v1/user) and the
 * session's scopes allow reading it. Hiding is a courtesy: the server refuses on its own.
 */
const SECTIONS: readonly { path: string; label: string; needs: Scope | null }[] = [
  { path: '/tokens', label: 'Tokens', needs: 'tokens:read' },
  { path: '/webhooks', label: 'Webhooks', needs: 'webhooks:read' },
  { path: '/oauth-apps', label: 'OAuth apps', needs: 'oauth_clients:read' },
  { path: '/members', label: 'Members', needs: 'members:read' },
  { path: '/exports', label: 'Exports', needs: 'exports:read' },
  { path: '/imports', label: 'Imports', needs: 'imports:read' },
  { path: '/audit-log', label: 'Audit log', needs: 'audit_log:read' },
  { path: '/request-logs', label: 'Request logs', needs: 'request_logs:read' },
  { path: '/usage', label: 'Usage', needs: 'request_logs:read' },
  { path: '/sandboxes', label: 'Sandboxes', needs: 'organization:read' },
  { path: '/organization', label: 'Organization', needs: 'organization:read' },
  { path: '/account', label: 'Account', needs: null },
];

export function App() {
  const path = usePath();
  const [session, setSession] = useState<Session | null>(() => currentSession());
  if (path === '/callback') return <Callback onSignedIn={setSession} />;
  if (!session) return <SignedOut />;
  return <SignedIn session={session} path={path} />;
}

function Callback({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    completeSignIn(location.href).then(
      (returnTo) => {
        onSignedIn(currentSession()!);
        navigate(returnTo, { replace: true });
      },
      (e: unknown) => setError(describeError(e)),
    );
  }, [onSignedIn]);
  return (
    <main id="main" className="narrow">
      <PageHeading>Signing in…</PageHeading>
      {error ? (
        <>
          <Notice kind="error">{error}</Notice>
          <button type="button" onClick={() => void signIn('/portal/')}>
            Sign in again
          </button>
        </>
      ) : null}
    </main>
  );
}

function SignedOut() {
  const [error, setError] = useState<string | null>(null);
  const start = () =>
    void signIn(location.pathname).catch((e: unknown) => setError(describeError(e)));
  return (
    <main id="main" className="narrow">
      <PageHeading>Platform developer portal</PageHeading>
      <p>
        Manage your organization’s personal access tokens, webhook endpoints and OAuth apps. Sign in
        with your platform account.
      </p>
      {error ? <Notice kind="error">{error}</Notice> : null}
      <button type="button" className="primary" onClick={start}>
        Sign in
      </button>
    </main>
  );
}

function SignedIn({ session, path }: { session: Session; path: string }) {
  const client = useMemo(() => apiClient(session.accessToken), [session.accessToken]);
  // In a sandbox, the pages read and write it (sandbox-mode.tsx).
  const mode = useSandboxMode();
  const data = useMemo(
    () => (mode.active ? apiClient(mode.active.token) : client),
    [mode.active, client],
  );
  const [info, setInfo] = useState<TokenInfo | null>(null);
  const [user, setUser] = useState<User | null>(null);
  const [failure, setFailure] = useState<Failure | null>(null);
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    setFailure(null);
    Promise.all([client.token.retrieve(), client.user.retrieve()]).then(
      ([token, member]) => {
        setInfo(token);
        setUser(member);
        // The header names the organization; without organization:read it says nothing.
        if (token.scopes.includes('organization:read'))
          client.organization.retrieve().then(
            (o) => publishOrganizationName(o.name),
            () => undefined,
          );
      },
      // A revoked session says so and offers to sign in again (FailureNotice).
      (e: unknown) => setFailure(classifyError(e)),
    );
  }, [client, attempt]);

  const abilities = useMemo(
    () => (info && user ? abilitiesOf(user.role, info.scopes) : null),
    [info, user],
  );
  const sections = abilities
    ? SECTIONS.filter((s) => s.needs === null || abilities.can(s.needs))
    : [];
  const route = path === '/' ? '/tokens' : path;
  return (
    <>
      <TopBar
        user={info && user ? user : null}
        sections={sections}
        route={route}
        switcher={<SandboxSwitcher client={client} info={info} mode={mode} />}
      />
      <ActiveSandboxBanner mode={mode} client={data} abilities={abilities} />
      <main id="main">
        {failure ? (
          <>
            <PageHeading>
              {failure.kind === 'unauthenticated' ? 'Signed out' : 'The portal could not load'}
            </PageHeading>
            <FailureNotice
              key={attempt}
              failure={failure}
              onRetry={() => setAttempt((n) => n + 1)}
            />
          </>
        ) : null}
        {!failure && !(info && user) ? <p>Loading…</p> : null}
        {info && user && abilities ? (
          <PageSuspense>
            <Page
              client={data}
              live={{ client, info, mode }}
              route={route}
              scopes={info.scopes}
              user={user}
              abilities={abilities}
            />
          </PageSuspense>
        ) : null}
      </main>
    </>
  );
}

/**
 * The brand, who is signed in (and in which organization), sign-out and the navigation. On a
 * narrow screen (styles.css) these sit behind a Menu button (a disclosure: aria-expanded, Escape
 * or a click elsewhere closes it and focus goes back to the button; opening a page closes it).
 */
function TopBar({
  user,
  sections,
  route,
  switcher,
}: {
  user: User | null;
  sections: readonly { path: string; label: string }[];
  route: string;
  /** Live data or a sandbox (sandbox-switcher.tsx). */
  switcher: ReactNode;
}) {
  const out = () => void signOut();
  // Published by the app on load and by the Organization page on a rename (at once).
  const organization = useOrganizationName();
  const { open, setOpen, header, toggle, onKeyDown } = useMenuDisclosure(route);
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="top" ref={header} onKeyDown={onKeyDown}>
        <p className="brand">Platform developer portal</p>
        <button
          type="button"
          className="menu-toggle"
          ref={toggle}
          aria-expanded={open}
          aria-controls="top-menu"
          onClick={() => setOpen((o) => !o)}
        >
          <span className="bars" aria-hidden="true" />
          Menu
        </button>
        <div id="top-menu" className={open ? 'top-menu open' : 'top-menu'}>
          <div className="who">
            {user ? (
              <span>
                {user.email} ({user.role})
                {organization ? (
                  <>
                    , <span className="org-name">{organization}</span>
                  </>
                ) : null}
              </span>
            ) : null}
            {user && user.memberships.length > 1 ? (
              <button
                type="button"
                onClick={() => void signIn(location.pathname, { switchOrganization: true })}
              >
                Switch organization
              </button>
            ) : null}
            {switcher}
            <button type="button" onClick={out}>
              Sign out
            </button>
          </div>
          <nav aria-label="Portal">
            <ul>
              {sections.map((s) => (
                <li key={s.path}>
                  <Link to={s.path} current={route === s.path || route.startsWith(`${s.path}/`)}>
                    {s.label}
                  </Link>
                </li>
              ))}
            </ul>
          </nav>
        </div>
      </header>
    </>
  );
}

/** The narrow screen's Menu: closes on a new page, a click elsewhere, or Escape (focus back to the button). */
function useMenuDisclosure(route: string) {
  const [open, setOpen] = useState(false);
  const header = useRef<HTMLElement>(null);
  const toggle = useRef<HTMLButtonElement>(null);
  useEffect(() => setOpen(false), [route]);
  useEffect(() => {
    if (!open) return;
    const outside = (event: PointerEvent) => {
      if (!header.current?.contains(event.target as Node)) setOpen(false);
    };
    document.addEventListener('pointerdown', outside);
    return () => document.removeEventListener('pointerdown', outside);
  }, [open]);
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key !== 'Escape' || !open) return;
    setOpen(false);
    toggle.current?.focus();
  };
  return { open, setOpen, header, toggle, onKeyDown };
}

function Page({
  client,
  live,
  route,
  scopes,
  user,
  abilities,
}: {
  client: Client;
  /** The signed-in session's own client: the sandboxes and the account are the parent's. */
  live: { client: Client; info: TokenInfo; mode: SandboxMode };
  route: string;
  scopes: Scope[];
  user: Member;
  abilities: Abilities;
}) {
  const section = SECTIONS.find((s) => route === s.path || route.startsWith(`${s.path}/`));
  if (section?.needs && !abilities.can(section.needs))
    return <NoAccess page={section.label} role={abilities.role} />;
  if (route === '/tokens')
    return (
      <TokensPage
        client={client}
        scopes={scopes.filter((s) => abilities.can(s))}
        canCreate={abilities.can('tokens:write')}
      />
    );
  const webhooksWrite = abilities.can('webhooks:write');
  if (route === '/webhooks') return <WebhooksPage client={client} canWrite={webhooksWrite} />;
  const endpoint = /^\/webhooks\/([^/]+)$/.exec(route);
  if (endpoint?.[1])
    return (
      <WebhookEndpointPage
        key={endpoint[1]}
        client={client}
        id={endpoint[1]}
        canWrite={webhooksWrite}
        canReadEvents={abilities.can('events:read')}
      />
    );
  if (route === '/oauth-apps')
    return (
      <OAuthAppsPage
        client={client}
        scopes={scopes}
        canWrite={abilities.can('oauth_clients:write')}
      />
    );
  if (route === '/members')
    return <MembersPage client={client} abilities={abilities} selfId={user.id} />;
  if (route === '/exports')
    return <ExportsPage client={client} canCreate={abilities.can('exports:write')} />;
  if (route === '/imports')
    return (
      <ImportsPage
        client={client}
        canCreate={abilities.can('imports:write') && abilities.can('students:write')}
      />
    );
  if (route === '/audit-log') return <AuditLogPage client={client} />;
  if (route === '/request-logs') return <RequestLogsPage client={client} />;
  if (route === '/usage') return <UsagePage client={client} />;
  if (route === '/organization') return <OrganizationPage client={client} abilities={abilities} />;
  if (route === '/account') return <AccountPage client={live.client} user={user} />;
  if (route === '/sandboxes') return sandboxesPage(live, abilities);
  return (
    <>
      <PageHeading>Not found</PageHeading>
      <p>
        There is no such page. <Link to="/tokens">Go to your tokens</Link>.
      </p>
    </>
  );
}

/** The parent's sandboxes, read with the session's own client even while in one. */
function sandboxesPage(
  live: { client: Client; info: TokenInfo; mode: SandboxMode },
  abilities: Abilities,
) {
  return (
    <SandboxesPage
      client={live.client}
      info={live.info}
      mode={live.mode}
      canManage={abilities.can('organization:write')}
    />
  );
}
