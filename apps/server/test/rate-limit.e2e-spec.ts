import { call, startServer, type TestServer } from './support/server';

describe('rate limits', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startServer({ RATE_LIMIT_ANONYMOUS: '5' });
  });
  afterAll(() => server.close());

  it('sends the GitHub-style and IETF draft headers on every authenticated response', async () => {
    const org = await server.createOrganization();
    const { token } = await server.createToken(org.id, ['students:read']);
    const first = await call(server, '/v1/students', { token });
    const second = await call(server, '/v1/students', { token });
    expect(first.headers.get('x-ratelimit-limit')).toBe('600');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('599');
    expect(second.headers.get('x-ratelimit-remaining')).toBe('598');
    const reset = Number(first.headers.get('x-ratelimit-reset'));
    const now = Date.now() / 1000;
    expect(reset).toBeGreaterThan(now + 55);
    expect(reset).toBeLessThanOrEqual(Math.ceil(now + 61));
    expect(first.headers.get('ratelimit-policy')).toBe('"default";q=600;w=60');
    expect(second.headers.get('ratelimit')).toMatch(/^"default";r=598;t=(59|60)$/);
  });

  it('answers 429 with Retry-After once the organization spent its limit, across all its tokens', async () => {
    const org = await server.createOrganization({ rateLimitPerMinute: 3 });
    const { token: a } = await server.createToken(org.id, ['students:read']);
    const { token: b } = await server.createToken(org.id, ['students:read']);
    expect((await call(server, '/v1/students', { token: a })).status).toBe(200);
    expect((await call(server, '/v1/students', { token: b })).status).toBe(200);
    const last = await call(server, '/v1/students', { token: a });
    expect(last.status).toBe(200);
    expect(last.headers.get('x-ratelimit-remaining')).toBe('0');

    const limited = await call(server, '/v1/students', { token: b });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(limited.body.code).toBe('rate_limited');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(58);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers.get('x-ratelimit-limit')).toBe('3');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    // Errors of other routes spend the same budget: a 404 under the API is not counted (no route),
    // but every contract route is, including bad requests.
    expect((await call(server, '/v1/students?per_page=0', { token: a })).status).toBe(429);
  });

  it('keeps organizations independent', async () => {
    const busy = await server.createOrganization({ rateLimitPerMinute: 1 });
    const calm = await server.createOrganization();
    const { token: busyToken } = await server.createToken(busy.id, ['students:read']);
    const { token: calmToken } = await server.createToken(calm.id, ['students:read']);
    expect((await call(server, '/v1/students', { token: busyToken })).status).toBe(200);
    expect((await call(server, '/v1/students', { token: busyToken })).status).toBe(429);
    const res = await call(server, '/v1/students', { token: calmToken });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-remaining')).toBe('599');
  });

  it("uses an Enterprise organization's own limit", async () => {
    const org = await server.createOrganization({ plan: 'enterprise', rateLimitPerMinute: 5000 });
    const { token } = await server.createToken(org.id, ['students:read']);
    const res = await call(server, '/v1/students', { token });
    expect(res.headers.get('x-ratelimit-limit')).toBe('5000');
    expect(res.headers.get('ratelimit-policy')).toBe('"default";q=5000;w=60');
  });

  it('limits requests without a valid token per client IP, before answering 401', async () => {
    // RATE_LIMIT_ANONYMOUS=5 for this server; earlier tests sent no anonymous requests.
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      statuses.push(
        (await call(server, '/v1/students', { token: i % 2 ? 'pat_wrong' : undefined })).status,
      );
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
  });

  it('does not rate-limit health checks or documentation', async () => {
    for (let i = 0; i < 8; i++) expect((await call(server, '/health/live')).status).toBe(200);
  });
});
