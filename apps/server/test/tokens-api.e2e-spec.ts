/**
 * Credentials over the API: personal access tokens (create once, list without secrets, revoke),
 * OAuth client registration, and `GET /v1/token`.
 */
import { type BodyOf, expectStatus, typedClient, type TypedClient } from './support/api';
import { discover, oidc } from './support/oauth';
import {
  DATABASE_KIND,
  rawCall,
  rawClient,
  startServer,
  type TestServer,
  problemOf,
} from './support/server';

type TokenScopes = BodyOf<TypedClient['personalAccessTokens']['create']>['scopes'];

let server: TestServer;
let orgId: string;
let admin: TypedClient;
/** The same administrator, for bodies the contract's types refuse (unknown scopes and fields). */
let raw: ReturnType<typeof rawClient>;

beforeAll(async () => {
  server = await startServer();
  orgId = (await server.createOrganization()).id;
  // An administrator's token: everything, so whatever it creates is within its own scopes.
  const { token } = await server.createToken(orgId, ['all']);
  admin = typedClient(server, token);
  raw = rawClient(server, token);
});

afterAll(() => server?.close());

describe('personal access tokens', () => {
  it('are shown once, listed without the secret, work at once, and stop at once when revoked', async () => {
    const expiresAt = new Date(Date.now() + 7 * 86_400_000).toISOString();
    const created = expectStatus(
      await admin.personalAccessTokens.create({
        body: {
          name: 'Nightly export',
          scopes: ['students:read', 'courses:read'],
          expires_at: expiresAt,
        },
      }),
      201,
    );
    expect(created.body).toMatchObject({
      object: 'personal_access_token',
      name: 'Nightly export',
      scopes: ['students:read', 'courses:read'],
      expires_at: expiresAt,
      last_used_at: null,
      revoked_at: null,
    });
    const token = created.body.token;
    expect(token).toMatch(/^pat_/);
    expect(created.body.prefix).toBe(token.slice(0, 12));

    const info = await typedClient(server, token).token.retrieve();
    expect(info.body).toEqual({
      object: 'token',
      type: 'personal_access_token',
      organization_id: orgId,
      scopes: ['students:read', 'courses:read'],
      expires_at: expiresAt,
      personal_access_token_id: created.body.id,
      client_id: null,
      user_id: null,
    });

    const listed = expectStatus(await admin.personalAccessTokens.list(), 200);
    const row = listed.body.data.find((t) => t.id === created.body.id);
    expect(row).toMatchObject({ name: 'Nightly export', prefix: created.body.prefix });
    expect(row?.last_used_at).not.toBeNull();
    expect(JSON.stringify(listed.body)).not.toContain(token);
    expect(row).not.toHaveProperty('token');

    const byId = { params: { id: created.body.id } };
    const revoked = expectStatus(await admin.personalAccessTokens.delete(byId), 200);
    expect(revoked.body.revoked_at).not.toBeNull();
    expect((await typedClient(server, token).students.list()).status).toBe(401);
    // Revoking again changes nothing.
    const again = expectStatus(await admin.personalAccessTokens.delete(byId), 200);
    expect(again.body.revoked_at).toBe(revoked.body.revoked_at);
    expect(expectStatus(await admin.personalAccessTokens.retrieve(byId), 200).body.revoked_at).toBe(
      revoked.body.revoked_at,
    );
  });

  it('expand all, and refuse unknown scopes, past expiries and empty names with a 400 naming the field', async () => {
    const all = expectStatus(
      await admin.personalAccessTokens.create({ body: { name: 'Admin', scopes: ['all'] } }),
      201,
    );
    expect(all.body.scopes).toContain('oauth_clients:write');

    for (const [body, field] of [
      [{ name: 'x', scopes: ['students:admin'] }, 'body.scopes.0'],
      [{ name: 'x', scopes: [] }, 'body.scopes'],
      [{ name: '', scopes: ['students:read'] }, 'body.name'],
      [{ name: 'x', scopes: ['students:read'], expires_at: 'tomorrow' }, 'body.expires_at'],
      [{ name: 'x', scopes: ['students:read'], secret: 'mine' }, 'body.secret'],
    ] as const) {
      // Unknown scopes and fields are beyond the contract's types: sent raw.
      const res = await raw.post('/v1/personal_access_tokens', body);
      expect(res.status).toBe(400);
      expect(problemOf(res).errors?.map((e) => e.path)).toContain(field);
    }
    const past = await admin.personalAccessTokens.create({
      body: {
        name: 'x',
        scopes: ['students:read'],
        expires_at: new Date(Date.now() - 1000).toISOString(),
      },
    });
    expect(expectStatus(past, 400).body.detail).toContain('future');
  });

  it('read expires_at with any offset from -23:59 to +23:59 as its instant, and refuse impossible ones naming the field', async () => {
    const offset = await admin.personalAccessTokens.create({
      body: { name: 'Offset', scopes: ['students:read'], expires_at: '2099-01-01T05:30:00+05:30' },
    });
    expect(expectStatus(offset, 201).body.expires_at).toBe('2099-01-01T00:00:00.000Z');
    for (const expires_at of [
      '2099-01-01T00:00:00+24:00',
      '2099-01-01T00:00:00+99:99',
      '2099-01-01T00:00:00-00:60',
      '2099-02-29T00:00:00Z',
      '9999-12-31T23:59:59-01:00',
    ]) {
      const res = await admin.personalAccessTokens.create({
        body: { name: 'x', scopes: ['students:read'], expires_at },
      });
      expect(expectStatus(res, 400).body.errors).toEqual([
        expect.objectContaining({
          path: 'body.expires_at',
          message: expect.stringMatching(/RFC 3339|instant/),
        }),
      ]);
    }
  });

  it("belong to one organization: another's are 404 and never listed", async () => {
    const other = await server.createOrganization();
    const theirs = await server.createToken(other.id, ['students:read']);
    const byId = { params: { id: theirs.id } };
    expect((await admin.personalAccessTokens.retrieve(byId)).status).toBe(404);
    expect((await admin.personalAccessTokens.delete(byId)).status).toBe(404);
    expect((await typedClient(server, theirs.token).students.list()).status).toBe(200);
    const listed = await admin.personalAccessTokens.list({ query: { per_page: 100 } });
    expect(expectStatus(listed, 200).body.data.map((t) => t.id)).not.toContain(theirs.id);
  });
});

describe('delegation: nothing made over the API outgrows the token that made it', () => {
  it('refuses scopes the calling token lacks, for tokens and for OAuth clients', async () => {
    const limited = typedClient(
      server,
      (await server.createToken(orgId, ['tokens:write', 'oauth_clients:write', 'students:read']))
        .token,
    );
    const ok = await limited.personalAccessTokens.create({
      body: { name: 'subset', scopes: ['students:read'] },
    });
    expect(ok.status).toBe(201);
    const wider: TokenScopes[] = [['all'], ['payments:write'], ['students:read', 'tokens:read']];
    for (const scopes of wider) {
      const res = await limited.personalAccessTokens.create({ body: { name: 'more', scopes } });
      const refused = expectStatus(res, 403);
      expect(refused.body.code).toBe('forbidden');
      expect(refused.body.detail).toContain('the calling token lacks');
    }
    const app = await limited.oauthClients.create({
      body: {
        name: 'Wide App',
        type: 'confidential',
        grant_types: ['client_credentials'],
        scopes: ['all'],
      },
    });
    expect(app.status).toBe(403);
  });

  it('refuses a token that would outlive the calling one', async () => {
    const expires = new Date(Date.now() + 3_600_000);
    const shortLived = typedClient(
      server,
      (await server.createToken(orgId, ['tokens:write', 'students:read'], { expiresAt: expires }))
        .token,
    );
    for (const expiresAt of [undefined, new Date(expires.getTime() + 60_000).toISOString()]) {
      const res = await shortLived.personalAccessTokens.create({
        body: {
          name: 'longer',
          scopes: ['students:read'],
          ...(expiresAt && { expires_at: expiresAt }),
        },
      });
      expect(expectStatus(res, 400).body.errors?.[0]?.path).toBe('body.expires_at');
    }
    const within = await shortLived.personalAccessTokens.create({
      body: {
        name: 'shorter',
        scopes: ['students:read'],
        expires_at: new Date(expires.getTime() - 60_000).toISOString(),
      },
    });
    expect(within.status).toBe(201);
  });
});

describe('one-time secrets and Idempotency-Key', () => {
  it.each([
    ['/v1/personal_access_tokens', { name: 'Keyed', scopes: ['students:read'] }, 'token'],
    [
      '/v1/oauth_clients',
      {
        name: 'Keyed App',
        type: 'confidential',
        grant_types: ['client_credentials'],
        scopes: ['students:read'],
      },
      'client_secret',
    ],
    ['/v1/webhook_endpoints', { url: 'https://hooks.school.test/hooks', events: ['*'] }, 'secret'],
  ])(
    'POST %s: a replay is a 409 naming the record, and the secret is never stored',
    async (path, body, field) => {
      const { token } = await server.createToken(orgId, ['all']);
      // One test for three routes by path, with a raw Idempotency-Key header: sent raw.
      const send = () =>
        rawCall<Record<string, string>>(server, path, {
          method: 'POST',
          token,
          headers: { 'Content-Type': 'application/json', 'Idempotency-Key': `key-${path}` },
          body: JSON.stringify(body),
        });
      const first = await send();
      expect(first.status).toBe(201);
      const secret = first.body[field] ?? '';
      expect(secret.length).toBeGreaterThan(20);
      const again = await send();
      expect(again.status).toBe(409);
      expect(problemOf(again).detail).toContain(String(first.body.id));
      expect(problemOf(again).detail).toContain(`its ${field} is shown only once`);
      expect(JSON.stringify(again.body)).not.toContain(secret);
      const stored = await server.dataSource.query('SELECT * FROM idempotency_keys');
      expect(stored.length).toBeGreaterThan(0);
      expect(JSON.stringify(stored)).not.toContain(secret);
    },
  );
});

describe('OAuth clients over the API', () => {
  it('registers a confidential client whose secret is shown once and works with a real OAuth library', async () => {
    const created = expectStatus(
      await admin.oauthClients.create({
        body: {
          name: 'Attendance Bridge',
          type: 'confidential',
          redirect_uris: ['https://bridge.example/callback', 'http://127.0.0.1:9000/cb'],
          scopes: ['students:read'],
          grant_types: ['client_credentials'],
        },
      }),
      201,
    );
    expect(created.body).toMatchObject({
      object: 'oauth_client',
      type: 'confidential',
      grant_types: ['client_credentials'],
    });
    const secret = created.body.client_secret!;
    expect(secret).toMatch(/^ocs_[A-Za-z0-9_-]{43}$/);
    const byId = { params: { id: created.body.id } };
    const retrieved = await admin.oauthClients.retrieve(byId);
    expect(retrieved.status).toBe(200);
    expect(retrieved.body).not.toHaveProperty('client_secret');
    expect(JSON.stringify((await admin.oauthClients.list()).body)).not.toContain(secret);
    const stored: { secret_hash: string }[] = await server.dataSource.query(
      `SELECT secret_hash FROM oauth_clients WHERE id = ${DATABASE_KIND === 'postgres' ? '$1' : '?'}`,
      [created.body.id],
    );
    expect(stored[0]!.secret_hash).not.toContain(secret);

    const config = await discover(server, created.body.id, secret);
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'students:read' });
    const oauthApi = typedClient(server, tokens.access_token);
    expect((await oauthApi.students.list()).status).toBe(200);

    // A new secret replaces the old one at once, and ends the tokens the old one obtained.
    const rotated = expectStatus(await admin.oauthClients.rotateSecret(byId), 200);
    expect(rotated.body.client_secret).not.toBe(secret);
    const stale = await discover(server, created.body.id, secret);
    await expect(oidc.clientCredentialsGrant(stale, { scope: 'students:read' })).rejects.toThrow();
    const fresh = await discover(server, created.body.id, rotated.body.client_secret);
    await expect(
      oidc.clientCredentialsGrant(fresh, { scope: 'students:read' }),
    ).resolves.toHaveProperty('access_token');
    expect((await oauthApi.students.list()).status).toBe(401);
  });

  it.each([
    [
      'an http redirect URI off loopback',
      { redirect_uris: ['http://app.example/cb'] },
      'body.redirect_uris.0',
      'https',
    ],
    [
      'a fragment',
      { redirect_uris: ['https://app.example/cb#x'] },
      'body.redirect_uris.0',
      'fragment',
    ],
    [
      'a private-use scheme for a confidential client',
      { redirect_uris: ['com.example.app:/cb'] },
      'body.redirect_uris.0',
      'public',
    ],
    [
      'http on a loopback address other than 127.0.0.1, [::1] or localhost',
      { redirect_uris: ['http://127.0.0.2/cb'] },
      'body.redirect_uris.0',
      'localhost, 127.0.0.1',
    ],
    [
      'an https loopback redirect for a public client',
      { type: 'public', redirect_uris: ['https://localhost/cb'] },
      'body.redirect_uris.0',
      'RFC 8252',
    ],
    [
      'client credentials for a public client',
      { type: 'public', grant_types: ['client_credentials'] },
      'body.grant_types',
      'confidential',
    ],
    [
      'the code flow without a redirect URI',
      { redirect_uris: [] },
      'body.redirect_uris',
      'redirect',
    ],
    ['the implicit grant', { grant_types: ['implicit'] }, 'body.grant_types.0', ''],
    ['an unknown scope', { scopes: ['everything'] }, 'body.scopes.0', ''],
  ])('refuses %s with a 400 naming the field', async (_what, override, field, words) => {
    // Some of these (the implicit grant, an unknown scope) are beyond the contract's types.
    const res = await raw.post('/v1/oauth_clients', {
      name: 'Bad App',
      type: 'confidential',
      redirect_uris: ['https://app.example/cb'],
      scopes: ['students:read'],
      ...override,
    });
    expect(res.status).toBe(400);
    expect(problemOf(res).errors?.map((e) => e.path)).toContain(field);
    expect(problemOf(res).detail).toContain(words);
  });

  it('accepts a public native client with a loopback or private-use redirect', async () => {
    const res = await admin.oauthClients.create({
      body: {
        name: 'Desktop',
        type: 'public',
        redirect_uris: ['http://[::1]:7000/cb', 'com.example.desktop:/oauth'],
        scopes: ['students:read'],
      },
    });
    const created = expectStatus(res, 201);
    expect(created.body.client_secret).toBeNull();
    const rotate = await admin.oauthClients.rotateSecret({ params: { id: created.body.id } });
    expect(rotate.status).toBe(409);
  });
});
