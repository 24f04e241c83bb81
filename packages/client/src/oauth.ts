/**
 * Where the SDK's bearer token comes from: a fixed token (a personal access token, or an OAuth
 * access token you manage yourself), or OAuth client credentials with which the SDK fetches and
 * refreshes access tokens on its own.
 *
 * The token endpoint call is written here rather than taken from an OAuth library: it is one
 * form POST (RFC 6749 §4.4 and §6), and the maintained libraries (oauth4webapi, openid-client)
 * are ES-module-only, while this SDK ships CommonJS and ESM builds for Node and browsers.
 */
import { PlatformConnectionError, PlatformError } from './errors';

/** What the token endpoint returned, after a refresh or a client credentials grant. */
export interface OAuthTokens {
  accessToken: string;
  /** When the access token stops working (from `expires_in`). */
  expiresAt: Date;
  /** The refresh token to use next time: the server rotates it, so the previous one is spent. */
  refreshToken?: string;
  scope?: string;
}

export interface OAuthOptions {
  clientId: string;
  /** For a confidential client; sent with HTTP Basic authentication. Omit for a public client. */
  clientSecret?: string;
  /**
   * With a refresh token the SDK refreshes (RFC 6749 §6) whenever it needs a new access token.
   * Without one it uses the client credentials grant (confidential clients).
   */
  refreshToken?: string;
  /** An access token you already hold, used until it expires or is refused. */
  accessToken?: string;
  /** When `accessToken` expires; unknown means "use it until the API refuses it". */
  accessTokenExpiresAt?: Date;
  /** Scopes for the client credentials grant (space-separated or a list). */
  scope?: string | readonly string[];
  /** The token endpoint; default `<baseUrl>/oauth/token`. */
  tokenUrl?: string;
  /**
   * Called with every new set of tokens. Persist `refreshToken` here: after a rotation the old
   * one is spent, and presenting it again revokes the whole chain (reuse detection).
   */
  onTokens?: (tokens: OAuthTokens) => void | Promise<void>;
}

/** The token endpoint refused (RFC 6749 §5.2): `error` is e.g. `invalid_grant`, `invalid_client`. */
export class PlatformOAuthError extends PlatformError {
  constructor(
    message: string,
    readonly error: string,
    readonly status: number,
    readonly errorDescription?: string,
  ) {
    super(message);
    this.name = 'PlatformOAuthError';
  }
}

export interface TokenSource {
  /** A token to send now. */
  token(): Promise<string>;
  /**
   * The API refused `token` (401). True if a fresh token may help: the caller then retries once
   * with `token()`.
   */
  refused(token: string): boolean;
}

export function staticTokenSource(token: string): TokenSource {
  return { token: () => Promise.resolve(token), refused: () => false };
}

/** Access tokens are renewed this long before they expire, so none expires in flight. */
const EXPIRY_MARGIN_MS = 30_000;

export class OAuthTokenSource implements TokenSource {
  private accessToken: string | undefined;
  private expiresAt: number | undefined;
  private refreshToken: string | undefined;
  /** The renewal in progress: concurrent callers share it, so a refresh token is used once. */
  private pending: Promise<string> | undefined;

  constructor(
    private readonly options: OAuthOptions,
    private readonly tokenUrl: string,
    private readonly fetchImpl: typeof fetch,
    /** Bounds each token request; a renewal is shared, so one caller's abort does not end it. */
    private readonly timeoutMs: number,
  ) {
    this.accessToken = options.accessToken;
    this.expiresAt = options.accessTokenExpiresAt?.getTime();
    this.refreshToken = options.refreshToken;
  }

  token(): Promise<string> {
    if (
      this.accessToken &&
      (this.expiresAt === undefined || this.expiresAt - EXPIRY_MARGIN_MS > Date.now())
    ) {
      return Promise.resolve(this.accessToken);
    }
    this.pending ??= this.renew().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  refused(token: string): boolean {
    if (token !== this.accessToken) return true; // already renewed by a concurrent call
    this.accessToken = undefined;
    return true;
  }

  private async renew(): Promise<string> {
    const { clientId, clientSecret } = this.options;
    const form = new URLSearchParams();
    if (this.refreshToken) {
      form.set('grant_type', 'refresh_token');
      form.set('refresh_token', this.refreshToken);
    } else {
      if (!clientSecret) {
        throw new PlatformOAuthError(
          'No access token can be obtained: give a refresh token, or a client secret for the client credentials grant.',
          'invalid_request',
          0,
        );
      }
      form.set('grant_type', 'client_credentials');
      const scope = this.options.scope;
      if (scope) form.set('scope', typeof scope === 'string' ? scope : scope.join(' '));
    }
    const tokens = await requestTokens({
      tokenUrl: this.tokenUrl,
      form,
      clientId,
      clientSecret,
      fetch: this.fetchImpl,
      timeoutMs: this.timeoutMs,
    });
    this.accessToken = tokens.accessToken;
    this.expiresAt = tokens.expiresAt.getTime();
    if (tokens.refreshToken) this.refreshToken = tokens.refreshToken;
    await this.options.onTokens?.(tokens);
    return tokens.accessToken;
  }
}

/** One token endpoint request (RFC 6749 §3.2), shared by renewals and the code exchange. */
export async function requestTokens(request: {
  tokenUrl: string;
  form: URLSearchParams;
  clientId: string;
  clientSecret?: string;
  fetch: typeof fetch;
  timeoutMs: number;
}): Promise<OAuthTokens> {
  const { form, clientId, clientSecret } = request;
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
  if (clientSecret) {
    // RFC 6749 §2.3.1: both parts form-urlencoded before base64.
    const basic = `${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`;
    headers.authorization = `Basic ${base64(basic)}`;
  } else {
    form.set('client_id', clientId);
  }
  let response: Response;
  let body: Record<string, unknown>;
  try {
    response = await request.fetch(request.tokenUrl, {
      method: 'POST',
      headers,
      body: form.toString(),
      signal: AbortSignal.timeout(request.timeoutMs),
    });
    body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  } catch (error) {
    // Unreachable or too slow: a connection problem, retried like any other.
    throw new PlatformConnectionError(
      `POST ${request.tokenUrl} could not reach the token endpoint: ${error instanceof Error ? error.message : String(error)}`,
      'POST',
      request.tokenUrl,
      { cause: error },
    );
  }
  if (!response.ok || typeof body.access_token !== 'string') {
    const error = typeof body.error === 'string' ? body.error : 'server_error';
    const description =
      typeof body.error_description === 'string' ? body.error_description : undefined;
    throw new PlatformOAuthError(
      `The token endpoint refused the ${form.get('grant_type')} grant: ${error}${description ? ` (${description})` : ''}`,
      error,
      response.status,
      description,
    );
  }
  const expiresIn = typeof body.expires_in === 'number' ? body.expires_in : 3600;
  return {
    accessToken: body.access_token,
    expiresAt: new Date(Date.now() + expiresIn * 1000),
    ...(typeof body.refresh_token === 'string' && { refreshToken: body.refresh_token }),
    ...(typeof body.scope === 'string' && { scope: body.scope }),
  };
}

function base64(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}
