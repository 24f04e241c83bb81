/**
 * The audit log: every change to tokens, OAuth clients, webhook endpoints and the organization
 * is recorded with who made it (credential, user, client IP), never with a secret; it is read
 * through `GET /v1/audit_events` with the list conventions, per organization, and kept for the
 * configured retention (at least 90 days).
 */
import { request as httpRequest } from 'node:http';
import { AuditEventRecord } from '../src/audit/audit-event.entity';
import { AuditService } from '../src/audit/audit.service';
import { ConfigError, loadConfig } from '../src/config/env';
import { ManualClock } from '../src/testing';
import { expectStatus, type QueryOf, typedClient, type TypedClient } from './support/api';
import { problemOf, rawClient, startServer, type TestServer } from './support/server';

/** A JSON request from a chosen loopback address, so the recorded IP can be told apart. */
function sendFrom(
  server: TestServer,
  from: string,
  method: string,
  path: string,
  options: { token: string; body?: unknown; headers?: Record<string, string> },
): Promise<{ status: number; body: any }> {
  const { hostname, port } = new URL(server.url);
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: hostname,
      port,
      localAddress: from,
      method,
      path,
      agent: false,
      headers: {
        Authorization: `Bearer ${options.token}`,
        ...options.headers,
        ...(body !== undefined && {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
        }),
      },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The audit events made over the API (not the operator's set-up token), oldest first. */
async function apiEvents(server: TestServer, token: string) {
  const res = await typedClient(server, token).auditEvents.list({
    query: {
      sort: 'created_at',
      per_page: 100,
      actor_type: 'personal_access_token,oauth_access_token',
    },
  });
  return expectStatus(res, 200).body.data;
}

/** No token, client secret or signing secret anywhere in the organization's audit log. */
async function expectNoSecretInLog(server: TestServer, token: string, secrets: string[]) {
  const everything = JSON.stringify(
    (await typedClient(server, token).auditEvents.list({ query: { per_page: 100 } })).body,
  );
  for (const secret of secrets) expect(everything).not.toContain(secret);
  expect(everything).not.toMatch(/pat_[0-9A-Za-z]{36}|ocs_|whsec_/);
}

describe('audit log', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startServer({
      // Endpoints on a loopback receiver that is never called: nothing is delivered here.
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_DISPATCHER: 'false',
    });
  });
  afterAll(() => server.close());

  it('records each change to tokens, OAuth clients, webhook endpoints and the organization, with actor, credential and IP, and no secret', async () => {
    const org = await server.createOrganization({ name: 'Audit School' });
    const admin = await server.createToken(org.id, ['all']);
    const from = '127.0.0.31';
    const send = (method: string, path: string, body?: unknown) =>
      sendFrom(server, from, method, path, {
        token: admin.token,
        ...(body !== undefined && { body }),
      });
    const secrets: string[] = [];

    const token = await send('POST', '/v1/personal_access_tokens', {
      name: 'ci',
      scopes: ['students:read'],
    });
    expect(token.status).toBe(201);
    secrets.push(token.body.token);
    expect((await send('DELETE', `/v1/personal_access_tokens/${token.body.id}`)).status).toBe(200);
    // Revoking twice changes nothing, and records nothing.
    expect((await send('DELETE', `/v1/personal_access_tokens/${token.body.id}`)).status).toBe(200);

    const app = await send('POST', '/v1/oauth_clients', {
      name: 'Grades Sync',
      type: 'confidential',
      redirect_uris: ['https://grades.example/callback'],
      scopes: ['students:read'],
    });
    expect(app.status).toBe(201);
    secrets.push(app.body.client_secret);
    const rotated = await send('POST', `/v1/oauth_clients/${app.body.id}/rotate_secret`);
    expect(rotated.status).toBe(200);
    secrets.push(rotated.body.client_secret);
    expect((await send('DELETE', `/v1/oauth_clients/${app.body.id}`)).status).toBe(200);

    const endpoint = await send('POST', '/v1/webhook_endpoints', {
      url: 'http://127.0.0.1:9/hooks',
      events: ['*'],
    });
    expect(endpoint.status).toBe(201);
    secrets.push(endpoint.body.secret);
    const patched = await send('PATCH', `/v1/webhook_endpoints/${endpoint.body.id}`, {
      description: 'grades',
    });
    expect(patched.status).toBe(200);
    const rotatedEndpoint = await send(
      'POST',
      `/v1/webhook_endpoints/${endpoint.body.id}/rotate_secret`,
    );
    expect(rotatedEndpoint.status).toBe(200);
    secrets.push(rotatedEndpoint.body.secret);
    expect((await send('DELETE', `/v1/webhook_endpoints/${endpoint.body.id}`)).status).toBe(200);

    expect((await send('PATCH', '/v1/organization', { name: 'Audit Academy' })).status).toBe(200);

    const events = await apiEvents(server, admin.token);
    expect(events.map((e) => [e.action, e.target.type, e.target.id])).toEqual([
      ['token.created', 'personal_access_token', token.body.id],
      ['token.revoked', 'personal_access_token', token.body.id],
      ['oauth_client.created', 'oauth_client', app.body.id],
      ['oauth_client.secret_rotated', 'oauth_client', app.body.id],
      ['oauth_client.deleted', 'oauth_client', app.body.id],
      ['webhook_endpoint.created', 'webhook_endpoint', endpoint.body.id],
      ['webhook_endpoint.updated', 'webhook_endpoint', endpoint.body.id],
      ['webhook_endpoint.secret_rotated', 'webhook_endpoint', endpoint.body.id],
      ['webhook_endpoint.deleted', 'webhook_endpoint', endpoint.body.id],
      ['organization.updated', 'organization', org.id],
    ]);
    for (const event of events) {
      expect(event).toMatchObject({
        object: 'audit_event',
        actor: { type: 'personal_access_token', credential_id: admin.id, user_id: null, ip: from },
      });
      expect(event.id).toMatch(/^aud_[0-9A-HJKMNP-TV-Z]{26}$/);
    }
    expect(events[0]?.changes).toEqual({ name: 'ci', scopes: ['students:read'], expires_at: null });
    expect(events[6]?.changes).toEqual({ description: [null, 'grades'] });
    expect(events[9]?.changes).toEqual({ name: ['Audit School', 'Audit Academy'] });
    expect(secrets.filter(Boolean)).toHaveLength(5);
    await expectNoSecretInLog(server, admin.token, secrets);
  });

  it('names the OAuth client and acts for nobody when a client-credentials token makes the change', async () => {
    const org = await server.createOrganization();
    const reader = await server.createToken(org.id, ['audit_log:read']);
    const app = await server.createOAuthClient(org.id, {
      type: 'confidential',
      scopes: ['tokens:write'],
      grant_types: ['client_credentials'],
    });
    const issued = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: {
        Authorization: `Basic ${Buffer.from(`${app.id}:${app.client_secret}`).toString('base64')}`,
        'Content-Type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials&scope=tokens%3Awrite',
    });
    expect(issued.status).toBe(200);
    const { access_token } = (await issued.json()) as { access_token: string };
    const made = expectStatus(
      await typedClient(server, access_token).personalAccessTokens.create({
        body: {
          name: 'from the app',
          scopes: ['tokens:write'],
          // No later than the 1-hour access token that makes it (delegation).
          expires_at: new Date(Date.now() + 30 * 60_000).toISOString(),
        },
      }),
      201,
    );
    const [event] = await apiEvents(server, reader.token);
    expect(event).toMatchObject({
      action: 'token.created',
      actor: { type: 'oauth_access_token', credential_id: app.id, user_id: null, ip: '127.0.0.1' },
      target: { type: 'personal_access_token', id: made.body.id },
    });
  });

  it('records nothing for a change that was refused', async () => {
    const org = await server.createOrganization();
    const admin = await server.createToken(org.id, ['all']);
    // Refused bodies: an unknown scope is beyond the contract's types, so both go raw.
    const raw = rawClient(server, admin.token);
    expect(
      (await raw.post('/v1/oauth_clients', { name: 'x', type: 'public', scopes: ['bogus'] }))
        .status,
    ).toBe(400);
    expect((await raw.patch('/v1/organization', { name: '' })).status).toBe(400);
    expect(await apiEvents(server, admin.token)).toEqual([]);
  });

  it('lists with the usual conventions: filters, ranges, sort, pages, retrieve', async () => {
    const org = await server.createOrganization();
    const admin = await server.createToken(org.id, ['all']);
    const api = typedClient(server, admin.token);
    /** For filter values the contract's types refuse. */
    const raw = rawClient(server, admin.token);
    const list = async (query: QueryOf<TypedClient['auditEvents']['list']> = {}) =>
      expectStatus(await api.auditEvents.list({ query }), 200);
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await api.personalAccessTokens.create({
        body: { name: `t${i}`, scopes: ['students:read'] },
      });
      made.push(expectStatus(res, 201).body.id);
    }
    await api.personalAccessTokens.delete({ params: { id: made[0]! } });
    const all = await list();
    // The operator's set-up token, three made over the API, one revoked; newest first.
    expect(all.body.meta.total).toBe(5);
    expect(all.body.data[0]?.action).toBe('token.revoked');
    expect(all.body.data[4]).toMatchObject({
      action: 'token.created',
      actor: { type: 'operator', credential_id: null, ip: null },
      target: { id: admin.id },
    });

    const created = await list({
      action: 'token.created',
      actor_type: 'personal_access_token',
      sort: 'created_at',
    });
    expect(created.body.data.map((e) => e.target.id)).toEqual(made);
    const page2 = await list({ action: 'token.created', per_page: 2, page: 2, sort: 'created_at' });
    expect(page2.body.meta).toMatchObject({ page: 2, per_page: 2, total: 4 });
    expect(page2.body.data.map((e) => e.target.id)).toEqual([made[1], made[2]]);
    const byTarget = await list({ target_id: made[0]!, target_type: 'personal_access_token' });
    expect(byTarget.body.data.map((e) => e.action)).toEqual(['token.revoked', 'token.created']);

    const future = new Date(Date.now() + 60_000).toISOString();
    const none = await list({ 'created_at[gte]': future });
    expect(none.body.meta.total).toBe(0);
    const past = new Date(Date.now() - 60_000).toISOString();
    expect((await list({ 'created_at[gte]': past })).body.meta.total).toBe(5);

    const one = await api.auditEvents.retrieve({ params: { id: all.body.data[0]!.id } });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(all.body.data[0]);

    const bad = await raw.get('/v1/audit_events?action=token.stolen');
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(problemOf(bad).detail).toMatch(/action must be one or more of token.created/);
    expect((await raw.get('/v1/audit_events?user_id=nope')).status).toBe(400);
    expect((await raw.get('/v1/audit_events?sort=action')).status).toBe(400);
  });

  it("never shows one organization's audit events to another", async () => {
    const a = await server.createOrganization();
    const b = await server.createOrganization();
    const adminA = await server.createToken(a.id, ['all']);
    const adminB = await server.createToken(b.id, ['all']);
    await typedClient(server, adminA.token).personalAccessTokens.create({
      body: { name: 'a', scopes: ['students:read'] },
    });
    const [eventA] = await apiEvents(server, adminA.token);
    expect(eventA).toBeDefined();
    const apiB = typedClient(server, adminB.token);
    expect(await apiEvents(server, adminB.token)).toEqual([]);
    const listB = expectStatus(await apiB.auditEvents.list({ query: { per_page: 100 } }), 200);
    expect(listB.body.data.map((e) => e.id)).not.toContain(eventA!.id);
    expect(listB.body.meta.total).toBe(1);
    const probe = await apiB.auditEvents.retrieve({ params: { id: eventA!.id } });
    expect(probe.status).toBe(404);
    const byTarget = await apiB.auditEvents.list({ query: { target_id: eventA!.target.id } });
    expect(expectStatus(byTarget, 200).body.data).toEqual([]);
  });

  it('needs the audit_log:read scope', async () => {
    const org = await server.createOrganization();
    // Everything a developer may hold: all but members:write, organization:write, audit_log:read.
    const developer = await server.createToken(org.id, [
      'students:read',
      'tokens:read',
      'tokens:write',
      'webhooks:read',
      'webhooks:write',
      'organization:read',
    ]);
    const list = await typedClient(server, developer.token).auditEvents.list();
    expect(expectStatus(list, 403).body.code).toBe('insufficient_scope');
    expect(list.headers.get('www-authenticate')).toMatch(/scope="audit_log:read"/);
    expect((await typedClient(server).auditEvents.list()).status).toBe(401);
  });

  it('keeps entries for the retention (default 365 days, never under 90), then prunes them', async () => {
    expect(loadConfig({}).audit.retentionDays).toBe(365);
    expect(loadConfig({ AUDIT_RETENTION_DAYS: '90' }).audit.retentionDays).toBe(90);
    expect(() => loadConfig({ AUDIT_RETENTION_DAYS: '89' })).toThrow(ConfigError);
    expect(() => loadConfig({ AUDIT_RETENTION_DAYS: '89' })).toThrow(
      /AUDIT_RETENTION_DAYS: must be at least 90/,
    );
    expect(() => loadConfig({ AUDIT_RETENTION_DAYS: 'forever' })).toThrow(/AUDIT_RETENTION_DAYS/);

    const org = await server.createOrganization();
    const admin = await server.createToken(org.id, ['audit_log:read']);
    const day = 86_400_000;
    const insert = (id: string, daysAgo: number) =>
      server.dataSource.getRepository(AuditEventRecord).insert({
        id,
        organizationId: org.id,
        actorType: 'operator',
        credentialId: null,
        userId: null,
        action: 'organization.plan_changed',
        targetType: 'organization',
        targetId: org.id,
        changes: null,
        ip: null,
        createdAt: new Date(Date.now() - daysAgo * day),
      });
    const kept = 'aud_01JD6Y3ZK8R5V2N3M4P5Q6R7S8';
    const expired = 'aud_01JD6Y3ZK8R5V2N3M4P5Q6R7S9';
    await insert(kept, 364);
    await insert(expired, 366);
    const api = typedClient(server, admin.token);
    const listed = await api.auditEvents.list({ query: { action: 'organization.plan_changed' } });
    // Past retention an entry is gone from the API at once, before the hourly prune deletes it.
    expect(expectStatus(listed, 200).body.data.map((e) => e.id)).toEqual([kept]);
    expect((await api.auditEvents.retrieve({ params: { id: expired } })).status).toBe(404);
    expect((await api.auditEvents.retrieve({ params: { id: kept } })).status).toBe(200);

    expect(await server.app.get(AuditService).prune()).toBe(1);
    const left = await server.dataSource
      .getRepository(AuditEventRecord)
      .findBy({ organizationId: org.id, action: 'organization.plan_changed' });
    expect(left.map((e) => e.id)).toEqual([kept]);
  });
});

describe('audit log atomicity', () => {
  it('writes the entry in the change’s transaction: when the entry cannot be written, the change is undone', async () => {
    const server = await startServer({ WEBHOOK_DISPATCHER: 'false' });
    try {
      const org = await server.createOrganization({ name: 'Atomic School' });
      const admin = await server.createToken(org.id, ['all']);
      const api = typedClient(server, admin.token);
      const total = async () =>
        expectStatus(await api.personalAccessTokens.list(), 200).body.meta.total;
      const before = await total();
      // The log is gone (a broken database, for the test): no change may commit without it.
      await server.dataSource.query('DROP TABLE audit_events');
      const create = await api.personalAccessTokens.create({
        body: { name: 'x', scopes: ['students:read'] },
      });
      expect(create.status).toBe(500);
      const rename = await api.organization.update({ body: { name: 'Changed' } });
      expect(rename.status).toBe(500);
      expect(await total()).toBe(before);
      expect(expectStatus(await api.organization.retrieve(), 200).body.name).toBe('Atomic School');
    } finally {
      await server.close();
    }
  });
});

describe('audit log behind a trusted proxy', () => {
  it('records the forwarded client IP only when TRUST_PROXY is set', async () => {
    for (const trust of ['true', 'false']) {
      const server = await startServer({ TRUST_PROXY: trust });
      try {
        const org = await server.createOrganization();
        const admin = await server.createToken(org.id, ['all']);
        const res = await sendFrom(server, '127.0.0.32', 'PATCH', '/v1/organization', {
          token: admin.token,
          body: { name: 'Proxied' },
          headers: { 'X-Forwarded-For': '203.0.113.7' },
        });
        expect(res.status).toBe(200);
        const [event] = await apiEvents(server, admin.token);
        expect(event?.actor.ip).toBe(trust === 'true' ? '203.0.113.7' : '127.0.0.32');
      } finally {
        await server.close();
      }
    }
  });
});

describe('audit retention on the server clock', () => {
  it('hides and prunes entries once the injected clock passes the retention', async () => {
    const clock = new ManualClock();
    const server = await startServer({}, { clock });
    try {
      const org = await server.createOrganization();
      const admin = await server.createToken(org.id, ['all']);
      const api = typedClient(server, admin.token);
      expectStatus(
        await api.personalAccessTokens.create({ body: { name: 't', scopes: ['students:read'] } }),
        201,
      );
      const listed = expectStatus(
        await api.auditEvents.list({ query: { action: 'token.created', sort: '-created_at' } }),
        200,
      );
      const [entry] = listed.body.data;
      expect(entry).toBeDefined();

      clock.advance(366 * 86_400_000);
      expect(expectStatus(await api.auditEvents.list(), 200).body.data).toEqual([]);
      expect((await api.auditEvents.retrieve({ params: { id: entry!.id } })).status).toBe(404);
      expect(await server.app.get(AuditService).prune()).toBeGreaterThan(0);
      expect(
        await server.dataSource.getRepository(AuditEventRecord).findBy({ organizationId: org.id }),
      ).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
