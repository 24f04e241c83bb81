/**
 * `GET /v1/usage`: the organization's requests per hour by status class (from the request log)
 * and its webhook delivery attempts per hour by outcome, for the last 7 days, every hour present;
 * the other ranges' bins; the breakdowns by credential, route and status.
 * Real requests, a real webhook receiver on loopback, real deliveries.
 */
import { randomUUID } from 'node:crypto';
import { USAGE_BINS, USAGE_HOURS, USAGE_RANGES, type UsageResource } from '@platform/contract';
import { RequestLogRecord } from '../src/request-logs/request-log.entity';
import { RequestLogWriter } from '../src/request-logs/request-log-writer';
import { expectStatus, typedClient } from './support/api';
import { type Receiver, startReceiver, waitFor } from './support/receiver';
import { rawCall, startServer, type TestServer } from './support/server';

const HOUR = 3_600_000;

/**
 * Two days ago: a 429 and a 503, recorded as the log would have (past hours cannot be replayed);
 * and eight days ago, outside the window, a 200. Returns when the two-day-old ones were made.
 */
async function insertPastRequests(
  server: TestServer,
  organizationId: string,
  credentialId: string,
) {
  const twoDaysAgo = new Date(Math.floor(Date.now() / HOUR) * HOUR - 48 * HOUR + 60_000);
  const past = (status: number) => ({
    id: `rql_01JD6Y3ZK8R5V2N3M4P5Q6R${status}`.slice(0, 30),
    organizationId,
    method: 'GET',
    route: '/v1/students',
    status,
    statusClass: `${Math.floor(status / 100)}xx`,
    latencyMs: 1,
    credentialType: 'personal_access_token' as const,
    credentialId,
    requestId: `past-${randomUUID()}`,
    errorCode: status === 429 ? 'rate_limited' : 'service_unavailable',
    createdAt: twoDaysAgo,
  });
  await server.dataSource.getRepository(RequestLogRecord).insert([past(429), past(503)]);
  await server.dataSource.getRepository(RequestLogRecord).insert({
    ...past(200),
    id: 'rql_01JD6Y3ZK8R5V2N3M4P5Q6R8S8',
    createdAt: new Date(Date.now() - 8 * 24 * HOUR),
  });
  return twoDaysAgo;
}

/** A request of the past, recorded as the log would have (past minutes cannot be replayed). */
function pastEntry(
  organizationId: string,
  credentialId: string,
  route: string,
  status: number,
  createdAt: Date,
): RequestLogRecord {
  return {
    id: `rql_${randomUUID().replace(/-/g, '').slice(0, 26)}`,
    organizationId,
    method: 'GET',
    route,
    path: route,
    status,
    statusClass: `${Math.floor(status / 100)}xx`,
    latencyMs: 1,
    credentialType: 'personal_access_token',
    credentialId,
    requestId: `past-${randomUUID()}`,
    errorCode: status >= 400 ? 'past' : null,
    createdAt,
  };
}

type Bin = UsageResource['requests'][number];
const requestsOf = (bin: Bin) =>
  bin.success + bin.client_error + bin.rate_limited + bin.server_error;
const errorsOf = (bin: Bin) => bin.client_error + bin.rate_limited + bin.server_error;

describe('usage', () => {
  let server: TestServer;
  let hook: Receiver;
  let failing = false;

  beforeAll(async () => {
    server = await startServer({
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_POLL_INTERVAL: '100ms',
      // One attempt each: a failure stays one failed attempt within the test.
      WEBHOOK_RETRY_SCHEDULE: '1h',
    });
    hook = await startReceiver(() => ({ status: failing ? 500 : 204 }));
  });
  afterAll(async () => {
    await server.close();
    await hook.close();
  });

  it('counts requests per hour by class and webhook attempts by outcome, for 168 hours, per organization', async () => {
    const org = await server.createOrganization();
    const other = await server.createOrganization();
    const token = await server.createToken(org.id, ['all']);
    const otherToken = await server.createToken(other.id, ['all']);
    const api = typedClient(server, token.token);
    // The hour the test starts in; it may end while the test runs, so "now" is this hour and any
    // later one, summed.
    const startHour = new Date(Math.floor(Date.now() / HOUR) * HOUR).toISOString();
    type Hour = { hour: string };
    const recent = <T extends Hour>(hours: T[]) => hours.filter((h) => h.hour >= startHour);
    const sum = <T extends Hour>(hours: T[], key: Exclude<keyof T, 'hour'>) =>
      hours.reduce((total, h) => total + (h[key] as number), 0);

    // This hour: 3 successes, 2 client errors (404, 400), and the other organization's traffic.
    for (let i = 0; i < 3; i++) await rawCall(server, '/v1/students', { token: token.token });
    await rawCall(server, '/v1/students/stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S8', { token: token.token });
    await rawCall(server, '/v1/students?page=0', { token: token.token });
    for (let i = 0; i < 4; i++) await rawCall(server, '/v1/courses', { token: otherToken.token });
    const twoDaysAgo = await insertPastRequests(server, org.id, token.id);

    // Webhook deliveries: two that succeed, then one that fails.
    const endpoint = expectStatus(
      await api.webhookEndpoints.create({ body: { url: hook.url, events: ['student.created'] } }),
      201,
    ).body;
    const deliveries = async () =>
      expectStatus(await api.webhookEndpoints.deliveries({ params: { id: endpoint.id } }), 200).body
        .data;
    for (let i = 0; i < 2; i++)
      expectStatus(await api.webhookEndpoints.test({ params: { id: endpoint.id } }), 202);
    await waitFor(
      async () => (await deliveries()).filter((d) => d.status === 'succeeded').length === 2,
    );
    failing = true;
    expectStatus(await api.webhookEndpoints.test({ params: { id: endpoint.id } }), 202);
    await waitFor(async () =>
      (await deliveries()).some((d) => d.status !== 'succeeded' && d.attempts.length > 0),
    );

    await server.app.get(RequestLogWriter).flush();
    const usage = expectStatus(await api.usage.retrieve(), 200).body;
    expect(usage.object).toBe('usage');
    expect(usage.requests).toHaveLength(USAGE_HOURS);
    expect(usage.webhook_deliveries).toHaveLength(USAGE_HOURS);
    expect(Date.parse(usage.to) - Date.parse(usage.from)).toBe(USAGE_HOURS * HOUR);
    const thisHour = new Date(Math.floor(Date.now() / HOUR) * HOUR).toISOString();
    expect(usage.requests.at(-1)!.hour).toBe(thisHour);
    const now = recent(usage.requests);
    // The requests above, plus the API calls this test made for the webhooks (all 2xx).
    expect(sum(now, 'client_error')).toBe(2);
    expect(sum(now, 'rate_limited')).toBe(0);
    expect(sum(now, 'server_error')).toBe(0);
    expect(sum(now, 'success')).toBeGreaterThanOrEqual(3);
    const then = usage.requests.find(
      (h) => h.hour === new Date(twoDaysAgo.getTime() - 60_000).toISOString(),
    )!;
    expect(then).toMatchObject({ success: 0, client_error: 0, rate_limited: 1, server_error: 1 });
    // Nothing else in the window: the eight-day-old entry and the other organization are out.
    const totals = usage.requests
      .filter((h) => h.hour < startHour)
      .reduce((sum, h) => sum + h.success + h.client_error + h.rate_limited + h.server_error, 0);
    expect(totals).toBe(2);
    const delivered = recent(usage.webhook_deliveries);
    expect([sum(delivered, 'succeeded'), sum(delivered, 'failed')]).toEqual([2, 1]);

    const otherUsage = expectStatus(
      await typedClient(server, otherToken.token).usage.retrieve(),
      200,
    ).body;
    const otherDelivered = recent(otherUsage.webhook_deliveries);
    expect([sum(otherDelivered, 'succeeded'), sum(otherDelivered, 'failed')]).toEqual([0, 0]);
    expect(sum(recent(otherUsage.requests), 'success')).toBeGreaterThanOrEqual(4);
    expect(sum(recent(otherUsage.requests), 'client_error')).toBe(0);
  });

  it('needs request_logs:read and refuses query parameters with problem+json', async () => {
    const org = await server.createOrganization();
    const reader = await server.createToken(org.id, ['students:read']);
    const refused = await typedClient(server, reader.token).usage.retrieve();
    expect(expectStatus(refused, 403).body.code).toBe('insufficient_scope');
    const allowed = await server.createToken(org.id, ['request_logs:read']);
    const bad = await rawCall(server, '/v1/usage?days=30', { token: allowed.token });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(JSON.stringify(bad.body)).toContain('days');
  });

  it('bins each range to fit it (hour, day, week, 30d), recent requests in the last bin', async () => {
    const org = await server.createOrganization();
    const caller = await server.createToken(org.id, ['students:read']);
    const reader = await server.createToken(org.id, ['request_logs:read']);
    const started = Date.now();
    for (let i = 0; i < 2; i++) await rawCall(server, '/v1/students', { token: caller.token });
    await rawCall(server, '/v1/students/stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S8', { token: caller.token });
    // Three days ago: a 503, inside `week` and `30d` only.
    await server.dataSource
      .getRepository(RequestLogRecord)
      .insert(pastEntry(org.id, caller.id, '/v1/students', 503, new Date(started - 3 * 24 * HOUR)));
    await server.app.get(RequestLogWriter).flush();

    for (const range of USAGE_RANGES) {
      const res = await rawCall<UsageResource>(server, `/v1/usage?range=${range}`, {
        token: reader.token,
      });
      expect(res.status).toBe(200);
      const usage = res.body;
      const { count, seconds } = USAGE_BINS[range];
      const binMs = seconds * 1000;
      expect([usage.range, usage.bin_seconds]).toEqual([range, seconds]);
      expect(usage.requests).toHaveLength(count);
      expect(usage.webhook_deliveries).toHaveLength(count);
      expect(Date.parse(usage.from) % binMs).toBe(0);
      expect(Date.parse(usage.to) - Date.parse(usage.from)).toBe(count * binMs);
      usage.requests.forEach((bin, i) => {
        expect(bin.start).toBe(new Date(Date.parse(usage.from) + i * binMs).toISOString());
        expect(bin.hour).toBe(bin.start);
        expect(usage.webhook_deliveries[i]!.start).toBe(bin.start);
      });
      // The last bin holds now.
      expect(Date.parse(usage.requests.at(-1)!.start)).toBeLessThanOrEqual(Date.now());
      expect(Date.parse(usage.to)).toBeGreaterThan(Date.now());
      // The requests above are in the last bin (or the two last, if one ended during the test).
      const firstRecent = Math.floor(started / binMs) * binMs;
      const recent = usage.requests.filter((bin) => Date.parse(bin.start) >= firstRecent);
      expect(recent.length).toBeGreaterThanOrEqual(1);
      expect(recent.length).toBeLessThanOrEqual(2);
      // Two successes, and the usage calls of this loop that the log has written so far.
      expect(recent.reduce((sum, bin) => sum + bin.success, 0)).toBeGreaterThanOrEqual(2);
      expect(recent.reduce((sum, bin) => sum + bin.client_error, 0)).toBe(1);
      const old = usage.requests.reduce((sum, bin) => sum + bin.server_error, 0);
      expect([range, old]).toEqual([range, range === 'week' || range === '30d' ? 1 : 0]);
    }
  });

  it('breaks the range down by credential, route and status: the top 10 and the rest, adding up to the bins', async () => {
    const org = await server.createOrganization();
    const caller = await server.createToken(org.id, ['students:read'], { name: 'Nightly sync' });
    const reader = await server.createToken(org.id, ['request_logs:read']);
    for (let i = 0; i < 3; i++) await rawCall(server, '/v1/students', { token: caller.token });
    await rawCall(server, '/v1/students/stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S8', { token: caller.token });
    // Twelve routes with a 500 each, ten minutes ago, by a token since deleted.
    const gone = 'tok_01JD6Y3ZK8R5V2N3M4P5Q6GONE';
    const tenMinutesAgo = new Date(Date.now() - 10 * 60_000);
    await server.dataSource
      .getRepository(RequestLogRecord)
      .insert(
        Array.from({ length: 12 }, (_, i) =>
          pastEntry(org.id, gone, `/v1/legacy/${String(i).padStart(2, '0')}`, 500, tenMinutesAgo),
        ),
      );
    await server.app.get(RequestLogWriter).flush();

    for (const range of ['hour', 'day', 'week', '30d'] as const) {
      const usage = expectStatus(
        await typedClient(server, reader.token).usage.retrieve({ query: { range } }),
        200,
      ).body;
      const requests = usage.requests.reduce((sum, bin) => sum + requestsOf(bin), 0);
      const errors = usage.requests.reduce((sum, bin) => sum + errorsOf(bin), 0);
      for (const { data, other } of Object.values(usage.breakdown)) {
        const rows = [...data, other] as { requests: number; errors: number }[];
        expect(rows.reduce((sum, row) => sum + row.requests, 0)).toBe(requests);
        expect(rows.reduce((sum, row) => sum + row.errors, 0)).toBe(errors);
        expect(data.length).toBeLessThanOrEqual(10);
        const counts = data.map((row) => row.requests);
        expect(counts).toEqual([...counts].sort((a, b) => b - a));
      }
      const { credentials, routes, statuses } = usage.breakdown;
      expect(credentials.data).toEqual(
        expect.arrayContaining([
          { type: 'personal_access_token', id: gone, name: null, requests: 12, errors: 12 },
          {
            type: 'personal_access_token',
            id: caller.id,
            name: 'Nightly sync',
            requests: 4,
            errors: 1,
          },
        ]),
      );
      // 12 legacy routes, the students list and item (and the usage calls): the rest in `other`.
      expect(routes.data).toHaveLength(10);
      expect(routes.data[0]).toEqual({
        method: 'GET',
        route: '/v1/students',
        requests: 3,
        errors: 0,
      });
      expect(routes.other.requests).toBeGreaterThanOrEqual(4);
      expect(routes.other.errors).toBeGreaterThanOrEqual(3);
      expect(statuses.data).toEqual(
        expect.arrayContaining([
          { status: 500, requests: 12, errors: 12 },
          { status: 404, requests: 1, errors: 1 },
        ]),
      );
      expect(statuses.other).toEqual({ requests: 0, errors: 0 });
    }
  });

  it('agrees with itself while requests are being logged: every breakdown adds up to the bins', async () => {
    const org = await server.createOrganization();
    const reader = await server.createToken(org.id, ['request_logs:read']);
    const repository = server.dataSource.getRepository(RequestLogRecord);
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing) {
        const status = written % 3 === 0 ? 500 : 200;
        await repository.insert(
          pastEntry(org.id, `tok_${written}`, '/v1/students', status, new Date()),
        );
        written += 1;
        // Between the usage calls' reads, not only between the calls.
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    try {
      for (let i = 0; i < 30; i++) {
        const usage = expectStatus(
          await typedClient(server, reader.token).usage.retrieve({ query: { range: 'hour' } }),
          200,
        ).body;
        const requests = usage.requests.reduce((sum, bin) => sum + requestsOf(bin), 0);
        const errors = usage.requests.reduce((sum, bin) => sum + errorsOf(bin), 0);
        for (const [name, { data, other }] of Object.entries(usage.breakdown)) {
          const rows = [...data, other] as { requests: number; errors: number }[];
          const sums = [
            rows.reduce((sum, row) => sum + row.requests, 0),
            rows.reduce((sum, row) => sum + row.errors, 0),
          ];
          expect([i, name, sums]).toEqual([i, name, [requests, errors]]);
        }
      }
    } finally {
      writing = false;
      await writer;
    }
    expect(written).toBeGreaterThan(30);
  });

  it('refuses an unknown range with problem+json naming it', async () => {
    const org = await server.createOrganization();
    const reader = await server.createToken(org.id, ['request_logs:read']);
    for (const range of ['month', 'HOUR', '']) {
      const bad = await rawCall(server, `/v1/usage?range=${range}`, { token: reader.token });
      expect(bad.status).toBe(400);
      expect(bad.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(JSON.stringify(bad.body)).toContain('range');
    }
  });
});
