import { expectStatus, typedClient, type TypedClient } from './support/api';
import { type Receiver, startReceiver, waitFor } from './support/receiver';
import { startServer, type TestServer } from './support/server';

/**
 * "Replay every failed delivery since …" (POST /v1/webhook_endpoints/:id/replay_failed) against
 * a real receiver on loopback: the day an endpoint was down, its failed deliveries go out again
 * with their webhook-ids; succeeded ones, older ones and other endpoints' are left alone. And an
 * endpoint's health over 24 hours (GET /v1/webhook_endpoints/:id/stats).
 */
describe('replaying failed deliveries, and an endpoint’s stats', () => {
  let server: TestServer;
  let api: TypedClient;
  let hook: Receiver;
  /** The receiver answers 503 while this is true. */
  let down = true;

  beforeAll(async () => {
    server = await startServer({
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '100ms',
      WEBHOOK_POLL_INTERVAL: '100ms',
    });
    const org = await server.createOrganization();
    api = typedClient(server, (await server.createToken(org.id, ['all'])).token);
    hook = await startReceiver(() => ({ status: down ? 503 : 204 }));
  });
  afterAll(async () => {
    await server.close();
    await hook.close();
  });

  async function statuses(endpointId: string) {
    const res = await api.webhookEndpoints.deliveries({
      params: { id: endpointId },
      query: { per_page: 100 },
    });
    return expectStatus(res, 200).body.data.map((d) => d.status);
  }

  it('queues every failed delivery since the instant again; they are delivered with their ids', async () => {
    const endpoint = expectStatus(
      await api.webhookEndpoints.create({ body: { url: hook.url, events: ['student.created'] } }),
      201,
    ).body;
    const other = expectStatus(
      await api.webhookEndpoints.create({
        body: { url: `${hook.url}/other`, events: ['student.created'] },
      }),
      201,
    ).body;
    const failedIds: string[] = [];
    for (let i = 0; i < 3; i++)
      failedIds.push(
        expectStatus(await api.webhookEndpoints.test({ params: { id: endpoint.id } }), 202).body.id,
      );
    expectStatus(await api.webhookEndpoints.test({ params: { id: other.id } }), 202);
    await waitFor(async () => (await statuses(endpoint.id)).every((s) => s === 'failed'));
    await waitFor(async () => (await statuses(other.id)).every((s) => s === 'failed'));

    down = false;
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const before = hook.received.length;
    const replay = expectStatus(
      await api.webhookEndpoints.replayFailed({ params: { id: endpoint.id }, body: { since } }),
      202,
    ).body;
    expect(replay).toEqual({
      object: 'webhook_replay',
      endpoint_id: endpoint.id,
      since,
      queued: 3,
    });
    await waitFor(async () => (await statuses(endpoint.id)).every((s) => s === 'succeeded'));
    const replayed = hook.received.slice(before);
    expect(replayed.map((r) => r.headers['webhook-id']).sort()).toEqual([...failedIds].sort());
    // Only this endpoint's: the other one's failure stays failed.
    expect(await statuses(other.id)).toEqual(['failed']);
    // Nothing failed is left, so a second replay queues nothing.
    const again = await api.webhookEndpoints.replayFailed({
      params: { id: endpoint.id },
      body: { since },
    });
    expect(expectStatus(again, 202).body.queued).toBe(0);

    // Its health over 24 hours: 3 deliveries failed twice each (two scheduled attempts), then
    // succeeded once each on the replay.
    const stats = expectStatus(
      await api.webhookEndpoints.stats({ params: { id: endpoint.id } }),
      200,
    ).body;
    expect(stats).toMatchObject({
      object: 'webhook_endpoint_stats',
      endpoint_id: endpoint.id,
      attempts: 9,
      succeeded: 3,
      failed: 6,
      success_rate: 3 / 9,
    });
    expect(Date.parse(stats.to) - Date.parse(stats.from)).toBe(24 * 3_600_000);
    const { p50, p95, max } = stats.latency_ms;
    expect(p50).not.toBeNull();
    expect(p50!).toBeLessThanOrEqual(p95!);
    expect(p95!).toBeLessThanOrEqual(max!);
    const otherStats = expectStatus(
      await api.webhookEndpoints.stats({ params: { id: other.id } }),
      200,
    ).body;
    expect(otherStats).toMatchObject({ attempts: 2, succeeded: 0, success_rate: 0 });
  });

  it('an endpoint without attempts has no rate and no latency (null, not 0)', async () => {
    const endpoint = expectStatus(
      await api.webhookEndpoints.create({ body: { url: hook.url, events: ['student.created'] } }),
      201,
    ).body;
    const stats = expectStatus(
      await api.webhookEndpoints.stats({ params: { id: endpoint.id } }),
      200,
    ).body;
    expect(stats).toMatchObject({
      attempts: 0,
      succeeded: 0,
      failed: 0,
      success_rate: null,
      latency_ms: { p50: null, p95: null, max: null },
    });
  });

  it('leaves failures before `since` alone', async () => {
    down = true;
    const endpoint = expectStatus(
      await api.webhookEndpoints.create({ body: { url: hook.url, events: ['student.created'] } }),
      201,
    ).body;
    expectStatus(await api.webhookEndpoints.test({ params: { id: endpoint.id } }), 202);
    await waitFor(async () => (await statuses(endpoint.id)).every((s) => s === 'failed'));
    down = false;
    const since = new Date(Date.now() + 1000).toISOString();
    const replay = await api.webhookEndpoints.replayFailed({
      params: { id: endpoint.id },
      body: { since },
    });
    expect(expectStatus(replay, 202).body.queued).toBe(0);
    expect(await statuses(endpoint.id)).toEqual(['failed']);
  });

  it.each([
    { since: 'yesterday', message: /RFC 3339/ },
    { since: new Date(Date.now() - 31 * 86_400_000).toISOString(), message: /at most 30 days ago/ },
  ])('refuses since=$since with a 400 naming it', async ({ since, message }) => {
    const endpoint = expectStatus(
      await api.webhookEndpoints.create({ body: { url: hook.url, events: ['student.created'] } }),
      201,
    ).body;
    const res = await api.webhookEndpoints.replayFailed({
      params: { id: endpoint.id },
      body: { since },
    });
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    const problem = expectStatus(res, 400).body;
    const [error] = problem.errors ?? [];
    expect(error?.path).toBe('body.since');
    expect(error?.message).toMatch(message);
  });

  it('is refused (409) while the endpoint is disabled', async () => {
    const endpoint = expectStatus(
      await api.webhookEndpoints.create({ body: { url: hook.url, events: ['student.created'] } }),
      201,
    ).body;
    expectStatus(
      await api.webhookEndpoints.update({ params: { id: endpoint.id }, body: { enabled: false } }),
      200,
    );
    const res = await api.webhookEndpoints.replayFailed({
      params: { id: endpoint.id },
      body: { since: new Date(Date.now() - 60_000).toISOString() },
    });
    expectStatus(res, 409);
  });
});
