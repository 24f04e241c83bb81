/**
 * Delegation (api.md): nothing made or changed over the API outgrows or outlives the credential
 * that did it, and only the Authorization header carries a token. One block per finding of the
 * security review, each driven through the HTTP API as an integration would.
 */
import { type Problem, readScopesForEvents } from '@platform/contract';
import { PersonalAccessToken } from '../src/auth/personal-access-token.entity';
import { OAuthClientRecord } from '../src/oauth/entities';
import { describeScope } from '../src/oauth/pages';
import { ManualClock } from '../src/testing';
import { type BodyOf, expectStatus, typedClient, type TypedClient } from './support/api';
import { authorizeInBrowser, discover, oidc } from './support/oauth';
import { startReceiver, waitFor, type Receiver } from './support/receiver';
import { problemOf, rawCall, rawClient, startServer, type TestServer } from './support/server';

type Scopes = BodyOf<TypedClient['oauthClients']['create']>['scopes'];

let server: TestServer;
const lines: string[] = [];
let orgId: string;
let adminToken: string;
let admin: TypedClient;
/** The server's clock: moved forward to expire tokens and clients without sleeping. */
const clock = new ManualClock();

beforeAll(async () => {
  server = await startServer(
    {
      LOG_LEVEL: 'info',
      // Loopback receivers stand in for customers' endpoints.
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_POLL_INTERVAL: '100ms',
    },
    { logDestination: { write: (line: string) => void lines.push(line) }, clock },
  );
  orgId = (await server.createOrganization()).id;
  ({ token: adminToken } = await server.createToken(orgId, ['all']));
  admin = typedClient(server, adminToken);
});
afterAll(() => server?.close());

/** A typed client for a new token of the organization with `scopes` (and `expiresAt`). */
async function withToken(
  scopes: Parameters<TestServer['createToken']>[1],
  options?: Parameters<TestServer['createToken']>[2],
): Promise<TypedClient> {
  return typedClient(server, (await server.createToken(orgId, scopes, options)).token);
}

/** A 403 `forbidden` problem (which every route declares) whose detail says `words`. */
function expectForbidden(
  res: { status: number; headers: Headers; body: unknown },
  words: RegExp | string,
): void {
  if (res.status !== 403)
    throw new Error(`expected 403, got ${res.status} ${JSON.stringify(res.body)}`);
  const problem = res.body as Problem;
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(problem.code).toBe('forbidden');
  expect(problem.detail).toMatch(words);
}

async function confidentialClient(scopes: Scopes) {
  const res = await admin.oauthClients.create({
    body: { name: 'Wide App', type: 'confidential', grant_types: ['client_credentials'], scopes },
  });
  const made = expectStatus(res, 201).body;
  return { ...made, client_secret: made.client_secret! };
}

async function clientCredentials(id: string, secret: string, scope: string): Promise<string> {
  const config = await discover(server, id, secret);
  return (await oidc.clientCredentialsGrant(config, { scope })).access_token;
}

describe('1. taking over an OAuth client needs its scopes', () => {
  it('refuses rotate_secret and delete of a wider client to oauth_clients:write alone, and the old secret keeps working', async () => {
    const wide = await confidentialClient(['all']);
    const narrow = await withToken(['oauth_clients:write']);
    const wideId = { params: { id: wide.id } };

    const rotated = await narrow.oauthClients.rotateSecret(wideId);
    expectForbidden(rotated, /rotate the secret of an OAuth client .*lacks: students:read/);
    expect(JSON.stringify(rotated.body)).not.toMatch(/ocs_/);
    // Nothing changed: the old secret still gets an all-powerful token, as its owner expects.
    const token = await clientCredentials(wide.id, wide.client_secret, 'payments:read');
    expect((await typedClient(server, token).payments.list()).status).toBe(200);

    expectForbidden(await narrow.oauthClients.delete(wideId), /delete an OAuth client/);
    expect((await admin.oauthClients.retrieve(wideId)).status).toBe(200);

    // Within its own scopes it may.
    const own = { params: { id: (await confidentialClient(['oauth_clients:write'])).id } };
    expect((await narrow.oauthClients.rotateSecret(own)).status).toBe(200);
    expect((await narrow.oauthClients.delete(own)).status).toBe(200);
  });
});

describe('2. an OAuth client expires no later than the credential that made it', () => {
  it('binds a client made by an expiring token to its expiry, and refuses a later explicit one', async () => {
    const expires = new Date(clock.nowMs() + 3_600_000);
    const shortLived = await withToken(['oauth_clients:write', 'students:read'], {
      expiresAt: expires,
    });
    const body: BodyOf<TypedClient['oauthClients']['create']> = {
      name: 'Bound',
      type: 'confidential',
      scopes: ['students:read'],
      grant_types: ['client_credentials'],
    };
    const bound = expectStatus(await shortLived.oauthClients.create({ body }), 201);
    expect(bound.body.expires_at).toBe(expires.toISOString());
    const stored = await admin.oauthClients.retrieve({ params: { id: bound.body.id } });
    expect(expectStatus(stored, 200).body.expires_at).toBe(expires.toISOString());

    const later = await shortLived.oauthClients.create({
      body: { ...body, expires_at: new Date(expires.getTime() + 60_000).toISOString() },
    });
    expect(expectStatus(later, 400).body.errors?.[0]?.path).toBe('body.expires_at');
    const earlier = new Date(expires.getTime() - 60_000).toISOString();
    const sooner = await shortLived.oauthClients.create({ body: { ...body, expires_at: earlier } });
    expect(expectStatus(sooner, 201).body.expires_at).toBe(earlier);

    // A token that does not expire makes clients that do not either.
    const forever = await confidentialClient(['students:read']);
    expect(forever.expires_at).toBeNull();
    // Rotating takes control, so the client is bound to the rotating token's expiry too.
    const limited = await withToken(['oauth_clients:write', 'students:read'], {
      expiresAt: expires,
    });
    const rotated = await limited.oauthClients.rotateSecret({ params: { id: forever.id } });
    expect(expectStatus(rotated, 200).body.expires_at).toBe(expires.toISOString());
  });

  it("rotating keeps the earlier of the client's own expiry and the rotating token's", async () => {
    const start = Math.ceil(clock.nowMs() / 1000) * 1000;
    const hour = new Date(start + 3_600_000).toISOString();
    const oneHourToken = await withToken(['oauth_clients:write', 'students:read'], {
      expiresAt: new Date(hour),
    });
    const make = async (expiresAt: string) => {
      const res = await admin.oauthClients.create({
        body: {
          name: 'Expiring',
          type: 'confidential',
          grant_types: ['client_credentials'],
          scopes: ['students:read'],
          expires_at: expiresAt,
        },
      });
      return expectStatus(res, 201).body.id;
    };
    // A client that would live two hours now ends with the 1-hour token that rotated it…
    const twoHours = await make(new Date(start + 7_200_000).toISOString());
    const later = await oneHourToken.oauthClients.rotateSecret({ params: { id: twoHours } });
    expect(expectStatus(later, 200).body.expires_at).toBe(hour);
    // …and one that ends in half an hour keeps its own expiry.
    const halfHour = new Date(start + 1_800_000).toISOString();
    const sooner = await oneHourToken.oauthClients.rotateSecret({
      params: { id: await make(halfHour) },
    });
    expect(expectStatus(sooner, 200).body.expires_at).toBe(halfHour);
  });

  it('an invitation lasts 7 days, and no longer than the token that made it', async () => {
    const start = Math.ceil(clock.nowMs() / 1000) * 1000;
    const hour = new Date(start + 3_600_000);
    const byHourToken = await withToken(['all'], { expiresAt: hour });
    const short = await byHourToken.invitations.create({
      body: { email: 'hour@delegation.example', role: 'viewer' },
    });
    expect(expectStatus(short, 201).body.expires_at).toBe(hour.toISOString());

    const byMonthToken = await withToken(['all'], { expiresAt: new Date(start + 30 * 86_400_000) });
    const week = expectStatus(
      await byMonthToken.invitations.create({
        body: { email: 'month@delegation.example', role: 'viewer' },
      }),
      201,
    ).body;
    expect(Date.parse(week.expires_at) - Date.parse(week.created_at)).toBe(7 * 86_400_000);
  });

  it('a client made by a 1-hour OAuth access token ends with that token', async () => {
    const app = await confidentialClient(['oauth_clients:write', 'students:read']);
    const accessToken = await clientCredentials(
      app.id,
      app.client_secret,
      'oauth_clients:write students:read',
    );
    const byApp = typedClient(server, accessToken);
    const info = expectStatus(await byApp.token.retrieve(), 200);
    expect(info.body.expires_at).not.toBeNull();
    const made = await byApp.oauthClients.create({
      body: {
        name: 'Made by an app',
        type: 'confidential',
        grant_types: ['client_credentials'],
        scopes: ['students:read'],
      },
    });
    expect(expectStatus(made, 201).body.expires_at).toBe(info.body.expires_at);
  });

  it('after its expiry a client gets no tokens, and the tokens it got are refused', async () => {
    const brief = await withToken(['oauth_clients:write', 'students:read'], {
      expiresAt: new Date(clock.nowMs() + 60_000),
    });
    const res = await brief.oauthClients.create({
      body: {
        name: 'Short-lived',
        type: 'confidential',
        grant_types: ['client_credentials'],
        scopes: ['students:read'],
      },
    });
    const made = expectStatus(res, 201);
    const accessToken = await clientCredentials(
      made.body.id,
      made.body.client_secret!,
      'students:read',
    );
    const app = typedClient(server, accessToken);
    expect((await app.students.list()).status).toBe(200);

    // Past the client's expiry (the brief token's) on the server clock.
    clock.advance(Date.parse(made.body.expires_at!) - clock.nowMs() + 200);
    const refused = await app.students.list();
    expect(expectStatus(refused, 401).body.detail).toMatch(/expired/);
    const grant = await clientCredentials(made.body.id, made.body.client_secret!, 'students:read')
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
    const made = await admin.webhookEndpoints.create({
      body: { url: control.url, events: ['student.created'] },
    });
    expect(made.status).toBe(201);
  });
  afterAll(async () => {
    await receiver?.close();
    await control?.close();
  });

  let studentNumber = 0;
  async function createStudent(): Promise<string> {
    const res = await admin.students.create({
      body: { student_number: `DEL-${++studentNumber}`, first_name: 'Grace', last_name: 'Hopper' },
    });
    return expectStatus(res, 201).body.id;
  }

  const deliveryOf = (hook: Receiver, id: string) =>
    hook.ofType('student.created').find((r) => JSON.parse(r.body).data.id === id);
  const receivedStudent = (hook: Receiver, id: string) => deliveryOf(hook, id) !== undefined;

  /**
   * The student reached the control endpoint, and not `hook`, nor ever will: an event is fanned
   * out to all its endpoints in one transaction, so once the control delivery has arrived, no
   * endpoint at `hook` has a delivery of that event, and none will be made.
   */
  async function expectNotDelivered(hook: Receiver, id: string): Promise<void> {
    const delivered = await waitFor(() => deliveryOf(control, id), {
      what: 'the control delivery',
    });
    const eventId: string = JSON.parse(delivered.body).id;
    const endpoints = await admin.webhookEndpoints.list({ query: { per_page: 100 } });
    const atHook = expectStatus(endpoints, 200).body.data.filter((e) => e.url === hook.url);
    expect(atHook.length).toBeGreaterThan(0);
    for (const endpoint of atHook) {
      const deliveries = await admin.webhookEndpoints.deliveries({
        params: { id: endpoint.id },
        query: { event_type: 'student.created', per_page: 100 },
      });
      expect(expectStatus(deliveries, 200).body.data.map((d) => d.event_id)).not.toContain(eventId);
    }
    expect(receivedStudent(hook, id)).toBe(false);
  }

  it('refuses event types whose resource the token cannot read, on create and on every change', async () => {
    const writeOnly = await withToken(['webhooks:write']);
    expectForbidden(
      await writeOnly.webhookEndpoints.create({ body: { url: receiver.url, events: ['*'] } }),
      // Every read scope an event type needs, from the contract's catalogue (sorted there).
      `lacks: ${readScopesForEvents(['*']).join(', ')}`,
    );
    const students = await withToken(['webhooks:write', 'students:read']);
    expectForbidden(
      await students.webhookEndpoints.create({ body: { url: receiver.url, events: ['*'] } }),
      /lacks: courses:read/,
    );
    expectForbidden(
      await students.webhookEndpoints.create({
        body: { url: receiver.url, events: ['student.created', 'payment.succeeded'] },
      }),
      /^A webhook endpoint receives the data of its events, so the calling token must be able to read them; it lacks: payments:read \(for student\.created, payment\.succeeded\)$/,
    );
    const made = await students.webhookEndpoints.create({
      body: { url: receiver.url, events: ['student.created'] },
    });
    const own = { params: { id: expectStatus(made, 201).body.id } };

    // The administrator's endpoint for every event cannot be changed or re-keyed by it.
    const wide = await admin.webhookEndpoints.create({
      body: { url: receiver.url, events: ['*'] },
    });
    const wideId = { params: { id: expectStatus(wide, 201).body.id } };
    for (const res of [
      await students.webhookEndpoints.update({ ...wideId, body: { url: control.url } }),
      await students.webhookEndpoints.update({ ...wideId, body: { enabled: false } }),
      await students.webhookEndpoints.rotateSecret(wideId),
    ]) {
      expectForbidden(res, /payments:read/);
    }
    // Nor can it widen its own.
    expectForbidden(
      await students.webhookEndpoints.update({ ...own, body: { events: ['*'] } }),
      /payments:read/,
    );
    expectForbidden(await writeOnly.webhookEndpoints.update({ ...own, body: {} }), /students:read/);
    const after = await admin.webhookEndpoints.retrieve(wideId);
    expect(after.body).toMatchObject({ url: receiver.url, events: ['*'], enabled: true });
    await admin.webhookEndpoints.delete(wideId);
    await admin.webhookEndpoints.delete(own);
  });

  it('records the credential that owns it, stops when that token is revoked or expires, and a new owner can re-enable it', async () => {
    const owner = await server.createToken(orgId, ['webhooks:write', 'students:read']);
    const res = await typedClient(server, owner.token).webhookEndpoints.create({
      body: { url: receiver.url, events: ['student.created'] },
    });
    const made = expectStatus(res, 201);
    expect(made.body.owner).toEqual({ type: 'personal_access_token', id: owner.id, user_id: null });
    const endpoint = { params: { id: made.body.id } };
    const first = await createStudent();
    await waitFor(() => receivedStudent(receiver, first), { what: 'the first delivery' });

    const revoked = await admin.personalAccessTokens.delete({ params: { id: owner.id } });
    expect(revoked.status).toBe(200);
    expect((await admin.webhookEndpoints.retrieve(endpoint)).body).toMatchObject({
      enabled: false,
      disabled_reason: 'credential_revoked',
      owner: { type: 'personal_access_token', id: owner.id },
    });
    await expectNotDelivered(receiver, await createStudent());

    // Re-enabling is a change: the administrator's token passes the rule and becomes the owner.
    const reenabled = await admin.webhookEndpoints.update({ ...endpoint, body: { enabled: true } });
    expect(reenabled.body).toMatchObject({ enabled: true, disabled_reason: null });
    const newOwner = expectStatus(reenabled, 200).body.owner;
    expect(newOwner).not.toBeNull();
    expect(newOwner!.id).not.toBe(owner.id);
    const third = await createStudent();
    await waitFor(() => receivedStudent(receiver, third), { what: 'delivery after re-enabling' });

    // Expiry has no moment of its own: the next delivery finds it and disables the endpoint.
    const brief = await server.createToken(orgId, ['webhooks:write', 'students:read'], {
      expiresAt: new Date(clock.nowMs() + 60_000),
    });
    const expiring = await typedClient(server, brief.token).webhookEndpoints.update({
      ...endpoint,
      body: { description: 'Taken over by a short-lived token' },
    });
    expect(expectStatus(expiring, 200).body.owner).toEqual({
      type: 'personal_access_token',
      id: brief.id,
      user_id: null,
    });
    clock.advance(60_000 + 100);
    await expectNotDelivered(receiver, await createStudent());
    expect((await admin.webhookEndpoints.retrieve(endpoint)).body).toMatchObject({
      enabled: false,
      disabled_reason: 'credential_expired',
    });
    await admin.webhookEndpoints.delete(endpoint);
  });

  it('an endpoint made by an OAuth app lives as long as the client and the user’s grant', async () => {
    // Client credentials: the client is the credential; deleting it ends the endpoint.
    const app = await confidentialClient(['webhooks:write', 'students:read']);
    const appToken = await clientCredentials(
      app.id,
      app.client_secret,
      'webhooks:write students:read',
    );
    const res = await typedClient(server, appToken).webhookEndpoints.create({
      body: { url: receiver.url, events: ['student.created'] },
    });
    const byApp = expectStatus(res, 201);
    expect(byApp.body.owner).toEqual({ type: 'oauth_client', id: app.id, user_id: null });
    expect((await admin.oauthClients.delete({ params: { id: app.id } })).status).toBe(200);
    const appEndpoint = await admin.webhookEndpoints.retrieve({ params: { id: byApp.body.id } });
    expect(appEndpoint.body).toMatchObject({
      enabled: false,
      disabled_reason: 'credential_revoked',
    });

    // A user's grant: revoking its refresh token (RFC 7009) ends the grant, and the endpoint.
    const user = await server.createUser(orgId, 'grant@school.example', 'a long enough password');
    const userApp = expectStatus(
      await admin.oauthClients.create({
        body: {
          name: 'Roster Sync',
          type: 'confidential',
          redirect_uris: ['https://roster.example/cb'],
          scopes: ['webhooks:write', 'students:read'],
        },
      }),
      201,
    );
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
    const byUser = expectStatus(
      await typedClient(server, tokens.access_token).webhookEndpoints.create({
        body: { url: receiver.url, events: ['student.created'] },
      }),
      201,
    );
    expect(byUser.body.owner).toEqual({
      type: 'oauth_client',
      id: userApp.body.id,
      user_id: user.id,
    });
    const before = await createStudent();
    await waitFor(() => receivedStudent(receiver, before), { what: 'delivery while granted' });

    await oidc.tokenRevocation(config, tokens.refresh_token!);
    await expectNotDelivered(receiver, await createStudent());
    const userEndpoint = await admin.webhookEndpoints.retrieve({ params: { id: byUser.body.id } });
    expect(userEndpoint.body).toMatchObject({
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
    const narrow = await withToken(['tokens:write']);
    expectForbidden(
      await narrow.personalAccessTokens.delete({ params: { id: wide.id } }),
      /revoke a token .*lacks: students:read/,
    );
    expect((await typedClient(server, wide.token).students.list()).status).toBe(200);
    const kept = await admin.personalAccessTokens.retrieve({ params: { id: wide.id } });
    expect(expectStatus(kept, 200).body.revoked_at).toBeNull();

    const peer = await server.createToken(orgId, ['tokens:write']);
    const revoked = await narrow.personalAccessTokens.delete({ params: { id: peer.id } });
    expect(revoked.status).toBe(200);
    expect((await typedClient(server, peer.token).token.retrieve()).status).toBe(401);
  });
});

describe('4b. a token made over the API stays within the calling token', () => {
  it('refuses scopes the calling token lacks, naming each', async () => {
    const narrow = await withToken(['tokens:write', 'courses:read']);
    const res = await narrow.personalAccessTokens.create({
      body: { name: 'wider', scopes: ['courses:read', 'students:read', 'students:write'] },
    });
    expect(expectStatus(res, 403).body.detail).toBe(
      'A credential cannot get scopes the calling token lacks: students:read, students:write',
    );
  });

  it('refuses revoking a token with scopes the caller lacks, naming each', async () => {
    const wide = await server.createToken(orgId, [
      'students:read',
      'students:write',
      'tokens:write',
    ]);
    const narrow = await withToken(['tokens:write']);
    const res = await narrow.personalAccessTokens.delete({ params: { id: wide.id } });
    expect(expectStatus(res, 403).body.detail).toBe(
      'A token cannot revoke a token that has scopes the calling token lacks: students:read, students:write',
    );
  });

  it('may expire exactly when the calling token does, not a second later (400 too_late)', async () => {
    const expires = new Date(Math.ceil(clock.nowMs() / 1000) * 1000 + 3_600_000);
    const caller = await withToken(['tokens:write', 'students:read'], { expiresAt: expires });
    const same = await caller.personalAccessTokens.create({
      body: { name: 'same end', scopes: ['students:read'], expires_at: expires.toISOString() },
    });
    expect(expectStatus(same, 201).body.expires_at).toBe(expires.toISOString());

    const second = new Date(expires.getTime() + 1000).toISOString();
    const later = await caller.personalAccessTokens.create({
      body: { name: 'later', scopes: ['students:read'], expires_at: second },
    });
    const problem = expectStatus(later, 400).body;
    expect(problem.code).toBe('validation_error');
    expect(problem.detail).toBe(
      `expires_at must be at or before ${expires.toISOString()}, when the calling token expires: a token cannot outlive the one that creates it`,
    );
    expect(problem.errors).toEqual([
      { path: 'body.expires_at', message: 'later than the calling token', code: 'too_late' },
    ]);
    // A token that never expires is later than any expiry too.
    const forever = await caller.personalAccessTokens.create({
      body: { name: 'forever', scopes: ['students:read'] },
    });
    expect(expectStatus(forever, 400).body.errors?.[0]?.code).toBe('too_late');
  });
});

describe('5. only the Authorization header carries a token', () => {
  it('refuses a token in the query string or a JSON body, and never logs it', async () => {
    const { token } = await server.createToken(orgId, ['students:read', 'students:write']);
    const basic = { Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` };
    const student = await admin.students.create({
      body: { student_number: 'Q-1', first_name: 'Query', last_name: 'String' },
    });
    const studentId = expectStatus(student, 201).body.id;
    // A token where the contract has no place for one (a query parameter, a body field): raw.
    const attempts = [
      // A route without query parameters of its own: before, this answered 200.
      await rawCall(server, `/v1/students/${studentId}?access_token=${token}`, {
        headers: basic,
      }),
      await rawCall(server, `/v1/students?access_token=${token}`),
      await rawCall(server, `/v1/students?access_token=${token}`, { headers: basic }),
      await rawCall(server, '/v1/students', {
        method: 'POST',
        headers: { ...basic, 'Content-Type': 'application/json' },
        body: JSON.stringify({ access_token: token }),
      }),
      await rawCall(server, `/v1/students?access_token=${token}`, {
        headers: { Authorization: 'Bearer' },
      }),
    ];
    for (const res of attempts) {
      expect(res.status).toBe(401);
      expect(problemOf(res).code).toBe('unauthorized');
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="platform"/);
    }
    // The header alone works; a query parameter beside it is just an unknown parameter.
    expect((await typedClient(server, token).students.list()).status).toBe(200);
    const beside = await rawCall(server, `/v1/students?access_token=${token}`, { token });
    expect(beside.status).toBe(400);
    expect(problemOf(beside).errors?.map((e) => e.path)).toEqual(['query.access_token']);
    expect(JSON.stringify(beside.body)).not.toContain(token);

    // Every request above is logged once its own line is (the last one's, by its request id).
    const lastRequest = beside.headers.get('x-request-id')!;
    await waitFor(() => lines.some((line) => line.includes(lastRequest)), {
      what: "the last request's log line",
    });
    const logged = lines.join('\n');
    expect(logged).toContain('"route":"/v1/students"');
    expect(logged).not.toContain(token.slice(4));
  });
});

describe('6. events:write is not a scope', () => {
  it('is refused when asked for, not granted by all, and ignored on credentials that still carry it', async () => {
    // events:write is beyond the contract's scope type: sent raw.
    const asked = await rawClient(server, adminToken).post('/v1/personal_access_tokens', {
      name: 'x',
      scopes: ['events:read', 'events:write'],
    });
    expect(asked.status).toBe(400);
    expect(problemOf(asked).errors?.map((e) => e.path)).toEqual(['body.scopes.1']);

    const all = expectStatus(
      await admin.personalAccessTokens.create({ body: { name: 'all', scopes: ['all'] } }),
      201,
    );
    expect(all.body.scopes).toContain('events:read');
    expect(all.body.scopes).not.toContain('events:write');

    // A token and a client stored before the scope went keep working without it.
    const old = await server.createToken(orgId, ['events:read']);
    await server.dataSource.manager.update(
      PersonalAccessToken,
      { id: old.id },
      { scopes: 'events:read events:write' },
    );
    const info = await typedClient(server, old.token).token.retrieve();
    expect(expectStatus(info, 200).body.scopes).toEqual(['events:read']);

    const app = await confidentialClient(['events:read']);
    await server.dataSource.manager.update(
      OAuthClientRecord,
      { id: app.id },
      { scopes: 'events:read events:write' },
    );
    const stored = await admin.oauthClients.retrieve({ params: { id: app.id } });
    expect(expectStatus(stored, 200).body.scopes).toEqual(['events:read']);
    const appToken = await clientCredentials(app.id, app.client_secret, 'events:read');
    expect((await typedClient(server, appToken).events.list()).status).toBe(200);

    // Taking them over needs only the scopes that still exist.
    const revoker = await withToken(['tokens:write', 'events:read']);
    const revoked = await revoker.personalAccessTokens.delete({ params: { id: old.id } });
    expect(expectStatus(revoked, 200).body.revoked_at).not.toBeNull();
    const clientAdmin = await withToken(['oauth_clients:write', 'events:read']);
    expect((await clientAdmin.oauthClients.rotateSecret({ params: { id: app.id } })).status).toBe(
      200,
    );
  });
});
