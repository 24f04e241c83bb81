/**
 * The authorization code flow with PKCE (RFC 6749 §4.1, RFC 7636, S256), for a third-party app
 * that acts for a user: build the URL to send the user to, then exchange the code the browser
 * brings back for tokens that `createClient({ oauth })` takes. Web Crypto only (Node 18+,
 * browsers, edge runtimes); written here for the same reason as ./oauth.ts (one form POST, and
 * the maintained libraries are ES-module-only).
 */
import { webCrypto } from './web-crypto';
import { PlatformOAuthError, requestTokens, type OAuthTokens } from './oauth';

export interface AuthorizationUrlOptions {
  /** Where the API lives, as for `createClient`; the authorize endpoint is `<baseUrl>/oauth/authorize`. */
  baseUrl: string;
  /** The authorization endpoint, if not `<baseUrl>/oauth/authorize`. */
  authorizeUrl?: string;
  clientId: string;
  /** One of the client's registered redirect URIs, exactly. */
  redirectUri: string;
  /** The scopes to ask the user for (space-separated or a list). */
  scope: string | readonly string[];
  /** Default: 32 random bytes. Give your own to tie the flow to your session some other way. */
  state?: string;
  /** Default: 32 random bytes (RFC 7636 §4.1). */
  codeVerifier?: string;
  /** Other authorization request parameters, e.g. `{ prompt: 'consent' }`. */
  params?: Record<string, string>;
}

/** Keep `state` and `codeVerifier` (in the user's session) until the browser comes back. */
export interface AuthorizationRequest {
  /** Send the user's browser here. */
  url: string;
  state: string;
  codeVerifier: string;
}

export interface CodeExchangeOptions {
  baseUrl: string;
  /** The token endpoint, if not `<baseUrl>/oauth/token`. */
  tokenUrl?: string;
  clientId: string;
  /** A confidential client's secret (HTTP Basic); omit for a public client. */
  clientSecret?: string;
  /** The same redirect URI as in the authorization URL. */
  redirectUri: string;
  /** The URL the browser came back to (with `code` and `state`, or `error`), or its query string. */
  callbackUrl: string | URL;
  /** The `state` of the `AuthorizationRequest`; a callback with another is refused. */
  expectedState: string;
  /** The `codeVerifier` of the `AuthorizationRequest`. */
  codeVerifier: string;
  /** Default the global `fetch`. */
  fetch?: typeof fetch;
  /** Bounds the token request. Default 60000. */
  timeoutMs?: number;
}

/** The authorization URL with a fresh `state` and S256 code challenge. */
export async function buildAuthorizationUrl(
  options: AuthorizationUrlOptions,
): Promise<AuthorizationRequest> {
  const state = options.state ?? (await randomToken());
  const codeVerifier = options.codeVerifier ?? (await randomToken());
  if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(codeVerifier))
    throw new TypeError(
      'buildAuthorizationUrl: `codeVerifier` must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636 §4.1).',
    );
  const url = new URL(options.authorizeUrl ?? endpoint(options.baseUrl, '/oauth/authorize'));
  const scope = typeof options.scope === 'string' ? options.scope : options.scope.join(' ');
  const params: Record<string, string> = {
    ...options.params,
    response_type: 'code',
    client_id: options.clientId,
    redirect_uri: options.redirectUri,
    scope,
    state,
    code_challenge: await s256(codeVerifier),
    code_challenge_method: 'S256',
  };
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return { url: url.toString(), state, codeVerifier };
}

/**
 * Checks the callback (an `error` from the authorization server, or a `state` that is not
 * yours, throws `PlatformOAuthError`) and exchanges its code for tokens.
 */
export async function exchangeAuthorizationCode(
  options: CodeExchangeOptions,
): Promise<OAuthTokens> {
  const query =
    options.callbackUrl instanceof URL
      ? options.callbackUrl.searchParams
      : new URLSearchParams(
          options.callbackUrl.includes('?')
            ? options.callbackUrl.slice(options.callbackUrl.indexOf('?') + 1).split('#')[0]
            : options.callbackUrl,
        );
  const error = query.get('error');
  if (error !== null) {
    const description = query.get('error_description') ?? undefined;
    throw new PlatformOAuthError(
      `The authorization request was not granted: ${error}${description ? ` (${description})` : ''}`,
      error,
      0,
      description,
    );
  }
  // A state that is not the one this session sent means the callback was forged (CSRF).
  if (query.get('state') !== options.expectedState)
    throw new PlatformOAuthError(
      'The callback’s `state` is not the one this authorization request sent: start the flow again.',
      'invalid_state',
      0,
    );
  const code = query.get('code');
  if (code === null)
    throw new PlatformOAuthError('The callback has no `code`.', 'invalid_request', 0);
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    redirect_uri: options.redirectUri,
    code_verifier: options.codeVerifier,
  });
  return requestTokens({
    tokenUrl: options.tokenUrl ?? endpoint(options.baseUrl, '/oauth/token'),
    form,
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    fetch: (input: RequestInfo | URL, init?: RequestInit) => fetchImpl(input, init),
    timeoutMs: options.timeoutMs ?? 60_000,
  });
}

function endpoint(baseUrl: string, path: string): string {
  const url = new URL(baseUrl);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}${path}`;
}

/** 32 random bytes, base64url: 43 characters, as RFC 7636 recommends for the verifier. */
async function randomToken(): Promise<string> {
  return base64url((await requireCrypto()).getRandomValues(new Uint8Array(32)));
}

async function s256(verifier: string): Promise<string> {
  const crypto = await requireCrypto();
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  return base64url(new Uint8Array(digest));
}

function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

async function requireCrypto(): Promise<Crypto> {
  const crypto = await webCrypto();
  if (!crypto?.subtle)
    throw new TypeError(
      'Web Crypto is not available here: PKCE needs Node 18+, a browser on a secure origin, Bun or Deno.',
    );
  return crypto;
}
