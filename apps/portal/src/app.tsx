import { useEffect, useMemo, useState } from 'react';
import type { PlatformClient, Scope, TokenInfo } from '@platform/client';
import { apiClient, describeError, isUnauthenticated } from './api';
import { Notice, PageHeading } from './components/ui';
import { OAuthAppsPage } from './pages/oauth-apps-page';
import {
  availableSections,
  OptionalSectionPage,
  type OptionalSection,
} from './pages/optional-sections';
import { TokensPage } from './pages/tokens-page';
import { WebhookEndpointPage, WebhooksPage } from './pages/webhooks-page';
import { Link, navigate, usePath } from './router';
import { completeSignIn, currentSession, signIn, signOut, type Session } from './session';

const MAIN_SECTIONS = [
  { path: '/tokens', label: 'Tokens' },
  { path: '/webhooks', label: 'Webhooks' },
  { path: '/oauth-apps', label: 'OAuth apps' },
] as const;

export function App() {
  const path = usePath();
  const [session, setSession] = useState<Session | null>(() => currentSession());
  if (path === '/callback') return <Callback onSignedIn={setSession} />;
  if (!session) return <SignedOut />;
  return <SignedIn session={session} path={path} onSignedOut={() => setSession(null)} />;
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

function SignedIn({
  session,
  path,
  onSignedOut,
}: {
  session: Session;
  path: string;
  onSignedOut: () => void;
}) {
  const client = useMemo(() => apiClient(session.accessToken), [session.accessToken]);
  const [info, setInfo] = useState<TokenInfo | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [extra, setExtra] = useState<OptionalSection[]>([]);

  useEffect(() => {
    client.token.retrieve().then(setInfo, (e: unknown) => {
      // An expired or revoked session: start again rather than show a broken page.
      if (isUnauthenticated(e)) void signOut().then(onSignedOut);
      else setError(describeError(e));
    });
    availableSections(client).then(setExtra, () => setExtra([]));
  }, [client, onSignedOut]);

  const out = () => void signOut().then(onSignedOut);
  const route = path === '/' ? '/tokens' : path;
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="top">
        <p className="brand">Platform developer portal</p>
        <div className="who">
          {info ? (
            <span>
              Organization <code>{info.organization_id}</code>
            </span>
          ) : null}
          <button type="button" onClick={out}>
            Sign out
          </button>
        </div>
        <nav aria-label="Portal">
          <ul>
            {[...MAIN_SECTIONS, ...extra].map((s) => (
              <li key={s.path}>
                <Link to={s.path} current={route === s.path || route.startsWith(`${s.path}/`)}>
                  {s.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
      </header>
      <main id="main">
        {error ? <Notice kind="error">{error}</Notice> : null}
        {info ? <Page client={client} route={route} scopes={info.scopes} extra={extra} /> : null}
      </main>
    </>
  );
}

function Page({
  client,
  route,
  scopes,
  extra,
}: {
  client: PlatformClient;
  route: string;
  scopes: Scope[];
  extra: OptionalSection[];
}) {
  if (route === '/tokens') return <TokensPage client={client} scopes={scopes} />;
  if (route === '/webhooks') return <WebhooksPage client={client} />;
  const endpoint = /^\/webhooks\/([^/]+)$/.exec(route);
  if (endpoint?.[1])
    return <WebhookEndpointPage key={endpoint[1]} client={client} id={endpoint[1]} />;
  if (route === '/oauth-apps') return <OAuthAppsPage client={client} scopes={scopes} />;
  const section = extra.find((s) => s.path === route);
  if (section) return <OptionalSectionPage key={section.path} client={client} section={section} />;
  return (
    <>
      <PageHeading>Not found</PageHeading>
      <p>
        There is no such page. <Link to="/tokens">Go to your tokens</Link>.
      </p>
    </>
  );
}
