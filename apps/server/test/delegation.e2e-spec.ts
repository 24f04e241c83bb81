/**
 * Delegation (api.md): nothing made or changed over the API outgrows or outlives the credential
 * that did it, and only the Authorization header carries a token. One block per finding of the
 * security review, each driven through the HTTP API as an integration would.
 */
import { PersonalAccessToken } from '../src/auth/personal-access-token.entity';
import { OAuthClientRecord } from '../src/oauth/entities';
import { describeScope } from '../src/oauth/pages';
import { authorizeInBrowser, discover, oidc } from './support/oauth';
import { startReceiver, waitFor, type Receiver } from './support/receiver';
import { type ApiResponse, call, client, startServer, type TestServer } from './support/server';

let server: TestServer;
const lines: string[] = [];
let orgId: string;
let admin: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startServer(
    {
      LOG_LEVEL: 'info',
      // Loopback receivers stand in for customers' endpoints.
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_POLL_INTERVAL: '100ms',
    },
    { logDestination: { write: (line: string) => void lines.push(line) } },
  );
  orgId = (await server.createOrganization()).id;
  admin = client(server, (await server.createToken(orgId, ['all'])).token);
});
afterAll(() => server?.close());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function expectForbidden(res: ApiResponse, words: RegExp): void {
  if (res.status !== 403)
    throw new Error(`expected 403, got ${res.status} ${JSON.stringify(res.body)}`);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body.code).toBe('forbidden');
  expect(res.body.detail).toMatch(words);
}

async function confidentialClient(scopes: string[]) {
  const res = await admin.post('/v1/oauth_clients', {
    name: 'Wide App',
    type: 'confidential',
    grant_types: ['client_credentials'],
    scopes,
  });
  expect(res.status).toBe(201);
  return res.body as { id: string; client_secret: string; expires_at: string | null };
}

async function clientCredentials(id: string, secret: string, scope: string): Promise<string> {
  const config = await discover(server, id, secret);
  return (await oidc.clientCredentialsGrant(config, { scope })).access_token;
}

describe('1. taking over an OAuth client needs its scopes', () => {
  it('refuses rotate_secret and delete of a wider client to oauth_clients:write alone, and the old secret keeps working', async () => {
    const wide = await confidentialClient(['all']);
    const narrow = client(server, (await server.createToken(orgId, ['oauth_clients:write'])).token);

    const rotated = await narrow.post(`/v1/oauth_clients/${wide.id}/rotate_secret`);
    expectForbidden(rotated, /rotate the secret of an OAuth client .*lacks: students:read/);
    expect(JSON.stringify(rotated.body)).not.toMatch(/ocs_/);
    // Nothing changed: the old secret still gets an all-powerful token, as its owner expects.
    const token = await clientCredentials(wide.id, wide.client_secret, 'payments:read');
    expect((await call(server, '/v1/payments', { token })).status).toBe(200);

    expectForbidden(await narrow.delete(`/v1/oauth_clients/${wide.id}`), /delete an OAuth client/);
    expect((await admin.get(`/v1/oauth_clients/${wide.id}`)).status).toBe(200);

    // Within its own scopes it may.
    const own = await confidentialClient(['oauth_clients:write']);
    expect((await narrow.post(`/v1/oauth_clients/${own.id}/rotate_secret`)).status).toBe(200);
    expect((await narrow.delete(`/v1/oauth_clients/${own.id}`)).status).toBe(200);
  });
});

describe('2. an OAuth client expires no later than the credential that made it', () => {
  it('binds a client made by an expiring token to its expiry, and refuses a later explicit one', async () => {
    const expires = new Date(Date.now() + 3_600_000);
    const shortLived = client(
      server,
      (
        await server.createToken(orgId, ['oauth_clients:write', 'students:read'], {
          expiresAt: expires,
        })
      ).token,
    );
    const body = { name: 'Bound', type: 'confidential', scopes: ['students:read'] };
    const bound = await shortLived.post('/v1/oauth_clients', {
      ...body,
      grant_types: ['client_credentials'],
    });
    expect(bound.status).toBe(201);
    expect(bound.body.expires_at).toBe(expires.toISOString());
    expect((await admin.get(`/v1/oauth_clients/${bound.body.id}`)).body.expires_at).toBe(
      expires.toISOString(),
    );

    const later = await shortLived.post('/v1/oauth_clients', {
      ...body,
      grant_types: ['client_credentials'],
      expires_at: new Date(expires.getTime() + 60_000).toISOString(),
    });
    expect(later.status).toBe(400);
    expect(later.body.errors[0].path).toBe('body.expires_at');
    const earlier = new Date(expires.getTime() - 60_000).toISOString();
    const sooner = await shortLived.post('/v1/oauth_clients', {
      ...body,
      grant_types: ['client_credentials'],
      expires_at: earlier,
    });
    expect(sooner.status).toBe(201);
    expect(sooner.body.expires_at).toBe(earlier);

    // A token that does not expire makes clients that do not either.
    const forever = await confidentialClient(['students:read']);
    expect(forever.expires_at).toBeNull();
    // Rotating takes control, so the client is bound to the rotating token's expiry too.
    const limited = client(
      server,
      (
        await server.createToken(orgId, ['oauth_clients:write', 'students:read'], {
          expiresAt: expires,
        })
      ).token,
    );
    const rotated = await limited.post(`/v1/oauth_clients/${forever.id}/rotate_secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.expires_at).toBe(expires.toISOString());
  });

  it('a client made by a 1-hour OAuth access token ends with that token', async () => {
    const app = await confidentialClient(['oauth_clients:write', 'students:read']);
    const accessToken = await clientCredentials(
      app.id,
      app.client_secret,
      'oauth_clients:write students:read',
    );
    const info = await call(server, '/v1/token', { token: accessToken });
    expect(info.body.expires_at).not.toBeNull();
    const made = await client(server, accessToken).post('/v1/oauth_clients', {
      name: 'Made by an app',
      type: 'confidential',
      grant_types: ['client_credentials'],
      scopes: ['students:read'],
    });
    expect(made.status).toBe(201);
    expect(made.body.expires_at).toBe(info.body.expires_at);
  });

  it('after its expiry a client gets no tokens, and the tokens it got are refused', async () => {
    const { token: brief } = await server.createToken(
      orgId,
      ['oauth_clients:write', 'students:read'],
      { expiresAt: new Date(Date.now() + 2500) },
    );
    const made = await client(server, brief).post('/v1/oauth_clients', {
      name: 'Short-lived',
      type: 'confidential',
      grant_types: ['client_credentials'],
      scopes: ['students:read'],
    });
    expect(made.status).toBe(201);
    const accessToken = await clientCredentials(
      made.body.id,
      made.body.client_secret,
      'students:read',
    );
    expect((await call(server, '/v1/students', { token: accessToken })).status).toBe(200);

    await sleep(Date.parse(made.body.expires_at) - Date.now() + 200);
    const refused = await call(server, '/v1/students', { token: accessToken });
    expect(refused.status).toBe(401);
    expect(refused.body.detail).toMatch(/expired/);
    const grant = await clientCredentials(made.body.id, made.body.client_secret, 'students:read')
      .then(() => 'granted')
      // A 401 with `WWW-Authenticate: Basic … error="invalid_client"`: the client is unknown now.
      .catch(
        (error: { status?: number; cause?: { parameters?: { error?: string } }[] }) =>
          `${error.status} ${error.cause?.[0]?.parameters?.error}`,
      );
    expect(grant).toBe('401 invalid_client');
  });
});

describe('3. a webhook endpoint receives only what its credential may read, and no longer than it lives', () => {
  let receiver: Receiver;
  let control: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    control = await startReceiver();
    // Proof the dispatcher runs: the administrator's endpoint gets every student event.
    const made = await admin.post('/v1/webhook_endpoints', {
      url: control.url,
      events: ['student.created'],
    });
    expect(made.status).toBe(201);
  });
  afterAll(async () => {
    await receiver?.close();
    await control?.close();
  });

  let studentNumber = 0;
  async function createStudent(): Promise<string> {
    const res = await admin.post('/v1/students', {
      student_number: `DEL-${++studentNumber}`,
      first_name: 'Grace',
      last_name: 'Hopper',
    });
    expect(res.status).toBe(201);
    return res.body.id;
  }

  const receivedStudent = (hook: Receiver, id: string) =>
    hook.ofType('student.created').some((r) => JSON.parse(r.body).data.id === id);

  /** The student reached the control endpoint, and (after a moment more) not `hook`. */
  async function expectNotDelivered(hook: Receiver, id: string): Promise<void> {
    await waitFor(() => receivedStudent(control, id), { what: 'the control delivery' });
    await sleep(300);
    expect(receivedStudent(hook, id)).toBe(false);
  }

  it('refuses event types whose resource the token cannot read, on create and on every change', async () => {
    const writeOnly = client(server, (await server.createToken(orgId, ['webhooks:write'])).token);
    expectForbidden(
      await writeOnly.post('/v1/webhook_endpoints', { url: receiver.url, events: ['*'] }),
      /lacks: courses:read, enrollments:read, exam_results:read, payments:read, students:read/,
    );
    const students = client(
      server,
      (await server.createToken(orgId, ['webhooks:write', 'students:read'])).token,
    );
    expectForbidden(
      await students.post('/v1/webhook_endpoints', { url: receiver.url, events: ['*'] }),
      /lacks: courses:read/,
    );
    expectForbidden(
      await students.post('/v1/webhook_endpoints', {
        url: receiver.url,
        events: ['student.created', 'payment.succeeded'],
      }),
      /lacks: payments:read/,
    );
    const made = await students.post('/v1/webhook_endpoints', {
      url: receiver.url,
      events: ['student.created'],
    });
    expect(made.status).toBe(201);

    // The administrator's endpoint for every event cannot be changed or re-keyed by it.
    const wide = await admin.post('/v1/webhook_endpoints', { url: receiver.url, events: ['*'] });
    for (const res of [
      await students.patch(`/v1/webhook_endpoints/${wide.body.id}`, { url: control.url }),
      await students.patch(`/v1/webhook_endpoints/${wide.body.id}`, { enabled: false }),
      await students.post(`/v1/webhook_endpoints/${wide.body.id}/rotate_secret`),
    ]) {
      expectForbidden(res, /payments:read/);
    }
    // Nor can it widen its own.
    expectForbidden(
      await students.patch(`/v1/webhook_endpoints/${made.body.id}`, { events: ['*'] }),
      /payments:read/,
    );
    expectForbidden(
      await writeOnly.patch(`/v1/webhook_endpoints/${made.body.id}`, {}),
      /students:read/,
    );
    const after = await admin.get(`/v1/webhook_endpoints/${wide.body.id}`);
    expect(after.body).toMatchObject({ url: receiver.url, events: ['*'], enabled: true });
    await admin.delete(`/v1/webhook_endpoints/${wide.body.id}`);
    await admin.delete(`/v1/webhook_endpoints/${made.body.id}`);
  });

  it('records the credential that owns it, stops when that token is revoked or expires, and a new owner can re-enable it', async () => {
    const owner = await server.createToken(orgId, ['webhooks:write', 'students:read']);
    const made = await client(server, owner.token).post('/v1/webhook_endpoints', {
      url: receiver.url,
      events: ['student.created'],
    });
    expect(made.status).toBe(201);
    expect(made.body.owner).toEqual({ type: 'personal_access_token', id: owner.id, user_id: null });
    const first = await createStudent();
    await waitFor(() => receivedStudent(receiver, first), { what: 'the first delivery' });

    expect((await admin.delete(`/v1/personal_access_tokens/${owner.id}`)).status).toBe(200);
    expect((await admin.get(`/v1/webhook_endpoints/${made.body.id}`)).body).toMatchObject({
      enabled: false,
      disabled_reason: 'credential_revoked',
      owner: { type: 'personal_access_token', id: owner.id },
    });
    await expectNotDelivered(receiver, await createStudent());

    // Re-enabling is a change: the administrator's token passes the rule and becomes the owner.
    const reenabled = await admin.patch(`/v1/webhook_endpoints/${made.body.id}`, { enabled: true });
    expect(reenabled.body).toMatchObject({ enabled: true, disabled_reason: null });
    expect(reenabled.body.owner.id).not.toBe(owner.id);
    const third = await createStudent();
    await waitFor(() => receivedStudent(receiver, third), { what: 'delivery after re-enabling' });

    // Expiry has no moment of its own: the next delivery finds it and disables the endpoint.
    const brief = await server.createToken(orgId, ['webhooks:write', 'students:read'], {
      expiresAt: new Date(Date.now() + 1500),
    });
    const expiring = await client(server, brief.token).patch(
      `/v1/webhook_endpoints/${made.body.id}`,
      { description: 'Taken over by a short-lived token' },
    );
    expect(expiring.body.owner).toEqual({
      type: 'personal_access_token',
      id: brief.id,
      user_id: null,
    });
    await sleep(1600);
    await expectNotDelivered(receiver, await createStudent());
    expect((await admin.get(`/v1/webhook_endpoints/${made.body.id}`)).body).toMatchObject({
      enabled: false,
      disabled_reason: 'credential_expired',
    });
    await admin.delete(`/v1/webhook_endpoints/${made.body.id}`);
  });

  it('an endpoint made by an OAuth app lives as long as the client and the user’s grant', async () => {
    // Client credentials: the client is the credential; deleting it ends the endpoint.
    const app = await confidentialClient(['webhooks:write', 'students:read']);
    const appToken = await clientCredentials(
      app.id,
      app.client_secret,
      'webhooks:write students:read',
    );
    const byApp = await client(server, appToken).post('/v1/webhook_endpoints', {
      url: receiver.url,
      events: ['student.created'],
    });
    expect(byApp.status).toBe(201);
    expect(byApp.body.owner).toEqual({ type: 'oauth_client', id: app.id, user_id: null });
    expect((await admin.delete(`/v1/oauth_clients/${app.id}`)).status).toBe(200);
    expect((await admin.get(`/v1/webhook_endpoints/${byApp.body.id}`)).body).toMatchObject({
      enabled: false,
      disabled_reason: 'credential_revoked',
    });

    // A user's grant: revoking its refresh token (RFC 7009) ends the grant, and the endpoint.
    const user = await server.createUser(orgId, 'grant@school.example', 'a long enough password');
    const userApp = await admin.post('/v1/oauth_clients', {
      name: 'Roster Sync',
      type: 'confidential',
      redirect_uris: ['https://roster.example/cb'],
      scopes: ['webhooks:write', 'students:read'],
    });
    const config = await discover(server, userApp.body.id, userApp.body.client_secret);
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: 'https://roster.example/cb',
      scope: 'webhooks:write students:read',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const { callback } = await authorizeInBrowser(server, url, {
      email: 'grant@school.example',
      password: 'a long enough password',
    });
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
    });
    const byUser = await client(server, tokens.access_token).post('/v1/webhook_endpoints', {
      url: receiver.url,
      events: ['student.created'],
    });
    expect(byUser.status).toBe(201);
    expect(byUser.body.owner).toEqual({
      type: 'oauth_client',
      id: userApp.body.id,
      user_id: user.id,
    });
    const before = await createStudent();
    await waitFor(() => receivedStudent(receiver, before), { what: 'delivery while granted' });

    await oidc.tokenRevocation(config, tokens.refresh_token!);
    await expectNotDelivered(receiver, await createStudent());
    expect((await admin.get(`/v1/webhook_endpoints/${byUser.body.id}`)).body).toMatchObject({
      enabled: false,
      disabled_reason: 'credential_revoked',
    });
  });

  it('the consent page says that webhooks:write sends the data it may read elsewhere', () => {
    expect(describeScope('webhooks:write')).toMatch(/records it may read sent.*to an address/);
    expect(describeScope('students:read')).toBe('read students');
  });
});

describe('4. revoking a token needs its scopes', () => {
  it('refuses tokens:write alone revoking a wider token, which keeps working', async () => {
    const wide = await server.createToken(orgId, ['students:read', 'tokens:write']);
    const narrow = client(server, (await server.createToken(orgId, ['tokens:write'])).token);
    expectForbidden(
      await narrow.delete(`/v1/personal_access_tokens/${wide.id}`),
      /revoke a token .*lacks: students:read/,
    );
    expect((await call(server, '/v1/students', { token: wide.token })).status).toBe(200);
    expect((await admin.get(`/v1/personal_access_tokens/${wide.id}`)).body.revoked_at).toBeNull();

    const peer = await server.createToken(orgId, ['tokens:write']);
    expect((await narrow.delete(`/v1/personal_access_tokens/${peer.id}`)).status).toBe(200);
    expect((await call(server, '/v1/token', { token: peer.token })).status).toBe(401);
  });
});

describe('5. only the Authorization header carries a token', () => {
  it('refuses a token in the query string or a JSON body, and never logs it', async () => {
    const { token } = await server.createToken(orgId, ['students:read', 'students:write']);
    const basic = { Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` };
    const student = await admin.post('/v1/students', {
      student_number: 'Q-1',
      first_name: 'Query',
      last_name: 'String',
    });
    const attempts = [
      // A route without query parameters of its own: before, this answered 200.
      await call(server, `/v1/students/${student.body.id}?access_token=${token}`, {
        headers: basic,
      }),
      await call(server, `/v1/students?access_token=${token}`),
      await call(server, `/v1/students?access_token=${token}`, { headers: basic }),
      await call(server, '/v1/students', {
        method: 'POST',
        headers: { ...basic, 'Content-Type': 'application/json' },
        body: JSON.stringify({ access_token: token }),
      }),
      await call(server, `/v1/students?access_token=${token}`, {
        headers: { Authorization: 'Bearer' },
      }),
    ];
    for (const res of attempts) {
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('unauthorized');
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="platform"/);
    }
    // The header alone works; a query parameter beside it is just an unknown parameter.
    expect((await call(server, '/v1/students', { token })).status).toBe(200);
    const beside = await call(server, `/v1/students?access_token=${token}`, { token });
    expect(beside.status).toBe(400);
    expect(beside.body.errors.map((e: { path: string }) => e.path)).toEqual(['query.access_token']);
    expect(JSON.stringify(beside.body)).not.toContain(token);

    await sleep(50);
    const logged = lines.join('\n');
    expect(logged).toContain('"route":"/v1/students"');
    expect(logged).not.toContain(token.slice(4));
  });
});

describe('6. events:write is not a scope', () => {
  it('is refused when asked for, not granted by all, and ignored on credentials that still carry it', async () => {
    const asked = await admin.post('/v1/personal_access_tokens', {
      name: 'x',
      scopes: ['events:read', 'events:write'],
    });
    expect(asked.status).toBe(400);
    expect(asked.body.errors.map((e: { path: string }) => e.path)).toEqual(['body.scopes.1']);

    const all = await admin.post('/v1/personal_access_tokens', { name: 'all', scopes: ['all'] });
    expect(all.body.scopes).toContain('events:read');
    expect(all.body.scopes).not.toContain('events:write');

    // A token and a client stored before the scope went keep working without it.
    const old = await server.createToken(orgId, ['events:read']);
    await server.dataSource.manager.update(
      PersonalAccessToken,
      { id: old.id },
      { scopes: 'events:read events:write' },
    );
    const info = await call(server, '/v1/token', { token: old.token });
    expect(info.status).toBe(200);
    expect(info.body.scopes).toEqual(['events:read']);

    const app = await confidentialClient(['events:read']);
    await server.dataSource.manager.update(
      OAuthClientRecord,
      { id: app.id },
      { scopes: 'events:read events:write' },
    );
    expect((await admin.get(`/v1/oauth_clients/${app.id}`)).body.scopes).toEqual(['events:read']);
    const appToken = await clientCredentials(app.id, app.client_secret, 'events:read');
    expect((await call(server, '/v1/events', { token: appToken })).status).toBe(200);
  });
});
