/**
 * Delegation (api.md): nothing made or changed over the API outgrows or outlives the credential
 * that did it, and only the Authorization header carries a token. One block per finding of the
 * security review, each driven through the HTTP API as an integration would.
 */
import { readScopesForEvents } from '@platform/contract';
import { describeScope } from '../src/oauth/pages';
import { type BodyOf, expectStatus, typedClient, type TypedClient } from './support/api';
import { authorizeInBrowser, discover, oidc } from './support/oauth';
import { startReceiver, waitFor, type Receiver } from './support/receiver';
import {
  admin,
  clientCredentials,
  clock,
  confidentialClient,
  expectForbidden,
  orgId,
  server,
  setUpDelegation,
  withToken,
} from './support/delegation-org';

setUpDelegation();

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
