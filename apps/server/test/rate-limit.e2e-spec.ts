import { setTimeout as sleep } from 'node:timers/promises';
import { expectStatus, typedClient } from './support/api';
import { rawCall, startServer, type TestServer } from './support/server';

/**
 * Whole seconds left of a 60 s window opened between `opened` and now, as the headers count
 * them: from 60 (no time passed) down by every second since `opened`, however slow the machine.
 */
function secondsLeft(opened: number): [number, number] {
  return [60 - Math.ceil((Date.now() - opened) / 1000), 60];
}

describe('rate limits', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startServer({ RATE_LIMIT_ANONYMOUS: '5' });
  });
  afterAll(() => server.close());

  it('sends the GitHub-style and IETF draft headers on every authenticated response', async () => {
    const org = await server.createOrganization();
    const { token } = await server.createToken(org.id, ['students:read']);
    const api = typedClient(server, token);
    const opened = Date.now();
    const first = await api.students.list();
    const firstAnswered = Date.now();
    const second = await api.students.list();
    const [least, most] = secondsLeft(opened);
    expect(first.headers.get('x-ratelimit-limit')).toBe('600');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('599');
    expect(second.headers.get('x-ratelimit-remaining')).toBe('598');
    // The window opened with the first request: it resets 60 s after it.
    const reset = Number(first.headers.get('x-ratelimit-reset'));
    expect(reset).toBeGreaterThanOrEqual(Math.ceil(opened / 1000) + 60);
    expect(reset).toBeLessThanOrEqual(Math.ceil(firstAnswered / 1000) + 60);
    expect(first.headers.get('ratelimit-policy')).toBe('"default";q=600;w=60');
    const [, left] = second.headers.get('ratelimit')?.match(/^"default";r=598;t=(\d+)$/) ?? [];
    expect(Number(left)).toBeGreaterThanOrEqual(least);
    expect(Number(left)).toBeLessThanOrEqual(most);
  });

  it('answers 429 with Retry-After once the organization spent its limit, across all its tokens', async () => {
    const org = await server.createOrganization({ rateLimitPerMinute: 3 });
    const a = typedClient(server, (await server.createToken(org.id, ['students:read'])).token);
    const b = typedClient(server, (await server.createToken(org.id, ['students:read'])).token);
    const opened = Date.now();
    expect((await a.students.list()).status).toBe(200);
    expect((await b.students.list()).status).toBe(200);
    const last = await a.students.list();
    expect(last.status).toBe(200);
    expect(last.headers.get('x-ratelimit-remaining')).toBe('0');

    const limited = await b.students.list();
    const [least, most] = secondsLeft(opened);
    expect(limited.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(expectStatus(limited, 429).body.code).toBe('rate_limited');
    // Until the window's first request leaves it, 60 s after it was made.
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(least);
    expect(retryAfter).toBeLessThanOrEqual(most);
    expect(limited.headers.get('x-ratelimit-limit')).toBe('3');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    // Errors of other routes spend the same budget: a 404 under the API is not counted (no route),
    // but every contract route is, including bad requests.
    expect((await a.students.list({ query: { per_page: 0 } })).status).toBe(429);
  });

  it('keeps organizations independent', async () => {
    const busy = await server.createOrganization({ rateLimitPerMinute: 1 });
    const calm = await server.createOrganization();
    const { token: busyToken } = await server.createToken(busy.id, ['students:read']);
    const { token: calmToken } = await server.createToken(calm.id, ['students:read']);
    expect((await typedClient(server, busyToken).students.list()).status).toBe(200);
    expect((await typedClient(server, busyToken).students.list()).status).toBe(429);
    const res = await typedClient(server, calmToken).students.list();
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-remaining')).toBe('599');
  });

  it("uses an Enterprise organization's own limit", async () => {
    const org = await server.createOrganization({ plan: 'enterprise', rateLimitPerMinute: 5000 });
    const { token } = await server.createToken(org.id, ['students:read']);
    const res = await typedClient(server, token).students.list();
    expect(res.headers.get('x-ratelimit-limit')).toBe('5000');
    expect(res.headers.get('ratelimit-policy')).toBe('"default";q=5000;w=60');
  });

  it('limits requests without a valid token per client IP, before answering 401', async () => {
    // RATE_LIMIT_ANONYMOUS=5 for this server; earlier tests sent no anonymous requests.
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const caller = typedClient(server, i % 2 ? 'pat_wrong' : undefined);
      statuses.push((await caller.students.list()).status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
  });

  describe('operations that cost more than one unit', () => {
    it('charges an export 20 units, its download 10 and the checksums 20, in the headers', async () => {
      const org = await server.createOrganization();
      const { token } = await server.createToken(org.id, ['all']);
      const api = typedClient(server, token);
      const remaining = (res: { headers: Headers }) =>
        Number(res.headers.get('x-ratelimit-remaining'));
      expect(remaining(await api.students.list())).toBe(599);
      const created = expectStatus(
        await api.exports.create({ body: { collection: 'students' } }),
        202,
      );
      expect(remaining(created)).toBe(579);
      expect(created.headers.get('ratelimit')).toMatch(/^"default";r=579;t=\d+$/);
      expect(remaining(await api.checksums.retrieve({ query: {} }))).toBe(559);
      const { id } = created.body;
      let polled = expectStatus(await api.exports.retrieve({ params: { id } }), 200);
      while (polled.body.status !== 'succeeded') {
        expect(polled.body.status).toMatch(/^(queued|running)$/);
        await sleep(50);
        polled = expectStatus(await api.exports.retrieve({ params: { id } }), 200);
      }
      const file = await fetch(`${server.url}/v1/exports/${id}/file`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(file.status).toBe(200);
      await file.text();
      expect(remaining(file)).toBe(remaining(polled) - 10);
    });

    it('refuses one that does not fit with when it will, while a one-unit read still passes', async () => {
      const org = await server.createOrganization({ rateLimitPerMinute: 30 });
      const { token } = await server.createToken(org.id, ['all']);
      const api = typedClient(server, token);
      // One unit, then seconds later an export (20) and two reads: 7 of 30 left.
      expect((await api.students.list()).headers.get('x-ratelimit-remaining')).toBe('29');
      await sleep(2_500);
      const opened = Date.now();
      expectStatus(await api.exports.create({ body: { collection: 'students' } }), 202);
      await api.students.list();
      expect((await api.students.list()).headers.get('x-ratelimit-remaining')).toBe('7');

      const refused = await api.exports.create({ body: { collection: 'students' } });
      const [least, most] = secondsLeft(opened);
      const retryAfter = Number(refused.headers.get('retry-after'));
      // Not when the first unit frees one slot (2.5 s sooner), but when 13 have left: the export's.
      expect(retryAfter).toBeGreaterThanOrEqual(least);
      expect(retryAfter).toBeLessThanOrEqual(most);
      expect(Number(refused.headers.get('x-ratelimit-reset'))).toBeGreaterThanOrEqual(
        Math.ceil(opened / 1000) + 60,
      );
      expect(refused.headers.get('x-ratelimit-remaining')).toBe('7');
      expect(expectStatus(refused, 429).body).toMatchObject({
        code: 'rate_limited',
        detail: `Rate limit of 30 units per 60 seconds exceeded: this operation costs 20 units; 7 remain; retry in ${retryAfter} s`,
      });
      // The checksums (20) are refused as well; the refusals spent nothing, so a read passes.
      expect((await api.checksums.retrieve({ query: {} })).status).toBe(429);
      const read = await api.students.list();
      expect(read.status).toBe(200);
      expect(read.headers.get('x-ratelimit-remaining')).toBe('6');
    });

    it('charges one unit, not the cost, for a request refused by its scope or its validation', async () => {
      const org = await server.createOrganization();
      const { token: readOnly } = await server.createToken(org.id, ['organization:read']);
      const { token: exporter } = await server.createToken(org.id, [
        'exports:write',
        'students:read',
      ]);
      const refused = await rawCall(server, '/v1/exports', {
        method: 'POST',
        token: readOnly,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ collection: 'students' }),
      });
      expect(refused.status).toBe(403);
      expect(refused.headers.get('x-ratelimit-remaining')).toBe('599');
      const invalid = await rawCall(server, '/v1/exports', {
        method: 'POST',
        token: exporter,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ collection: 'no_such_collection' }),
      });
      expect(invalid.status).toBe(400);
      expect(invalid.headers.get('x-ratelimit-remaining')).toBe('598');
      const served = await rawCall(server, '/v1/exports', {
        method: 'POST',
        token: exporter,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ collection: 'students' }),
      });
      expect(served.status).toBe(202);
      expect(served.headers.get('x-ratelimit-remaining')).toBe('578');
    });

    it("lets an admin revoke a token and change a member while the organization's budget is spent", async () => {
      const org = await server.createOrganization({ rateLimitPerMinute: 10 });
      const admin = await server.createUser(
        org.id,
        'admin@reserve.test',
        'a long enough password',
        {
          role: 'admin',
        },
      );
      const viewer = await server.createUser(
        org.id,
        'viewer@reserve.test',
        'a long enough password',
        {
          role: 'viewer',
        },
      );
      const { token: adminToken } = await server.createToken(org.id, ['all'], { userId: admin.id });
      const abusive = await server.createToken(org.id, ['all']);
      const abuser = typedClient(server, abusive.token);
      expectStatus(await abuser.exports.create({ body: { collection: 'students' } }), 202);
      expect((await abuser.students.list()).status).toBe(429);
      const api = typedClient(server, adminToken);
      expect((await api.students.list()).status).toBe(429);

      const revoked = expectStatus(
        await api.personalAccessTokens.delete({ params: { id: abusive.id } }),
        200,
      );
      expect(revoked.body.revoked_at).not.toBeNull();
      const changed = expectStatus(
        await api.members.update({ params: { id: viewer.id }, body: { role: 'developer' } }),
        200,
      );
      expect(changed.body.role).toBe('developer');
    });

    it('charges a cost above the whole limit as the limit, so it still passes in an empty window', async () => {
      const org = await server.createOrganization({ rateLimitPerMinute: 10 });
      const { token } = await server.createToken(org.id, ['all']);
      const api = typedClient(server, token);
      const created = await api.exports.create({ body: { collection: 'students' } });
      expect(expectStatus(created, 202).headers.get('x-ratelimit-remaining')).toBe('0');
      expect((await api.students.list()).status).toBe(429);
      const again = await api.exports.create({ body: { collection: 'students' } });
      expect(expectStatus(again, 429).body.detail).toBe(
        `Rate limit of 10 units per 60 seconds exceeded: this operation costs 20 units, charged as 10 (the whole limit); 0 remain; retry in ${again.headers.get('retry-after')} s`,
      );
    });
  });

  it('does not rate-limit health checks or documentation', async () => {
    // Health checks are outside the contract: called raw.
    for (let i = 0; i < 8; i++) expect((await rawCall(server, '/health/live')).status).toBe(200);
  });
});
