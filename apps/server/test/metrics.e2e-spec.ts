import { expectStatus, typedClient } from './support/api';
import { startReceiver, waitFor } from './support/receiver';
import { rawCall, startServer, type TestServer } from './support/server';

const METRICS_TOKEN = 'metrics-token-for-tests-0123456789';

/** The value of one sample in a Prometheus text exposition, or 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (wanted.every((pair) => line.includes(pair))) return Number(line.split(' ').pop());
  }
  return 0;
}

describe('GET /metrics', () => {
  let server: TestServer;
  // /metrics is not part of the API contract: it is read raw.
  const scrape = async () => {
    const res = await rawCall(server, '/metrics', {
      headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    return res.body as string;
  };

  beforeAll(async () => {
    server = await startServer({
      METRICS_TOKEN,
      RATE_LIMIT_ANONYMOUS: '3',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    });
  });
  afterAll(() => server.close());

  it('wants the metrics token when one is configured', async () => {
    expect((await rawCall(server, '/metrics')).status).toBe(401);
    const wrong = await rawCall(server, '/metrics', { headers: { Authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('content-type')).toMatch(/application\/problem\+json/);
  });

  it('counts requests by route pattern and status, and their latency', async () => {
    const org = await server.createOrganization();
    const api = typedClient(server, (await server.createToken(org.id, ['all'])).token);
    const before = await scrape();
    const labels = { route: '/v1/students/:id', method: 'GET', status: '404' };
    await api.students.retrieve({ params: { id: 'stu_missing' } });
    await api.students.retrieve({ params: { id: 'stu_missing_too' } });
    const after = await scrape();
    const count = 'http_request_duration_seconds_count';
    expect(sample(after, count, labels) - sample(before, count, labels)).toBe(2);
    expect(sample(after, 'http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(
      sample(after, count, labels),
    );
    // Ids never become labels: the pattern does.
    expect(after).not.toContain('stu_missing');
  });

  it('counts rate-limit rejections by budget', async () => {
    const before = sample(await scrape(), 'rate_limit_rejections_total', { budget: 'anonymous' });
    const anonymous = typedClient(server);
    for (let i = 0; i < 5; i += 1) await anonymous.students.list();
    const after = sample(await scrape(), 'rate_limit_rejections_total', { budget: 'anonymous' });
    expect(after - before).toBeGreaterThanOrEqual(2);
  });

  it('counts webhook attempts by outcome, their duration, delivery latency and the queue', async () => {
    const org = await server.createOrganization();
    const api = typedClient(server, (await server.createToken(org.id, ['all'])).token);
    const hook = await startReceiver((_req, i) => (i === 0 ? { status: 500 } : { status: 204 }));
    try {
      const endpoint = await api.webhookEndpoints.create({
        body: { url: hook.url, events: ['student.created'] },
      });
      expectStatus(endpoint, 201);
      const student = await api.students.create({
        body: { student_number: 'M-1', first_name: 'Me', last_name: 'Trics' },
      });
      expectStatus(student, 201);
      // The first attempt fails (500); the retry comes 5 s later, so only one outcome yet.
      await waitFor(
        async () =>
          sample(await scrape(), 'webhook_delivery_attempts_total', { outcome: 'http_error' }) ===
          1,
      );
      const text = await scrape();
      expect(sample(text, 'webhook_attempt_duration_seconds_count')).toBe(1);
      expect(sample(text, 'webhook_queue_depth')).toBe(1);
      expect(sample(text, 'webhook_delivery_latency_seconds_count')).toBe(0);
    } finally {
      await hook.close();
    }
  });
});
