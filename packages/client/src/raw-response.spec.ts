/**
 * `withResponse()`, hooks and per-call options against the real server (SQLite, or PostgreSQL
 * when TEST_DATABASE_URL is set): the headers it sends, replays and one-time secrets.
 */
import { startTestServer, type TestServer } from '@platform/server/testing';
import {
  createClient,
  PlatformConflictError,
  type RequestHookEvent,
  type ResponseHookEvent,
} from './index';

let server: TestServer;
let token: string;

beforeAll(async () => {
  server = await startTestServer({
    postgresAdminUrl: process.env.TEST_DATABASE_URL,
    redisUrl: process.env.TEST_REDIS_URL,
  });
  const organization = await server.createOrganization();
  token = (
    await server.createToken(organization.id, ['students:read', 'students:write', 'tokens:write'])
  ).token;
  await server.insertStudents(organization.id, 12);
});

afterAll(() => server?.close());

describe('withResponse() against the real server', () => {
  it('gives status, rate limit, Link and request id beside the parsed body', async () => {
    const platform = createClient({ baseUrl: server.url, token });
    const raw = await platform.students.list({ per_page: 5, sort: 'created_at' }).withResponse();

    expect(raw.status).toBe(200);
    expect(raw.data.data).toHaveLength(5);
    expect(raw.data.meta.total).toBe(12);
    expect(Number(raw.headers.get('x-ratelimit-remaining'))).toBeGreaterThan(0);
    expect(raw.headers.get('link')).toContain('rel="next"');
    expect(raw.requestId).toEqual(expect.any(String));
    expect(raw.requestId).toBe(raw.headers.get('x-request-id'));
    expect(raw.retriesTaken).toBe(0);
    // The plain call resolves to the same body.
    const plain = await platform.students.list({ per_page: 5, sort: 'created_at' });
    expect(plain.data.map((s) => s.id)).toEqual(raw.data.data.map((s) => s.id));
  });

  it('shows a replayed create as Idempotent-Replayed, with the first response', async () => {
    const platform = createClient({ baseUrl: server.url, token });
    const body = { student_number: 'S-RAW-1', first_name: 'Ada', last_name: 'Lovelace' };
    const options = { idempotencyKey: 'raw-response-spec-1' };
    const first = await platform.students.create({ body }, options).withResponse();
    const again = await platform.students.create({ body }, options).withResponse();

    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.data.id).toBe(first.data.id);
  });

  it('answers a retried create of a one-time secret with 409 naming the record', async () => {
    const platform = createClient({ baseUrl: server.url, token });
    const request = { body: { name: 'nightly sync', scopes: ['students:read' as const] } };
    const options = { idempotencyKey: 'raw-response-spec-pat' };
    const created = await platform.personalAccessTokens.create(request, options);
    expect(created.token).toMatch(/^pat_/);

    const error = await platform.personalAccessTokens
      .create(request, options)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatformConflictError);
    expect((error as PlatformConflictError).detail).toContain(created.id);
    expect(JSON.stringify((error as PlatformConflictError).body)).not.toContain(created.token);
  });
});

describe('hooks and per-call options against the real server', () => {
  it('calls onRequest and onResponse once per attempt, never showing the token', async () => {
    const requests: RequestHookEvent[] = [];
    const responses: ResponseHookEvent[] = [];
    const platform = createClient({
      baseUrl: server.url,
      token,
      hooks: {
        onRequest: (event) => {
          requests.push({ ...event, headers: { ...event.headers } });
          event.headers.traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
        },
        onResponse: (event) => void responses.push(event),
      },
    });
    const raw = await platform.students.list({ per_page: 1 }).withResponse();

    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ method: 'GET', attempt: 0 });
    expect(requests[0]!.url).toContain('/v1/students?per_page=1');
    expect(requests[0]!.headers.authorization).toBeUndefined();
    expect(JSON.stringify(requests)).not.toContain(token);
    expect(responses).toHaveLength(1);
    expect(responses[0]).toMatchObject({ status: 200, attempt: 0, requestId: raw.requestId });
    expect(responses[0]!.durationMs).toBeGreaterThan(0);
  });

  it('a per-call timeoutMs of 1 ms times that call out, not the next', async () => {
    const platform = createClient({ baseUrl: server.url, token });
    const error = await platform.students
      .list({ per_page: 100 }, { timeoutMs: 1, maxRetries: 0 })
      .catch((e: unknown) => e);
    expect((error as Error).name).toBe('PlatformTimeoutError');
    expect((error as Error).message).toContain('within 1 ms');
    expect((await platform.students.list({ per_page: 1 })).data).toHaveLength(1);
  });
});
