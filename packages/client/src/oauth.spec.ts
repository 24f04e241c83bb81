/**
 * The SDK with OAuth credentials against the real server: it gets access tokens with the client
 * credentials grant, refreshes them with a rotating refresh token, and renews a revoked one.
 * The first tokens come from a real authorization code flow (openid-client, PKCE, the login and
 * consent pages), as an integration would get them.
 */
import { authorizeInBrowser, startTestServer, type TestServer } from '@platform/server/testing';
import type * as OpenIdClient from 'openid-client';
import {
  createClient,
  PlatformConnectionError,
  PlatformOAuthError,
  type OAuthOptions,
  type OAuthTokens,
} from './index';

// openid-client is an ES module, which Jest's registry cannot load: use Node's own require.
const oidc: typeof OpenIdClient = process.getBuiltinModule('node:module').createRequire(__filename)(
  'openid-client',
);

const REDIRECT_URI = 'https://sync.example/callback';
const PASSWORD = 'correct horse battery staple';

let server: TestServer;
let orgId: string;
let client: { id: string; client_secret: string | null };
let config: OpenIdClient.Configuration;
let users = 0;

beforeAll(async () => {
  server = await startTestServer({
    postgresAdminUrl: process.env.TEST_DATABASE_URL,
    redisUrl: process.env.TEST_REDIS_URL,
  });
  orgId = (await server.createOrganization()).id;
  await server.insertStudents(orgId, 3);
  client = await server.createOAuthClient(orgId, {
    type: 'confidential',
    name: 'Student Sync',
    redirect_uris: [REDIRECT_URI],
    scopes: ['students:read'],
  });
  config = await oidc.discovery(
    new URL(server.url),
    client.id,
    undefined,
    oidc.ClientSecretBasic(client.client_secret!),
    { algorithm: 'oauth2', execute: [oidc.allowInsecureRequests] },
  );
});

afterAll(() => server?.close());

/** Access and refresh tokens from the authorization code flow, approved by a new member. */
async function userTokens(): Promise<OpenIdClient.TokenEndpointResponse> {
  const email = `sdk-user-${++users}@school.example`;
  await server.createUser(orgId, email, PASSWORD);
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope: 'students:read',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  const { callback } = await authorizeInBrowser(server, url, { email, password: PASSWORD });
  return oidc.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: verifier,
    expectedState: state,
  });
}

/** An SDK on the test client's credentials, recording every set of tokens it is handed. */
function sdkWith(oauth: Partial<OAuthOptions>) {
  const issued: OAuthTokens[] = [];
  const sdk = createClient({
    baseUrl: server.url,
    oauth: {
      clientId: client.id,
      clientSecret: client.client_secret!,
      onTokens: (tokens) => void issued.push(tokens),
      ...oauth,
    },
  });
  return { sdk, issued };
}

describe('createClient({ oauth })', () => {
  it('gets a token with the client credentials grant once, and reuses it', async () => {
    const { sdk, issued } = sdkWith({ scope: ['students:read'] });
    const [a, b] = await Promise.all([sdk.students.list(), sdk.students.list()]);
    expect(a.data).toHaveLength(3);
    expect(b.data).toHaveLength(3);
    await sdk.students.list();
    expect(issued).toHaveLength(1);
    expect(issued[0]!.scope).toBe('students:read');
    expect(issued[0]!.expiresAt.getTime() - Date.now()).toBeGreaterThan(3500_000);
    const info = await sdk.token.retrieve();
    expect(info).toMatchObject({ type: 'oauth_access_token', client_id: client.id, user_id: null });
  });

  it('refreshes from a refresh token, once for concurrent calls, and hands over the rotated one', async () => {
    const first = await userTokens();
    const { sdk, issued } = sdkWith({ refreshToken: first.refresh_token! });
    const pages = await Promise.all([1, 2, 3, 4, 5].map(() => sdk.students.list()));
    expect(pages.every((page) => page.data.length === 3)).toBe(true);
    // One refresh for all five: a second use of the same refresh token would revoke the chain.
    expect(issued).toHaveLength(1);
    expect(issued[0]!.refreshToken).toEqual(expect.any(String));
    expect(issued[0]!.refreshToken).not.toBe(first.refresh_token);
    const info = await sdk.token.retrieve();
    expect(info.user_id).toMatch(/^usr_/);
  });

  it('renews an access token the API refuses (401), and sends the call again', async () => {
    const first = await userTokens();
    const { sdk, issued } = sdkWith({
      // An access token the server no longer knows, as after it expired early.
      accessToken: 'x'.repeat(43),
      refreshToken: first.refresh_token!,
    });
    expect((await sdk.students.list()).data).toHaveLength(3);
    expect(issued).toHaveLength(1);
    // The renewed token is used from then on.
    expect((await sdk.students.list()).data).toHaveLength(3);
    expect(issued).toHaveLength(1);
  });

  it('says why when the token endpoint refuses', async () => {
    const { sdk } = sdkWith({ clientSecret: 'ocs_wrong', scope: 'students:read' });
    const error = await sdk.students.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatformOAuthError);
    expect(error).toMatchObject({ error: 'invalid_client', status: 401 });
  });

  it('reports an unreachable token endpoint as a connection error', async () => {
    const sdk = createClient({
      baseUrl: server.url,
      maxRetries: 0,
      oauth: { clientId: client.id, tokenUrl: 'http://127.0.0.1:9/oauth/token', clientSecret: 'x' },
    });
    const error = await sdk.students.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatformConnectionError);
    expect((error as Error).message).toContain('token endpoint');
  });

  it('wants either a token or OAuth credentials', () => {
    expect(() => createClient({ baseUrl: server.url })).toThrow(/either `token`.*or `oauth`/);
    expect(() =>
      createClient({ baseUrl: server.url, token: 'pat_x', oauth: { clientId: client.id } }),
    ).toThrow(/either/);
  });
});
