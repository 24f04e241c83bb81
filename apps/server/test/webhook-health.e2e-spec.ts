import { expectStatus, typedClient, type TypedClient } from './support/api';
import { startServer, type TestServer } from './support/server';
import { type Receiver, type Reply, startReceiver, waitFor } from './support/receiver';

const HOUR_MS = 3_600_000;

/**
 * What the portal's webhook pages read besides the delivery state: the headers each attempt
 * sent, as its receiver got them but for the signatures, and an endpoint's failure streak with
 * the time the automatic `failing` disable will come.
 */
describe('webhook health and attempt headers', () => {
  let server: TestServer;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    server = await startServer({
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '100ms,100ms',
      WEBHOOK_TIMEOUT: '600ms',
      WEBHOOK_DISABLE_AFTER: '1h',
      WEBHOOK_POLL_INTERVAL: '100ms',
      LOG_LEVEL: 'error',
    });
  });
  afterAll(async () => {
    await server.close();
    await Promise.all(receivers.map((r) => r.close()));
  });

  async function organization() {
    const org = await server.createOrganization();
    return typedClient(server, (await server.createToken(org.id, ['all'])).token);
  }

  async function receiver(reply?: () => Reply) {
    const r = await startReceiver(reply);
    receivers.push(r);
    return r;
  }

  async function endpointNow(caller: TypedClient, id: string) {
    return expectStatus(await caller.webhookEndpoints.retrieve({ params: { id } }), 200).body;
  }

  async function deliveryNow(caller: TypedClient, id: string) {
    return expectStatus(await caller.webhookDeliveries.retrieve({ params: { id } }), 200).body;
  }

  it("each attempt's request_headers are the headers its receiver got, signatures withheld", async () => {
    const caller = await organization();
    const hook = await receiver();
    const ep = expectStatus(
      await caller.webhookEndpoints.create({ body: { url: hook.url, events: ['*'] } }),
      201,
    ).body;
    // Two live secrets: the header carries two signatures, and the record says so.
    expectStatus(await caller.webhookEndpoints.rotateSecret({ params: { id: ep.id } }), 200);
    const ping = expectStatus(await caller.webhookEndpoints.test({ params: { id: ep.id } }), 202);
    await waitFor(async () => (await deliveryNow(caller, ping.body.id)).status === 'succeeded');
    expectStatus(await caller.webhookDeliveries.retry({ params: { id: ping.body.id } }), 202);
    const delivery = await waitFor(async () => {
      const now = await deliveryNow(caller, ping.body.id);
      return now.attempts.length === 2 && now;
    });

    expect(hook.received).toHaveLength(2);
    for (const [i, attempt] of delivery.attempts.entries()) {
      const sent = hook.received[i]!.headers;
      const signatures = String(sent['webhook-signature']).split(' ');
      expect(signatures).toHaveLength(2);
      expect(attempt.request_headers).toEqual({
        ...sent,
        'webhook-signature': 'v1,<withheld> v1,<withheld>',
      });
      const recorded = JSON.stringify(attempt.request_headers);
      for (const signature of signatures) expect(recorded).not.toContain(signature.slice(3));
    }
    // Each attempt its own: the same webhook-id, its own timestamp.
    expect(delivery.attempts[0]!.request_headers).toMatchObject({
      'webhook-id': ping.body.id,
      'content-type': 'application/json',
      'user-agent': `PlatformWebhooks/1.0 (+${server.url}/docs)`,
    });
    expect(delivery.attempts[1]!.request_headers!['webhook-timestamp']).toBe(
      hook.received[1]!.headers['webhook-timestamp'],
    );
  });

  it('failing_since and disables_at follow the failure streak; a success clears them', async () => {
    const caller = await organization();
    let failing = true;
    const hook = await receiver(() => ({ status: failing ? 503 : 204 }));
    const ep = expectStatus(
      await caller.webhookEndpoints.create({ body: { url: hook.url, events: ['*'] } }),
      201,
    ).body;
    expect(ep).toMatchObject({ failing_since: null, disables_at: null });

    const ping = expectStatus(await caller.webhookEndpoints.test({ params: { id: ep.id } }), 202);
    const failed = await waitFor(async () => {
      const now = await endpointNow(caller, ep.id);
      return now.failing_since !== null && now;
    });
    const [first] = (await deliveryNow(caller, ping.body.id)).attempts;
    const since = Date.parse(failed.failing_since!);
    expect(since).toBeGreaterThanOrEqual(Date.parse(first!.attempted_at));
    expect(since).toBeLessThanOrEqual(Date.now());
    expect(Date.parse(failed.disables_at!) - since).toBe(HOUR_MS);
    // The list says the same as the endpoint itself.
    const listed = expectStatus(await caller.webhookEndpoints.list({ query: {} }), 200).body.data;
    expect(listed.find((e) => e.id === ep.id)).toMatchObject({
      failing_since: failed.failing_since,
      disables_at: failed.disables_at,
    });

    // More failures keep the streak's start.
    await waitFor(async () => (await deliveryNow(caller, ping.body.id)).status === 'failed');
    expect(await endpointNow(caller, ep.id)).toMatchObject({
      failing_since: failed.failing_since,
      disables_at: failed.disables_at,
    });

    // A success ends the streak.
    failing = false;
    const test = expectStatus(await caller.webhookEndpoints.test({ params: { id: ep.id } }), 202);
    await waitFor(async () => (await deliveryNow(caller, test.body.id)).status === 'succeeded');
    expect(await endpointNow(caller, ep.id)).toMatchObject({
      failing_since: null,
      disables_at: null,
    });
  });
});
