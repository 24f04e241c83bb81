/**
 * The request log: each authenticated API request is recorded for its organization (route
 * template, status, latency, credential, request id, error code; never a body, query value,
 * header or secret), written in batches off the request path, read through
 * `GET /v1/request_logs` with the list conventions, and pruned past its retention.
 */
import { randomUUID } from 'node:crypto';
import type { RequestLogResource } from '@platform/contract';
import { ConfigError, loadConfig } from '../src/config/env';
import { RequestLogRecord } from '../src/request-logs/request-log.entity';
import { RequestLogsService } from '../src/request-logs/request-logs.service';
import { expectStatus, typedClient } from './support/api';
import { prepareDatabase } from '../src/testing';
import {
  databaseOptions,
  problemOf,
  rawCall,
  startServer,
  type TestServer,
} from './support/server';

const PASSWORD = 'correct horse battery staple 42';

/** Polls the API until the entry of `requestId` shows up (the writer flushes about every second). */
async function entryOf(
  server: TestServer,
  token: string,
  requestId: string,
): Promise<RequestLogResource> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const res = await typedClient(server, token).requestLogs.list({
      query: { request_id: requestId },
    });
    const [entry] = expectStatus(res, 200).body.data;
    if (entry) return entry;
    if (Date.now() > deadline) throw new Error(`no request log entry for ${requestId} after 5 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** None of `values` appears in the organization's stored request log rows. */
async function expectNoneStored(server: TestServer, organizationId: string, values: string[]) {
  const rows = await server.dataSource.getRepository(RequestLogRecord).findBy({ organizationId });
  const stored = JSON.stringify(rows);
  for (const value of values) expect(stored).not.toContain(value);
}

describe('request log', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startServer({});
  });
  afterAll(() => server.close());

  it('records a request within about a second, with its route template, status, latency and token, and without its query values, body or token', async () => {
    const org = await server.createOrganization({ name: 'Logged School' });
    const writer = await server.createToken(org.id, ['students:write', 'students:read']);
    const reader = await server.createToken(org.id, ['request_logs:read']);

    // A create whose body holds student data, and a read whose query string holds a value.
    const createId = `create-${randomUUID()}`;
    const created = await rawCall(server, '/v1/students', {
      token: writer.token,
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Request-Id': createId },
      body: JSON.stringify({
        student_number: 'S-LOG-1',
        first_name: 'Zebedee',
        last_name: 'Quixotic',
        email: 'zebedee.quixotic@example.com',
      }),
    });
    expect(created.status).toBe(201);
    const studentId = (created.body as { id: string }).id;
    const readId = `read-${randomUUID()}`;
    const read = await rawCall(server, `/v1/students/${studentId}?expand=secretvalue123`, {
      token: writer.token,
      headers: { 'X-Request-Id': readId },
    });
    const missingId = `missing-${randomUUID()}`;
    const missing = await rawCall(server, '/v1/students/stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S8', {
      token: writer.token,
      headers: { 'X-Request-Id': missingId },
    });
    expect(missing.status).toBe(404);

    const createEntry = await entryOf(server, reader.token, createId);
    expect(createEntry).toMatchObject({
      object: 'request_log',
      method: 'POST',
      route: '/v1/students',
      status: 201,
      status_class: '2xx',
      credential: { type: 'personal_access_token', id: writer.id },
      request_id: createId,
      error_code: null,
    });
    expect(createEntry.latency_ms).toBeGreaterThan(0);
    expect(createEntry.latency_ms).toBeLessThan(5000);

    const readEntry = await entryOf(server, reader.token, readId);
    expect(readEntry).toMatchObject({
      method: 'GET',
      route: '/v1/students/:id',
      status: read.status,
      request_id: readId,
    });
    const missingEntry = await entryOf(server, reader.token, missingId);
    expect(missingEntry).toMatchObject({
      route: '/v1/students/:id',
      status: 404,
      status_class: '4xx',
      error_code: 'not_found',
    });

    // Nothing of the body, the query string or the token is stored anywhere.
    await expectNoneStored(server, org.id, [
      'Zebedee',
      'Quixotic',
      'zebedee.quixotic',
      'S-LOG-1',
      'secretvalue123',
      writer.token,
      reader.token,
    ]);

    // The entry is also one retrieve away.
    const one = await typedClient(server, reader.token).requestLogs.retrieve({
      params: { id: createEntry.id },
    });
    expect(expectStatus(one, 200).body).toEqual(createEntry);
  });

  it('records the path with its ids, never the query string', async () => {
    const org = await server.createOrganization();
    const caller = await server.createToken(org.id, ['students:read']);
    const reader = await server.createToken(org.id, ['request_logs:read']);
    const ids = { item: `item-${randomUUID()}`, list: `list-${randomUUID()}` };
    const item = '/v1/students/stu_01JD6Y3ZK8R5V2N3M4P5Q6PATH';
    await rawCall(server, `${item}?email=hidden.value%40example.com&q=a?b#frag`, {
      token: caller.token,
      headers: { 'X-Request-Id': ids.item },
    });
    await rawCall(server, '/v1/students?last_name=Secretname&limit=5', {
      token: caller.token,
      headers: { 'X-Request-Id': ids.list },
    });
    expect(await entryOf(server, reader.token, ids.item)).toMatchObject({
      route: '/v1/students/:id',
      path: item,
    });
    expect(await entryOf(server, reader.token, ids.list)).toMatchObject({
      route: '/v1/students',
      path: '/v1/students',
    });
    await expectNoneStored(server, org.id, ['hidden.value', 'Secretname', 'last_name', 'a?b']);
  });

  it('does not record unauthenticated requests', async () => {
    const org = await server.createOrganization();
    const reader = await server.createToken(org.id, ['request_logs:read']);
    const anonymousId = `anon-${randomUUID()}`;
    const anonymous = await rawCall(server, '/v1/students', {
      headers: { 'X-Request-Id': anonymousId },
    });
    expect(anonymous.status).toBe(401);
    const markerId = `marker-${randomUUID()}`;
    await rawCall(server, '/v1/request_logs', {
      token: reader.token,
      headers: { 'X-Request-Id': markerId },
    });
    // Once a later request is written, the earlier one would have been too.
    await entryOf(server, reader.token, markerId);
    expect(
      await server.dataSource.getRepository(RequestLogRecord).countBy({ requestId: anonymousId }),
    ).toBe(0);
  });

  it('lists newest first and filters by status class, status, method, route, credential, request id and time', async () => {
    const org = await server.createOrganization();
    const a = await server.createToken(org.id, ['students:read']);
    const b = await server.createToken(org.id, ['courses:read']);
    const reader = await server.createToken(org.id, ['request_logs:read']);
    const ids: string[] = [];
    const call = async (token: string, path: string) => {
      const id = `f-${randomUUID()}`;
      ids.push(id);
      return rawCall(server, path, { token, headers: { 'X-Request-Id': id } });
    };
    const since = new Date().toISOString();
    await call(a.token, '/v1/students');
    await call(a.token, '/v1/courses'); // 403: a has no courses:read
    await call(b.token, '/v1/courses');
    await call(b.token, '/v1/students?page=zero'); // 403 before the query is read
    const last = ids.at(-1);
    if (!last) throw new Error('no call');
    await entryOf(server, reader.token, last);
    const api = typedClient(server, reader.token);
    const list = async (query: Record<string, string>) =>
      expectStatus(
        await api.requestLogs.list({
          // The reader's own polling is in the log too: only a's and b's calls here.
          query: { 'created_at[gte]': since, credential_id: `${a.id},${b.id}`, ...query },
        }),
        200,
      ).body;

    const all = await list({});
    expect(all.data.map((e) => e.request_id)).toEqual([...ids].reverse());
    expect(all.meta.total).toBe(4);
    expect((await list({ status_class: '2xx' })).data.map((e) => e.request_id)).toEqual([
      ids[2],
      ids[0],
    ]);
    expect((await list({ status: '403' })).data).toHaveLength(2);
    expect((await list({ method: 'POST' })).data).toHaveLength(0);
    expect((await list({ route: '/v1/courses' })).data.map((e) => e.request_id)).toEqual([
      ids[2],
      ids[1],
    ]);
    expect((await list({ credential_id: b.id })).data.map((e) => e.request_id)).toEqual([
      ids[3],
      ids[2],
    ]);
    expect((await list({ request_id: `${ids[0]},${ids[3]}` })).data).toHaveLength(2);
    expect((await list({ 'created_at[lt]': since })).data).toHaveLength(0);
    const paged = await list({ per_page: '1', page: '2' });
    expect(paged.data.map((e) => e.request_id)).toEqual([ids[2]]);
    expect(paged.meta.total).toBe(4);
  });

  it("keeps each organization's log to itself", async () => {
    const one = await server.createOrganization();
    const other = await server.createOrganization();
    const oneToken = await server.createToken(one.id, ['students:read', 'request_logs:read']);
    const otherToken = await server.createToken(other.id, ['request_logs:read']);
    const id = `iso-${randomUUID()}`;
    await rawCall(server, '/v1/students', {
      token: oneToken.token,
      headers: { 'X-Request-Id': id },
    });
    const entry = await entryOf(server, oneToken.token, id);
    const seen = await typedClient(server, otherToken.token).requestLogs.list({
      query: { request_id: id },
    });
    expect(expectStatus(seen, 200).body.data).toEqual([]);
    const retrieved = await typedClient(server, otherToken.token).requestLogs.retrieve({
      params: { id: entry.id },
    });
    expect(retrieved.status).toBe(404);
    // The other organization's own reads are in its log, and only those.
    const own = await typedClient(server, otherToken.token).requestLogs.list({
      query: { per_page: 100 },
    });
    for (const e of expectStatus(own, 200).body.data) {
      expect(e.credential.id).toBe(otherToken.id);
    }
  });

  it('is for admins and developers: a viewer is refused (403 naming request_logs:read)', async () => {
    const org = await server.createOrganization();
    await server.createUser(org.id, `admin-${randomUUID()}@example.com`, PASSWORD);
    const developer = await server.createUser(org.id, `dev-${randomUUID()}@example.com`, PASSWORD, {
      role: 'developer',
    });
    const viewer = await server.createUser(org.id, `view-${randomUUID()}@example.com`, PASSWORD, {
      role: 'viewer',
    });
    const devToken = await server.createToken(org.id, ['all'], { userId: developer.id });
    const viewerToken = await server.createToken(org.id, ['all'], { userId: viewer.id });
    expect((await typedClient(server, devToken.token).requestLogs.list()).status).toBe(200);
    const refused = await typedClient(server, viewerToken.token).requestLogs.list();
    expect(expectStatus(refused, 403).body.code).toBe('insufficient_scope');
    expect(refused.headers.get('www-authenticate')).toMatch(/scope="request_logs:read"/);
    expect((await typedClient(server).requestLogs.list()).status).toBe(401);
  });

  it('refuses bad filters with problem+json naming the parameter', async () => {
    const org = await server.createOrganization();
    const reader = await server.createToken(org.id, ['request_logs:read']);
    for (const [query, name] of [
      ['status=abc', 'status'],
      ['status=700', 'status'],
      ['status_class=6xx', 'status_class'],
      ['method=FETCH', 'method'],
      ['created_at[gte]=yesterday', 'created_at'],
      ['sort=latency', 'sort'],
      ['body=1', 'body'],
    ] as const) {
      const res = await rawCall(server, `/v1/request_logs?${query}`, { token: reader.token });
      expect(res.status).toBe(400);
      expect(JSON.stringify(problemOf(res).errors)).toContain(name);
    }
  });

  it('keeps entries 14 days by default (REQUEST_LOG_RETENTION_DAYS), hides older ones and prunes them', async () => {
    expect(loadConfig({}).requestLog.retentionDays).toBe(14);
    expect(loadConfig({ REQUEST_LOG_RETENTION_DAYS: '30' }).requestLog.retentionDays).toBe(30);
    expect(() => loadConfig({ REQUEST_LOG_RETENTION_DAYS: '0' })).toThrow(ConfigError);
    expect(() => loadConfig({ REQUEST_LOG_RETENTION_DAYS: 'forever' })).toThrow(
      /REQUEST_LOG_RETENTION_DAYS/,
    );

    const org = await server.createOrganization();
    const reader = await server.createToken(org.id, ['request_logs:read']);
    const day = 86_400_000;
    const insert = (id: string, daysAgo: number) =>
      server.dataSource.getRepository(RequestLogRecord).insert({
        id,
        organizationId: org.id,
        method: 'GET',
        route: '/v1/students',
        status: 200,
        statusClass: '2xx',
        latencyMs: 3.5,
        credentialType: 'personal_access_token',
        credentialId: reader.id,
        requestId: `old-${id}`,
        errorCode: null,
        createdAt: new Date(Date.now() - daysAgo * day),
      });
    const kept = 'rql_01JD6Y3ZK8R5V2N3M4P5Q6R7S8';
    const expired = 'rql_01JD6Y3ZK8R5V2N3M4P5Q6R7S9';
    await insert(kept, 13);
    await insert(expired, 15);
    const api = typedClient(server, reader.token);
    const listed = await api.requestLogs.list({ query: { route: '/v1/students' } });
    expect(expectStatus(listed, 200).body.data.map((e) => e.id)).toEqual([kept]);
    expect((await api.requestLogs.retrieve({ params: { id: expired } })).status).toBe(404);

    expect(await server.app.get(RequestLogsService).prune()).toBeGreaterThanOrEqual(1);
    const left = await server.dataSource
      .getRepository(RequestLogRecord)
      .findBy({ organizationId: org.id, route: '/v1/students' });
    expect(left.map((e) => e.id)).toEqual([kept]);
  });
});

describe('request log on shutdown', () => {
  it('writes the entries still buffered when the server closes', async () => {
    const db = await prepareDatabase(databaseOptions());
    try {
      const first = await startServer({}, { databaseUrl: db.databaseUrl });
      const org = await first.createOrganization();
      const token = await first.createToken(org.id, ['students:read', 'request_logs:read']);
      const id = `shutdown-${randomUUID()}`;
      const res = await rawCall(first, '/v1/students', {
        token: token.token,
        headers: { 'X-Request-Id': id },
      });
      expect(res.status).toBe(200);
      // Closed at once, well before the next one-second flush.
      await first.close();
      const second = await startServer({}, { databaseUrl: db.databaseUrl });
      try {
        const listed = await typedClient(second, token.token).requestLogs.list({
          query: { request_id: id },
        });
        expect(expectStatus(listed, 200).body.data).toEqual([
          expect.objectContaining({ request_id: id, route: '/v1/students', status: 200 }),
        ]);
      } finally {
        await second.close();
      }
    } finally {
      await db.drop();
    }
  });
});

describe('request log across instances', () => {
  it("two servers on one database write to the same log, and each lists the other one's requests", async () => {
    const db = await prepareDatabase(databaseOptions());
    const servers: TestServer[] = [];
    try {
      servers.push(await startServer({}, { databaseUrl: db.databaseUrl }));
      servers.push(await startServer({}, { databaseUrl: db.databaseUrl }));
      const [one, two] = servers as [TestServer, TestServer];
      const org = await one.createOrganization();
      const token = await one.createToken(org.id, ['students:read', 'request_logs:read']);
      const ids = [`one-${randomUUID()}`, `two-${randomUUID()}`];
      await rawCall(one, '/v1/students', {
        token: token.token,
        headers: { 'X-Request-Id': ids[0]! },
      });
      await rawCall(two, '/v1/students', {
        token: token.token,
        headers: { 'X-Request-Id': ids[1]! },
      });
      // Each instance's entry is read through the other.
      expect((await entryOf(two, token.token, ids[0]!)).route).toBe('/v1/students');
      expect((await entryOf(one, token.token, ids[1]!)).route).toBe('/v1/students');
    } finally {
      for (const server of servers) await server.close();
      await db.drop();
    }
  });
});
