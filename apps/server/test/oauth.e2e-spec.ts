/**
 * The authorization server, driven with openid-client (a certified relying-party library)
 * through discovery, the real login and consent pages, and every grant.
 */
import type * as OpenIdClient from 'openid-client';
import {
  authorizeInBrowser,
  Browser,
  discover,
  formAction,
  oidc,
  type AuthorizeResult,
} from './support/oauth';
import { expectStatus, typedClient } from './support/api';
import { rawCall, startServer, type TestServer } from './support/server';

const PASSWORD = 'correct horse battery staple';
const REDIRECT_URI = 'https://app.example/callback';
const NATIVE_REDIRECT_URI = 'http://127.0.0.1:8765/callback';

let server: TestServer;
let orgId: string;
let otherOrgId: string;
const alice = { email: 'alice@school.example', password: PASSWORD };
const mallory = { email: 'mallory@other.example', password: PASSWORD };
let confidential: { id: string; client_secret: string | null };
let publicClient: { id: string };
let config: OpenIdClient.Configuration;
let aliceId: string;

beforeAll(async () => {
  server = await startServer();
  orgId = (await server.createOrganization({ name: 'Northside School' })).id;
  otherOrgId = (await server.createOrganization({ name: 'Other School' })).id;
  aliceId = (await server.createUser(orgId, alice.email, alice.password)).id;
  await server.createUser(otherOrgId, mallory.email, mallory.password);
  confidential = await server.createOAuthClient(orgId, {
    type: 'confidential',
    name: 'Gradebook Sync',
    redirect_uris: [REDIRECT_URI],
    scopes: ['students:read', 'students:write', 'courses:read'],
  });
  publicClient = await server.createOAuthClient(orgId, {
    type: 'public',
    name: 'Teacher Desktop',
    redirect_uris: [NATIVE_REDIRECT_URI],
    scopes: ['students:read'],
  });
  config = await discover(server, confidential.id, confidential.client_secret);
});

afterAll(() => server?.close());

/** An authorization URL with PKCE (S256) and state, as openid-client builds it. */
async function authorizationRequest(
  cfg: OpenIdClient.Configuration,
  params: Record<string, string> = {},
) {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(cfg, {
    redirect_uri: REDIRECT_URI,
    scope: 'students:read courses:read',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...params,
  });
  return { url, verifier, state };
}

let members = 0;

/**
 * A new member of the school, so that each flow signs in as someone fresh (the login limit
 * counts every attempt per account).
 */
async function newMember(): Promise<{ email: string; password: string; id: string }> {
  const email = `teacher${++members}@school.example`;
  const { id } = await server.createUser(orgId, email, PASSWORD);
  return { email, password: PASSWORD, id };
}

async function codeFlow(
  cfg: OpenIdClient.Configuration = config,
  params: Record<string, string> = {},
  user?: { email: string; password: string },
): Promise<{ tokens: OpenIdClient.TokenEndpointResponse; result: AuthorizeResult }> {
  const request = await authorizationRequest(cfg, params);
  const result = await authorizeInBrowser(server, request.url, user ?? (await newMember()));
  const tokens = await oidc.authorizationCodeGrant(cfg, result.callback, {
    pkceCodeVerifier: request.verifier,
    expectedState: request.state,
  });
  return { tokens, result };
}

async function oauthError(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    // openid-client reports a 401 challenge (WWW-Authenticate) apart from a body error.
    const challenge = (error as { cause?: { parameters?: { error?: string } }[] }).cause;
    return (
      (error as { error?: string }).error ??
      (Array.isArray(challenge) ? challenge[0]?.parameters?.error : undefined) ??
      String(error)
    );
  }
  throw new Error('expected the OAuth call to fail');
}

/** The API as the bearer of `token` calls it. */
const api = (token: string) => typedClient(server, token);

describe('metadata (RFC 8414)', () => {
  it('publishes the endpoints, PKCE S256 only, the code flow only, and our scopes', async () => {
    // OAuth metadata is outside the contract: called raw.
    const res = await rawCall(server, '/.well-known/oauth-authorization-server');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      issuer: server.url,
      authorization_endpoint: `${server.url}/oauth/authorize`,
      token_endpoint: `${server.url}/oauth/token`,
      revocation_endpoint: `${server.url}/oauth/revoke`,
      introspection_endpoint: `${server.url}/oauth/introspect`,
      code_challenge_methods_supported: ['S256'],
      response_types_supported: ['code'],
      authorization_response_iss_parameter_supported: true,
    });
    const metadata = res.body as Record<string, string[]>;
    expect(metadata.grant_types_supported?.sort()).toEqual(
      ['authorization_code', 'client_credentials', 'refresh_token'].sort(),
    );
    expect(metadata.scopes_supported).toEqual(
      expect.arrayContaining(['students:read', 'tokens:write']),
    );
    expect(metadata.token_endpoint_auth_methods_supported).not.toContain('client_secret_jwt');
    expect(res.body).not.toHaveProperty('userinfo_endpoint');
    // Not offered: sender-constrained tokens the API would not check, and PAR.
    expect(res.body).not.toHaveProperty('dpop_signing_alg_values_supported');
    expect(res.body).not.toHaveProperty('pushed_authorization_request_endpoint');
  });

  it("names its endpoints on the issuer's origin, whatever Host the request used", async () => {
    const res = await fetch(`${server.url}/.well-known/oauth-authorization-server`, {
      headers: { host: 'evil.example' },
    });
    const body = (await res.json()) as Record<string, string>;
    expect(body.token_endpoint).toBe(`${server.url}/oauth/token`);
    expect(body.authorization_endpoint).toBe(`${server.url}/oauth/authorize`);
  });

  it('is not an OpenID Provider: no openid-configuration', async () => {
    expect((await rawCall(server, '/.well-known/openid-configuration')).status).toBe(404);
  });
});

describe('client credentials', () => {
  it('issues a 1-hour token for the organization that the API accepts, with only its scopes', async () => {
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'students:read' });
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.refresh_token).toBeUndefined();
    const info = expectStatus(await api(tokens.access_token).token.retrieve(), 200);
    expect(info.body).toMatchObject({
      type: 'oauth_access_token',
      organization_id: orgId,
      scopes: ['students:read'],
      client_id: confidential.id,
      user_id: null,
      personal_access_token_id: null,
    });
    expect(info.body.expires_at).not.toBeNull();
    const expiresIn = Date.parse(info.body.expires_at!) - Date.now();
    expect(expiresIn).toBeGreaterThan(3500_000);
    expect(expiresIn).toBeLessThanOrEqual(3600_000);
    expect((await api(tokens.access_token).students.list()).status).toBe(200);
    const denied = await api(tokens.access_token).courses.list();
    expect(denied.status).toBe(403);
    expect(denied.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
  });

  it('refuses scopes the client is not allowed', async () => {
    expect(await oauthError(oidc.clientCredentialsGrant(config, { scope: 'payments:write' }))).toBe(
      'invalid_scope',
    );
  });

  it('refuses a wrong client secret', async () => {
    const wrong = await discover(server, confidential.id, 'ocs_not-the-secret');
    expect(await oauthError(oidc.clientCredentialsGrant(wrong, { scope: 'students:read' }))).toBe(
      'invalid_client',
    );
  });

  it('is not offered to a public client', async () => {
    const pub = await discover(server, publicClient.id);
    expect(await oauthError(oidc.clientCredentialsGrant(pub, { scope: 'students:read' }))).toMatch(
      /unauthorized_client|invalid_request/,
    );
  });
});

describe('authorization code with PKCE, through the login and consent pages', () => {
  it('shows the app and the scopes, and issues tokens bound to the user, client and scopes', async () => {
    const { tokens, result } = await codeFlow(config, {}, alice);
    expect(result.loginPage).toContain('Gradebook Sync');
    expect(result.loginPage).toMatch(/<label for="password">/);
    expect(result.consentPage).toContain('Gradebook Sync');
    expect(result.consentPage).toContain('students:read');
    expect(result.consentPage).toContain('courses:read');
    expect(result.consentPage).not.toContain('students:write');
    // RFC 9207: the issuer comes back with the code.
    expect(result.callback.searchParams.get('iss')).toBe(server.url);
    expect(tokens.refresh_token).toEqual(expect.any(String));
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.scope?.split(' ').sort()).toEqual(['courses:read', 'students:read']);
    const info = expectStatus(await api(tokens.access_token).token.retrieve(), 200);
    expect(info.body).toMatchObject({
      type: 'oauth_access_token',
      organization_id: orgId,
      client_id: confidential.id,
      user_id: aliceId,
    });
    expect((await api(tokens.access_token).courses.list()).status).toBe(200);
    expect((await api(tokens.access_token).payments.list()).status).toBe(403);
  });

  it('names the organization the app acts for and where the browser goes afterwards', async () => {
    const member = await newMember();
    const request = await authorizationRequest(config);
    const browser = new Browser(server.url);
    const login = await browser.follow(request.url.toString());
    expect(login.body).toContain('It acts for <strong>Northside School</strong>');
    expect(login.body).toContain(`<code>${REDIRECT_URI}</code>`);
    const consent = await browser.follow(formAction(login.body, '/login'), {
      method: 'POST',
      form: { email: member.email, password: member.password },
    });
    expect(consent.body).toContain('Allow Gradebook Sync to access Northside School?');
    expect(consent.body).toContain(`Signed in as <strong>${member.email}</strong>`);
    expect(consent.body).toContain(`Allowing sends you back to <code>${REDIRECT_URI}</code>`);
  });

  it("'Not you?' forgets who is signed in and asks again; the app's token is then the other member's", async () => {
    const first = await newMember();
    const second = await newMember();
    const request = await authorizationRequest(config);
    const browser = new Browser(server.url);
    const login = await browser.follow(request.url.toString());
    const consent = await browser.follow(formAction(login.body, '/login'), {
      method: 'POST',
      form: { email: first.email, password: first.password },
    });
    expect(consent.body).toContain(`Signed in as <strong>${first.email}</strong>`);
    const again = await browser.follow(formAction(consent.body, '/switch'), { method: 'POST' });
    expect(again.status).toBe(200);
    expect(again.body).toContain('<h1>Sign in to continue to Gradebook Sync</h1>');
    const consentAsSecond = await browser.follow(formAction(again.body, '/login'), {
      method: 'POST',
      form: { email: second.email, password: second.password },
    });
    expect(consentAsSecond.body).toContain(`Signed in as <strong>${second.email}</strong>`);
    const done = await browser.follow(formAction(consentAsSecond.body, '/consent'), {
      method: 'POST',
      form: { decision: 'approve' },
    });
    const tokens = await oidc.authorizationCodeGrant(
      config,
      new URL(done.headers.get('location')!),
      { pkceCodeVerifier: request.verifier, expectedState: request.state },
    );
    expect(expectStatus(await api(tokens.access_token).token.retrieve(), 200).body.user_id).toBe(
      second.id,
    );
  });

  it("'Not you?' after the first member had approved the app before: the next member gets their own grant, not the first one's", async () => {
    const first = await newMember();
    const second = await newMember();
    const browser = new Browser(server.url);
    // The first member approves a narrow request, then the app asks for more in the same browser.
    const narrow = await authorizationRequest(config, { scope: 'students:read' });
    const login = await browser.follow(narrow.url.toString());
    const consent = await browser.follow(formAction(login.body, '/login'), {
      method: 'POST',
      form: { email: first.email, password: first.password },
    });
    await browser.follow(formAction(consent.body, '/consent'), {
      method: 'POST',
      form: { decision: 'approve' },
    });
    const wider = await authorizationRequest(config);
    const ask = await browser.follow(wider.url.toString());
    expect(ask.body).toContain(`Signed in as <strong>${first.email}</strong>`);
    const again = await browser.follow(formAction(ask.body, '/switch'), { method: 'POST' });
    const consentAsSecond = await browser.follow(formAction(again.body, '/login'), {
      method: 'POST',
      form: { email: second.email, password: second.password },
    });
    expect(consentAsSecond.status).toBe(200);
    const done = await browser.follow(formAction(consentAsSecond.body, '/consent'), {
      method: 'POST',
      form: { decision: 'approve' },
    });
    const tokens = await oidc.authorizationCodeGrant(
      config,
      new URL(done.headers.get('location')!),
      { pkceCodeVerifier: wider.verifier, expectedState: wider.state },
    );
    expect(expectStatus(await api(tokens.access_token).token.retrieve(), 200).body.user_id).toBe(
      second.id,
    );
  });

  it("'Not you?' needs the interaction cookie: another site cannot sign a user out", async () => {
    const member = await newMember();
    const request = await authorizationRequest(config);
    const browser = new Browser(server.url);
    const login = await browser.follow(request.url.toString());
    const consent = await browser.follow(formAction(login.body, '/login'), {
      method: 'POST',
      form: { email: member.email, password: member.password },
    });
    const res = await fetch(new URL(formAction(consent.body, '/switch'), server.url), {
      method: 'POST',
      redirect: 'manual',
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    // The member is still signed in: the consent page still names them.
    const still = await browser.follow(request.url.toString());
    expect(still.body).toContain(`Signed in as <strong>${member.email}</strong>`);
  });

  it('works for a public client with PKCE and no secret', async () => {
    const pub = await discover(server, publicClient.id);
    const request = await authorizationRequest(pub, {
      redirect_uri: NATIVE_REDIRECT_URI,
      scope: 'students:read',
    });
    const result = await authorizeInBrowser(server, request.url, await newMember());
    expect(result.callback.origin).toBe('http://127.0.0.1:8765');
    const tokens = await oidc.authorizationCodeGrant(pub, result.callback, {
      pkceCodeVerifier: request.verifier,
      expectedState: request.state,
    });
    expect((await api(tokens.access_token).students.list()).status).toBe(200);
  });

  it('requires PKCE with S256 from every client', async () => {
    const missing = new URL(`${server.url}/oauth/authorize`);
    missing.search = new URLSearchParams({
      client_id: confidential.id,
      response_type: 'code',
      redirect_uri: REDIRECT_URI,
      scope: 'students:read',
      state: 'abc',
    }).toString();
    const res = await new Browser(server.url).request(missing.toString());
    const location = new URL(res.headers.get('location')!);
    expect(location.origin + location.pathname).toBe(REDIRECT_URI);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toMatch(/PKCE/);

    missing.searchParams.set('code_challenge', 'a'.repeat(43));
    missing.searchParams.set('code_challenge_method', 'plain');
    const plain = await new Browser(server.url).request(missing.toString());
    expect(new URL(plain.headers.get('location')!).searchParams.get('error')).toBe(
      'invalid_request',
    );
  });

  it('offers neither the implicit nor the password grant', async () => {
    const { url } = await authorizationRequest(config, { response_type: 'token' });
    const res = await new Browser(server.url).request(url.toString());
    const location = new URL(res.headers.get('location')!);
    expect(
      location.searchParams.get('error') ??
        new URLSearchParams(location.hash.slice(1)).get('error'),
    ).toBe('unsupported_response_type');
    const password = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${confidential.id}:${confidential.client_secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({
        grant_type: 'password',
        username: alice.email,
        password: PASSWORD,
      }),
    });
    expect(password.status).toBe(400);
    expect(((await password.json()) as { error: string }).error).toBe('unsupported_grant_type');
  });

  it('never redirects to an unregistered redirect URI', async () => {
    const { url } = await authorizationRequest(config, { redirect_uri: 'https://evil.example/cb' });
    const res = await new Browser(server.url).request(url.toString());
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.body).toContain('redirect_uri');
    expect(res.body).not.toContain('<script');
  });

  it('rejects a wrong PKCE verifier', async () => {
    const request = await authorizationRequest(config);
    const result = await authorizeInBrowser(server, request.url, await newMember());
    const error = await oauthError(
      oidc.authorizationCodeGrant(config, result.callback, {
        pkceCodeVerifier: oidc.randomPKCECodeVerifier(),
        expectedState: request.state,
      }),
    );
    expect(error).toBe('invalid_grant');
  });

  it('rejects an expired code', async () => {
    const request = await authorizationRequest(config);
    const result = await authorizeInBrowser(server, request.url, await newMember());
    // Codes live 60 s; age this one past that instead of waiting.
    await server.dataSource
      .getRepository('OAuthArtifactRecord')
      .update({ kind: 'AuthorizationCode' }, { expiresAt: new Date(Date.now() - 1000) });
    const error = await oauthError(
      oidc.authorizationCodeGrant(config, result.callback, {
        pkceCodeVerifier: request.verifier,
        expectedState: request.state,
      }),
    );
    expect(error).toBe('invalid_grant');
  });

  it('rejects a reused code and revokes the tokens it issued', async () => {
    const request = await authorizationRequest(config);
    const result = await authorizeInBrowser(server, request.url, await newMember());
    const checks = { pkceCodeVerifier: request.verifier, expectedState: request.state };
    const first = await oidc.authorizationCodeGrant(config, result.callback, checks);
    expect((await api(first.access_token).students.list()).status).toBe(200);
    expect(await oauthError(oidc.authorizationCodeGrant(config, result.callback, checks))).toBe(
      'invalid_grant',
    );
    expect((await api(first.access_token).students.list()).status).toBe(401);
  });

  it('returns access_denied (with iss) when the user denies', async () => {
    const request = await authorizationRequest(config);
    const result = await authorizeInBrowser(server, request.url, await newMember(), 'deny');
    expect(result.callback.searchParams.get('error')).toBe('access_denied');
    expect(result.callback.searchParams.get('iss')).toBe(server.url);
    expect(result.callback.searchParams.get('state')).toBe(request.state);
  });

  it('refuses a consent POST that arrives without the interaction cookie (cross-site)', async () => {
    const { url } = await authorizationRequest(config);
    const user = await newMember();
    const browser = new Browser(server.url);
    const login = await browser.follow(url.toString());
    const consent = await browser.follow(formAction(login.body, '/login'), {
      method: 'POST',
      form: user,
    });
    // Another site's page posting the same form: the browser sends no SameSite=Lax cookie.
    const forged = await new Browser(server.url).request(formAction(consent.body, '/consent'), {
      method: 'POST',
      form: { decision: 'approve' },
    });
    expect(forged.status).toBe(400);
    expect(forged.headers.get('location')).toBeNull();
    expect(forged.body).toContain('expired or is not yours');
  });

  it("does not let a session from another organization's app approve this one", async () => {
    // Mallory signs in for an app of her own organization…
    const hers = await server.createOAuthClient(otherOrgId, {
      type: 'public',
      redirect_uris: [NATIVE_REDIRECT_URI],
      scopes: ['students:read'],
    });
    const herConfig = await discover(server, hers.id);
    const browser = new Browser(server.url);
    const own = await authorizationRequest(herConfig, {
      redirect_uri: NATIVE_REDIRECT_URI,
      scope: 'students:read',
    });
    const login = await browser.follow(own.url.toString());
    const consent = await browser.follow(formAction(login.body, '/login'), {
      method: 'POST',
      form: mallory,
    });
    const done = await browser.follow(formAction(consent.body, '/consent'), {
      method: 'POST',
      form: { decision: 'approve' },
    });
    expect(new URL(done.headers.get('location')!).searchParams.get('code')).toBeTruthy();

    // …then, with the same browser session, opens this organization's public app.
    const pub = await discover(server, publicClient.id);
    const theirs = await authorizationRequest(pub, {
      redirect_uri: NATIVE_REDIRECT_URI,
      scope: 'students:read',
    });
    const page = await browser.follow(theirs.url.toString());
    expect(page.status).not.toBe(302);
    expect(page.body).not.toContain('value="approve"');
    expect(page.body).toContain('Sign in');
    const forced = await browser.request(
      `/oauth/interaction/${/interaction\/([^/"]+)\//.exec(page.body)![1]}/consent`,
      { method: 'POST', form: { decision: 'approve' } },
    );
    expect(forced.headers.get('location') ?? '').not.toContain('code=');
  });

  it("does not let a member of another organization approve this organization's app", async () => {
    const { url } = await authorizationRequest(config);
    const browser = new Browser(server.url);
    const login = await browser.follow(url.toString());
    const res = await browser.follow(formAction(login.body, '/login'), {
      method: 'POST',
      form: mallory,
    });
    expect(res.status).toBe(403);
    expect(res.body).toContain('another organization');
  });

  it('throttles password guessing per account', async () => {
    const { url } = await authorizationRequest(config);
    const browser = new Browser(server.url);
    const login = await browser.follow(url.toString());
    const action = formAction(login.body, '/login');
    const target = { email: 'guess-target@school.example', password: 'wrong password 1' };
    await server.createUser(orgId, target.email, PASSWORD);
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      statuses.push((await browser.request(action, { method: 'POST', form: target })).status);
    }
    expect(statuses).toEqual([...Array<number>(10).fill(401), 429]);
    // Even the right password is refused while throttled.
    const right = await browser.request(action, {
      method: 'POST',
      form: { ...target, password: PASSWORD },
    });
    expect(right.status).toBe(429);
    expect(right.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('serves the pages with a CSP that lets their forms reach only this server and the app', async () => {
    const { url } = await authorizationRequest(config);
    const login = await new Browser(server.url).follow(url.toString());
    const csp = login.headers.get('content-security-policy')!;
    expect(csp).toContain("form-action 'self' https://app.example");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(login.headers.get('cache-control')).toBe('no-store');
  });
});

describe('refresh tokens', () => {
  it('rotate on every use, and a reused one revokes the whole chain', async () => {
    const { tokens } = await codeFlow();
    const second = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(second.refresh_token).toEqual(expect.any(String));
    expect(second.refresh_token).not.toBe(tokens.refresh_token);
    expect((await api(second.access_token).students.list()).status).toBe(200);

    // The first refresh token again: someone holds a copy. Everything from this grant dies.
    expect(await oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token!))).toBe(
      'invalid_grant',
    );
    expect(await oauthError(oidc.refreshTokenGrant(config, second.refresh_token!))).toBe(
      'invalid_grant',
    );
    expect((await api(second.access_token).students.list()).status).toBe(401);
    expect((await api(tokens.access_token).students.list()).status).toBe(401);
  });

  it('used twice at the same moment, only one use succeeds', async () => {
    const { tokens } = await codeFlow();
    const results = await Promise.allSettled([
      oidc.refreshTokenGrant(config, tokens.refresh_token!),
      oidc.refreshTokenGrant(config, tokens.refresh_token!),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled').length).toBeLessThanOrEqual(1);
  });

  it('keep the scopes of the grant', async () => {
    const { tokens } = await codeFlow(config, { scope: 'students:read' });
    const next = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    const info = expectStatus(await api(next.access_token).token.retrieve(), 200);
    expect(info.body.scopes).toEqual(['students:read']);
  });
});

describe('revocation (RFC 7009) and introspection (RFC 7662)', () => {
  it('a revoked access token is refused on the next request', async () => {
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'students:read' });
    expect((await api(tokens.access_token).students.list()).status).toBe(200);
    await oidc.tokenRevocation(config, tokens.access_token);
    const res = await api(tokens.access_token).students.list();
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('revoking a refresh token ends it', async () => {
    const { tokens } = await codeFlow();
    await oidc.tokenRevocation(config, tokens.refresh_token!);
    expect(await oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token!))).toBe(
      'invalid_grant',
    );
  });

  it("revoking a user's access token also ends its refresh token (the whole grant)", async () => {
    const { tokens } = await codeFlow();
    await oidc.tokenRevocation(config, tokens.access_token);
    expect((await api(tokens.access_token).students.list()).status).toBe(401);
    expect(await oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token!))).toBe(
      'invalid_grant',
    );
  });

  it('introspection describes a live token and reports revoked ones inactive', async () => {
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'students:read' });
    const live = await oidc.tokenIntrospection(config, tokens.access_token);
    expect(live).toMatchObject({
      active: true,
      client_id: confidential.id,
      scope: 'students:read',
      token_type: 'Bearer',
    });
    expect(live.exp! - Math.floor(Date.now() / 1000)).toBeGreaterThan(3500);
    await oidc.tokenRevocation(config, tokens.access_token);
    expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
  });

  it('tells a public client nothing, even about a live token', async () => {
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'students:read' });
    const pub = await discover(server, publicClient.id);
    const answer = await oidc.tokenIntrospection(pub, tokens.access_token);
    expect(answer).toEqual({ active: false });
    expect((await api(tokens.access_token).students.list()).status).toBe(200);
  });
});

describe('storage', () => {
  it('keeps no usable token, code or session id in the database', async () => {
    const { tokens, result } = await codeFlow();
    const cc = await oidc.clientCredentialsGrant(config, { scope: 'students:read' });
    const rows: { payload: string; id_hash: string }[] = await server.dataSource.query(
      'SELECT payload, id_hash FROM oauth_artifacts',
    );
    expect(rows.length).toBeGreaterThan(5);
    const dump = JSON.stringify(rows);
    for (const secret of [
      tokens.access_token,
      tokens.refresh_token!,
      cc.access_token,
      result.callback.searchParams.get('code')!,
    ]) {
      expect(dump).not.toContain(secret);
    }
    for (const row of rows) expect(JSON.parse(row.payload)).not.toHaveProperty('jti');
    // The tokens still work: they are found by their hash.
    expect((await api(cc.access_token).students.list()).status).toBe(200);
  });
});

describe('OAuth clients and the tokens issued to them', () => {
  it('deleting a client refuses its tokens at once', async () => {
    const client = await server.createOAuthClient(orgId, {
      type: 'confidential',
      grant_types: ['client_credentials'],
    });
    const cfg = await discover(server, client.id, client.client_secret);
    const tokens = await oidc.clientCredentialsGrant(cfg, { scope: 'students:read' });
    // The client holds every scope, so deleting it takes a token that does too (delegation).
    const admin = await server.createToken(orgId, ['all']);
    expect((await api(tokens.access_token).students.list()).status).toBe(200);
    const deleted = await api(admin.token).oauthClients.delete({ params: { id: client.id } });
    expect(deleted.status).toBe(200);
    expect((await api(tokens.access_token).students.list()).status).toBe(401);
  });

  it('a token is for its own organization only', async () => {
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'students:read' });
    const [student] = await server.insertStudents(otherOrgId, 1);
    expect(
      (await api(tokens.access_token).students.retrieve({ params: { id: student!.id } })).status,
    ).toBe(404);
  });
});

// docs/security.md promises no CORS anywhere; oidc-provider answered preflights with
// Access-Control-Allow-Origin echoing any origin.
describe('no CORS, as on the API', () => {
  const corsHeaders = (res: Response) =>
    [...res.headers.keys()].filter((name) => name.startsWith('access-control-'));
  const origin = 'https://app.example';

  it.each(['/oauth/token', '/oauth/revoke', '/oauth/introspect'])(
    'a preflight to %s gets no Access-Control-* header',
    async (path) => {
      const res = await fetch(`${server.url}${path}`, {
        method: 'OPTIONS',
        headers: {
          Origin: origin,
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'authorization, content-type',
        },
      });
      expect(res.status).toBe(204);
      expect(corsHeaders(res)).toEqual([]);
    },
  );

  it.each([
    ['/oauth/token', 'grant_type=client_credentials&scope=students%3Aread'],
    ['/oauth/revoke', 'token=anything'],
    ['/oauth/introspect', 'token=anything'],
  ])(
    'a request to %s from a browser origin gets none either, and is refused',
    async (path, body) => {
      const basic = Buffer.from(`${confidential.id}:${confidential.client_secret}`).toString(
        'base64',
      );
      const res = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: {
          Origin: origin,
          Authorization: `Basic ${basic}`,
          'Content-Type': 'application/x-www-form-urlencoded',
        },
        body,
      });
      expect(corsHeaders(res)).toEqual([]);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: 'invalid_request' });
    },
  );

  it('the metadata gets none', async () => {
    const res = await fetch(`${server.url}/.well-known/oauth-authorization-server`, {
      headers: { Origin: origin },
    });
    expect(res.status).toBe(200);
    expect(corsHeaders(res)).toEqual([]);
  });
});
