/**
 * The whole webhook loop through the SDK: register an endpoint, make a change, receive the
 * delivery on a real loopback receiver, and verify it with `verifyWebhook`, typed.
 */
import type { EventOf } from '@platform/contract';
import { startTestServer, type TestServer } from '@platform/server/testing';
import { startLocalServer, type LocalServer } from '../test/local-server';
import {
  createClient,
  type PlatformClient,
  verifyWebhook,
  WebhookVerificationError,
} from './index';

let server: TestServer;
let sdk: PlatformClient;
let receiver: LocalServer;

beforeAll(async () => {
  server = await startTestServer({
    postgresAdminUrl: process.env.TEST_DATABASE_URL,
    redisUrl: process.env.TEST_REDIS_URL,
    env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: '100ms' },
  });
  const organization = await server.createOrganization();
  const { token } = await server.createToken(organization.id, ['all']);
  sdk = createClient({ baseUrl: server.url, token });
  receiver = await startLocalServer((_req, res) => res.writeHead(204).end());
});

afterAll(async () => {
  await receiver?.close();
  await server?.close();
});

async function waitFor<T>(check: () => T | undefined): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

it('a delivery verifies with the secret from create, and comes back typed', async () => {
  const endpoint = await sdk.webhookEndpoints.create({
    body: { url: `${receiver.url}/hooks`, events: ['enrollment.created'] },
  });
  expect(endpoint.secret).toMatch(/^whsec_/);
  const student = await sdk.students.create({
    body: { student_number: 'WH-1', first_name: 'Web', last_name: 'Hook' },
  });
  const course = await sdk.courses.create({ body: { code: 'WH-101', title: 'Webhooks' } });
  const enrollment = await sdk.enrollments.create({
    body: { student_id: student.id, course_id: course.id },
  });

  const request = await waitFor(() => receiver.requests.find((r) => r.path === '/hooks'));
  const event = await verifyWebhook(request.body, request.headers, endpoint.secret);
  expect(event.type).toBe('enrollment.created');
  const typed = event as EventOf<'enrollment.created'>;
  expect(typed.data).toEqual(enrollment);
  // The delivery also names the endpoint's previous change; the event itself is the same.
  const { previous_position: previous, ...delivered } = event;
  expect(previous).toBeNull();
  expect(await sdk.events.retrieve({ params: { id: event.id } })).toEqual(delivered);

  // A re-serialised body fails, and says why.
  await expect(
    verifyWebhook(
      JSON.stringify(JSON.parse(request.body), null, 2),
      request.headers,
      endpoint.secret,
    ),
  ).rejects.toBeInstanceOf(WebhookVerificationError);

  const deliveries = [];
  for await (const delivery of sdk.webhookEndpoints.deliveriesAll({
    params: { id: endpoint.id },
    query: { per_page: 1 },
  })) {
    deliveries.push(delivery);
  }
  expect(deliveries).toHaveLength(1);
  expect(deliveries[0]).toMatchObject({ id: request.headers['webhook-id'], event_id: event.id });
});

it('after rotate_secret, a delivery verifies with the old secret and with the new one', async () => {
  const endpoint = await sdk.webhookEndpoints.create({
    body: { url: `${receiver.url}/rotated`, events: ['*'] },
  });
  const rotated = await sdk.webhookEndpoints.rotateSecret({ params: { id: endpoint.id } });
  const queued = await sdk.webhookEndpoints.test({ params: { id: endpoint.id } });
  const request = await waitFor(() => receiver.requests.find((r) => r.path === '/rotated'));
  expect(request.headers['webhook-id']).toBe(queued.id);
  for (const secrets of [endpoint.secret, rotated.secret, [rotated.secret, endpoint.secret]]) {
    const event = await verifyWebhook(request.body, request.headers, secrets);
    expect(event).toMatchObject({ type: 'ping', data: { message: expect.any(String) } });
  }
  const redelivery = await sdk.webhookDeliveries.retry({ params: { id: queued.id } });
  expect(redelivery.id).toBe(queued.id);
  await waitFor(() =>
    receiver.requests.filter((r) => r.path === '/rotated').length >= 2 ? true : undefined,
  );
});
