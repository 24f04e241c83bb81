import { buildAuthorizationUrl, exchangeAuthorizationCode } from '@platform/client';

/**
 * Sign-in: the platform's own OAuth 2.0 authorization code flow with PKCE (S256), as a public
 * client the server builds in for the portal (apps/server/src/oauth/portal-client.ts). The
 * server shows its sign-in page, skips consent for this first-party client, and redirects back
 * to /portal/callback on this origin.
 *
 * The access token is kept in sessionStorage: it survives a reload of the tab (no redirect
 * round-trip each time), is not shared with other tabs, and is gone when the tab closes. The
 * portal's CSP allows only its own scripts (no inline script, no other origin), which is what
 * protects it from being read; memory alone would not be safer against a script that runs in
 * the page, and would sign the user out on every reload. No refresh token is issued: the
 * session ends with the token (an hour); signing in again is a redirect while the server's
 * sign-in cookie lives.
 */
export const PORTAL_CLIENT_ID = 'oac_0000000000000000000000P0RT';
export const PORTAL_BASE = '/portal';

const TOKEN_KEY = 'platform.portal.session';
const PENDING_KEY = 'platform.portal.pending';

export interface Session {
  accessToken: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

interface PendingSignIn {
  state: string;
  codeVerifier: string;
  /** Where to go back to after signing in (a path under /portal). */
  returnTo: string;
}

function redirectUri(): string {
  return `${location.origin}${PORTAL_BASE}/callback`;
}

export function currentSession(): Session | null {
  const raw = sessionStorage.getItem(TOKEN_KEY);
  if (!raw) return null;
  try {
    const session = JSON.parse(raw) as Session;
    if (typeof session.accessToken === 'string' && session.expiresAt > Date.now()) return session;
  } catch {
    // A damaged entry is the same as none.
  }
  sessionStorage.removeItem(TOKEN_KEY);
  return null;
}

/**
 * Sends the browser to the server's sign-in page. `switchOrganization`: signed in already, to
 * choose another of the account's organizations (the server offers the choice without asking
 * for the password again).
 */
export async function signIn(
  returnTo: string,
  options: { switchOrganization?: boolean } = {},
): Promise<void> {
  const request = await buildAuthorizationUrl({
    baseUrl: location.origin,
    clientId: PORTAL_CLIENT_ID,
    redirectUri: redirectUri(),
    // Every scope the client may have; the server gives a member no more than their role allows.
    scope: await supportedScopes(),
    ...(options.switchOrganization && { params: { prompt: 'login' } }),
  });
  const pending: PendingSignIn = {
    state: request.state,
    codeVerifier: request.codeVerifier,
    returnTo: returnTo.startsWith(`${PORTAL_BASE}/`) ? returnTo : `${PORTAL_BASE}/`,
  };
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
  location.assign(request.url);
}

/** The scopes the authorization server offers (RFC 8414 metadata, on this origin). */
async function supportedScopes(): Promise<string[]> {
  const response = await fetch('/.well-known/oauth-authorization-server', {
    headers: { Accept: 'application/json' },
  });
  if (!response.ok) throw new Error(`The sign-in service answered ${response.status}.`);
  const metadata = (await response.json()) as { scopes_supported?: string[] };
  return metadata.scopes_supported ?? [];
}

let completing: { url: string; result: Promise<string> } | null = null;

/**
 * On /portal/callback: trades the code for a token; returns where to go next. Once per callback
 * URL (a code is single-use; React may run the effect that calls this twice in development).
 */
export function completeSignIn(callbackUrl: string): Promise<string> {
  if (completing?.url !== callbackUrl)
    completing = { url: callbackUrl, result: exchange(callbackUrl) };
  return completing.result;
}

async function exchange(callbackUrl: string): Promise<string> {
  const raw = sessionStorage.getItem(PENDING_KEY);
  sessionStorage.removeItem(PENDING_KEY);
  if (!raw) throw new Error('This sign-in was not started in this tab. Sign in again.');
  const pending = JSON.parse(raw) as PendingSignIn;
  const tokens = await exchangeAuthorizationCode({
    baseUrl: location.origin,
    clientId: PORTAL_CLIENT_ID,
    redirectUri: redirectUri(),
    callbackUrl,
    expectedState: pending.state,
    codeVerifier: pending.codeVerifier,
  });
  const session: Session = {
    accessToken: tokens.accessToken,
    expiresAt: tokens.expiresAt.getTime(),
  };
  sessionStorage.setItem(TOKEN_KEY, JSON.stringify(session));
  return pending.returnTo;
}

/** Forgets the token and revokes it (RFC 7009), so a copy of it stops working too. */
export async function forgetSession(): Promise<void> {
  const session = currentSession();
  sessionStorage.removeItem(TOKEN_KEY);
  // A sandbox's token lives no longer than the session it was made for (sandbox-mode.tsx).
  sessionStorage.removeItem('platform.portal.sandbox');
  if (!session) return;
  await fetch('/oauth/revoke', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      token: session.accessToken,
      token_type_hint: 'access_token',
      client_id: PORTAL_CLIENT_ID,
    }),
  }).catch(() => undefined);
}

/**
 * "Sign out", in one step: the server ends this browser's sign-in session and revokes the portal
 * token together (no confirmation page to leave half-way), so the next "Sign in" here asks for
 * the password. Then the token is forgotten (and revoked again, should that call have failed).
 */
export async function signOut(): Promise<void> {
  const session = currentSession();
  if (session) {
    await fetch('/oauth/session/end/portal', {
      method: 'POST',
      headers: { Authorization: `Bearer ${session.accessToken}` },
    }).catch(() => undefined);
  }
  await forgetSession();
  location.assign(`${PORTAL_BASE}/`);
}
