import { TEST_HOST_ADDRESS, takeViolations } from '@platform/hermetic';
import { watchSocketConnects } from '@platform/hermetic/watch-sockets';
import { expectStatus, typedClient, type TypedClient } from './support/api';
import { startServer, type TestServer } from './support/server';
import { waitFor } from './support/receiver';

/**
 * The test run is hermetic (tooling/hermetic): a webhook endpoint that looks public to the SSRF
 * guard is accepted at registration, and its delivery is refused before any socket exists.
 */
describe('a delivery to an outside address during tests', () => {
  let server: TestServer;
  let api: TypedClient;

  beforeAll(async () => {
    // Production's URL policy (https, public addresses only) and the dispatcher on.
    server = await startServer({ WEBHOOK_POLL_INTERVAL: '100ms' });
    const org = await server.createOrganization();
    api = typedClient(server, (await server.createToken(org.id, ['all'])).token);
  });
  afterAll(() => server.close());

  it('is accepted at registration, refused at connect time, and reported to the test', async () => {
    const endpoint = expectStatus(
      await api.webhookEndpoints.create({
        body: { url: 'https://hooks.school.test/hooks', events: ['student.created'] },
      }),
      201,
    );

    const sockets = watchSocketConnects();
    try {
      const student = await api.students.create({
        body: { student_number: 'H-1', first_name: 'Her', last_name: 'Metic' },
      });
      expect(student.status).toBe(201);
      const attempt = await waitFor(async () => {
        const res = await api.webhookEndpoints.deliveries({ params: { id: endpoint.body.id } });
        return expectStatus(res, 200).body.data[0]?.attempts[0];
      });
      expect(attempt).toMatchObject({ status_code: null });
      expect(attempt.error).toMatch(/hermetic: refused connection to 3ffe:ffff::7e57/);
    } finally {
      sockets.restore();
    }
    // The server's own loopback traffic went through; nothing went anywhere else.
    expect(sockets.seen).toContain('127.0.0.1');
    expect(sockets.seen.filter((address) => address !== '127.0.0.1')).toEqual([]);
    // The refusal is on the run's record: left there, it would fail this test.
    expect(takeViolations()).toEqual([
      expect.objectContaining({
        kind: 'connection',
        target: TEST_HOST_ADDRESS,
        detail: 'resolved from hooks.school.test',
      }),
    ]);
  });
});
