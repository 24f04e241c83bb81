/**
 * buildAuthorizationUrl + exchangeAuthorizationCode against the real authorization server
 * (oidc-provider, PKCE required): a user logs in and approves on its pages, and the tokens
 * the exchange returns work with `createClient({ oauth })`, refresh included.
 */
import { createHash } from 'node:crypto';
import { authorizeInBrowser, startTestServer, type TestServer } from '@platform/server/testing';
import {
  buildAuthorizationUrl,
  createClient,
  exchangeAuthorizationCode,
  PlatformOAuthError,
  type OAuthTokens,
} from './index';

const REDIRECT_URI = 'https://sync.example/callback';
const PASSWORD = 'correct horse battery staple';

let server: TestServer;
let orgId: string;
let users = 0;

beforeAll(async () => {
  server = await startTestServer({
    postgresAdminUrl: process.env.TEST_DATABASE_URL,
    redisUrl: process.env.TEST_REDIS_URL,
  });
  orgId = (await server.createOrganization()).id;
  await server.insertStudents(orgId, 2);
});

afterAll(() => server?.close());

async function newUser() {
  const email = `pkce-user-${++users}@school.example`;
  await server.createUser(orgId, email, PASSWORD);
  return { email, password: PASSWORD };
}

async function oauthClient(type: 'confidential' | 'public') {
  return server.createOAuthClient(orgId, {
    type,
    name: `PKCE ${type}`,
    redirect_uris: [REDIRECT_URI],
    scopes: ['students:read'],
  });
}

describe('authorization code + PKCE helpers', () => {
  it('builds an authorize URL with state and an S256 challenge of the verifier', async () => {
    const request = await buildAuthorizationUrl({
      baseUrl: server.url,
      clientId: 'oac_x',
      redirectUri: REDIRECT_URI,
      scope: ['students:read', 'courses:read'],
    });
    const url = new URL(request.url);
    expect(`${url.origin}${url.pathname}`).toBe(`${server.url}/oauth/authorize`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: 'code',
      client_id: 'oac_x',
      redirect_uri: REDIRECT_URI,
      scope: 'students:read courses:read',
      state: request.state,
      code_challenge: createHash('sha256').update(request.codeVerifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    expect(request.codeVerifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(request.state).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const other = await buildAuthorizationUrl({
      baseUrl: server.url,
      clientId: 'oac_x',
      redirectUri: REDIRECT_URI,
      scope: 'students:read',
    });
    expect(other.state).not.toBe(request.state);
    expect(other.codeVerifier).not.toBe(request.codeVerifier);
  });

  it('a confidential client gets tokens the SDK uses and refreshes', async () => {
    const client = await oauthClient('confidential');
    const request = await buildAuthorizationUrl({
      baseUrl: server.url,
      clientId: client.id,
      redirectUri: REDIRECT_URI,
      scope: 'students:read',
    });
    const { callback } = await authorizeInBrowser(server, new URL(request.url), await newUser());
    const tokens = await exchangeAuthorizationCode({
      baseUrl: server.url,
      clientId: client.id,
      clientSecret: client.client_secret!,
      redirectUri: REDIRECT_URI,
      callbackUrl: callback,
      expectedState: request.state,
      codeVerifier: request.codeVerifier,
    });
    expect(tokens.refreshToken).toEqual(expect.any(String));
    expect(tokens.scope).toBe('students:read');

    const renewed: OAuthTokens[] = [];
    const platform = createClient({
      baseUrl: server.url,
      oauth: {
        clientId: client.id,
        clientSecret: client.client_secret!,
        accessToken: tokens.accessToken,
        accessTokenExpiresAt: tokens.expiresAt,
        refreshToken: tokens.refreshToken,
        onTokens: (t) => void renewed.push(t),
      },
    });
    expect((await platform.students.list()).data).toHaveLength(2);
    expect((await platform.token.retrieve()).user_id).toMatch(/^usr_/);
    expect(renewed).toHaveLength(0); // the exchanged access token was used as is

    // An expired access token: the SDK refreshes with the exchanged refresh token.
    const refreshing = createClient({
      baseUrl: server.url,
      oauth: {
        clientId: client.id,
        clientSecret: client.client_secret!,
        accessToken: tokens.accessToken,
        accessTokenExpiresAt: new Date(Date.now() - 1000),
        refreshToken: tokens.refreshToken,
        onTokens: (t) => void renewed.push(t),
      },
    });
    expect((await refreshing.students.list()).data).toHaveLength(2);
    expect(renewed).toHaveLength(1);
    expect(renewed[0]!.refreshToken).not.toBe(tokens.refreshToken);
  });

  it('a public client exchanges with its id and verifier alone; the callback string works too', async () => {
    const client = await oauthClient('public');
    expect(client.client_secret).toBeNull();
    const request = await buildAuthorizationUrl({
      baseUrl: server.url,
      clientId: client.id,
      redirectUri: REDIRECT_URI,
      scope: 'students:read',
    });
    const { callback } = await authorizeInBrowser(server, new URL(request.url), await newUser());
    const tokens = await exchangeAuthorizationCode({
      baseUrl: server.url,
      clientId: client.id,
      redirectUri: REDIRECT_URI,
      callbackUrl: callback.toString(),
      expectedState: request.state,
      codeVerifier: request.codeVerifier,
    });
    const platform = createClient({ baseUrl: server.url, token: tokens.accessToken });
    expect((await platform.students.list()).data).toHaveLength(2);
  });

  it('refuses a callback with another state, a denial, and a wrong verifier', async () => {
    const client = await oauthClient('confidential');
    const exchange = (callbackUrl: URL, state: string, codeVerifier: string) =>
      exchangeAuthorizationCode({
        baseUrl: server.url,
        clientId: client.id,
        clientSecret: client.client_secret!,
        redirectUri: REDIRECT_URI,
        callbackUrl,
        expectedState: state,
        codeVerifier,
      }).catch((e: unknown) => e);
    const start = () =>
      buildAuthorizationUrl({
        baseUrl: server.url,
        clientId: client.id,
        redirectUri: REDIRECT_URI,
        scope: 'students:read',
      });

    const forged = await start();
    const approved = await authorizeInBrowser(server, new URL(forged.url), await newUser());
    const csrf = await exchange(approved.callback, 'someone-elses-state', forged.codeVerifier);
    expect(csrf).toBeInstanceOf(PlatformOAuthError);
    expect(csrf).toMatchObject({ error: 'invalid_state' });

    const denied = await start();
    const refusal = await authorizeInBrowser(server, new URL(denied.url), await newUser(), 'deny');
    expect(await exchange(refusal.callback, denied.state, denied.codeVerifier)).toMatchObject({
      error: 'access_denied',
    });

    const stolen = await start();
    const { callback } = await authorizeInBrowser(server, new URL(stolen.url), await newUser());
    const other = await start();
    // The code without its verifier (an intercepted redirect) is worthless: PKCE.
    expect(await exchange(callback, stolen.state, other.codeVerifier)).toMatchObject({
      error: 'invalid_grant',
      status: 400,
    });
  });
});
