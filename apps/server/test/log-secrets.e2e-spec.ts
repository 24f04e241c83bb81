/**
 * No secret reaches a log line: a full flow at the most verbose level (tokens used and refused,
 * webhook secrets created and rotated, deliveries signed and sent, a failing request), then
 * every secret it created is looked for in everything the server logged. No stack traces either.
 */
import { randomBytes } from 'node:crypto';
import { startReceiver, waitFor } from './support/receiver';
import { call, client, startServer, type TestServer } from './support/server';

describe('secrets in logs', () => {
  let server: TestServer;
  const lines: string[] = [];
  const METRICS_TOKEN = `metrics-${randomBytes(12).toString('hex')}`;
  const SECRETS_KEY = randomBytes(32).toString('base64');

  beforeAll(async () => {
    server = await startServer(
      {
        LOG_LEVEL: 'trace',
        METRICS_TOKEN,
        WEBHOOK_SECRETS_KEY: SECRETS_KEY,
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        WEBHOOK_RETRY_SCHEDULE: '50ms',
      },
      { logDestination: { write: (line: string) => void lines.push(line) } },
    );
  });
  afterAll(() => server.close());

  it('logs none of the tokens, webhook secrets, keys or stack traces of a full flow', async () => {
    const secrets: string[] = [METRICS_TOKEN, SECRETS_KEY];
    const org = await server.createOrganization();
    const { token } = await server.createToken(org.id, ['all']);
    const { token: readOnly } = await server.createToken(org.id, ['students:read']);
    secrets.push(token, readOnly);
    const api = client(server, token);
    const hook = await startReceiver((_req, i) =>
      i === 0 ? { status: 500, body: 'no' } : { status: 204 },
    );
    try {
      const endpoint = await api.post('/v1/webhook_endpoints', { url: hook.url, events: ['*'] });
      const rotated = await api.post(`/v1/webhook_endpoints/${endpoint.body.id}/rotate_secret`);
      secrets.push(endpoint.body.secret, rotated.body.secret);
      await api.post('/v1/students', {
        student_number: 'L-1',
        first_name: 'Log',
        last_name: 'Scan',
      });
      await waitFor(() => hook.received.length >= 2, { what: 'the delivery and its retry' });
      // Refused tokens: wrong, revoked-looking, and a valid one without the scope.
      await call(server, '/v1/students', { token: `${token}x` });
      await call(server, '/v1/courses', { token: readOnly });
      await call(server, '/v1/students', { headers: { Authorization: `Basic ${token}` } });
      await call(server, '/metrics', { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
      await call(server, '/metrics', { headers: { Authorization: `Bearer ${METRICS_TOKEN}x` } });
      await api.post('/v1/students', {
        student_number: 'L-1',
        first_name: 'Dup',
        last_name: 'Key',
      });
    } finally {
      await hook.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 100));

    const logged = lines.join('\n');
    expect(lines.length).toBeGreaterThan(10);
    for (const secret of secrets) {
      // The whole secret, and its random part on its own (prefixes are not secret).
      expect(logged).not.toContain(secret);
      expect(logged).not.toContain(secret.replace(/^(pat|whsec)_/, '').slice(0, 24));
    }
    expect(logged).not.toMatch(/\n\s+at .+\(.+:\d+:\d+\)/);
    expect(logged).not.toMatch(/"stack"/);
  });
});
