/**
 * The authorization server, driven with openid-client (a certified relying-party library)
 * through discovery, the real login and consent pages, and every grant.
 */
import { authorizeInBrowser, Browser, discover, formAction, oidc } from './support/oauth';
import { expectStatus } from './support/api';
import {
  alice,
  aliceId,
  api,
  authorizationRequest,
  codeFlow,
  config,
  confidential,
  mallory,
  NATIVE_REDIRECT_URI,
  newMember,
  oauthError,
  orgId,
  otherOrgId,
  PASSWORD,
  publicClient,
  REDIRECT_URI,
  server,
  setUpNorthside,
} from './support/northside';

setUpNorthside();

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
