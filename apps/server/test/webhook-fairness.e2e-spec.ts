import { EventsService, TransactionRunner } from '../src/testing';
import { expectStatus, typedClient, type TypedClient } from './support/api';
import { startServer, type TestServer } from './support/server';
import { type Receiver, type Reply, startReceiver, waitFor } from './support/receiver';

/** Slots in this test: 12 in all, 2 per endpoint, and so (a quarter) 3 per organization. */
const CONCURRENCY = 12;
const ORGANIZATION_SHARE = 3;
const TIMEOUT_MS = 5000;
/**
 * How soon the fast tenant's delivery must arrive, and how long its attempt may last. Queued
 * behind the slow tenant's hanging attempts (for a slot or a connection), it would wait until one
 * of them timed out: most of a timeout, since those started shortly before. Half a timeout, not a
 * fixed second, tells the two apart with seconds to spare either way, so a loaded machine's
 * pauses cannot make a prompt delivery look queued.
 */
const BOUND_MS = TIMEOUT_MS / 2;

/**
 * One organization's slow receivers and large backlog must not delay another organization's
 * deliveries: neither by taking every delivery slot, nor by their place in the queue, nor by
 * holding the connections the other tenant's attempt needs. Runs on the embedded dispatcher
 * (SQLite, PostgreSQL) and on BullMQ (TEST_REDIS_URL).
 */
describe('webhook delivery fairness between organizations', () => {
  let server: TestServer;
  const receivers: Receiver[] = [];

  // A server per test, so one test's slow attempts still in flight cannot disturb the next.
  beforeEach(async () => {
    server = await startServer({
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_CONCURRENCY: String(CONCURRENCY),
      WEBHOOK_ENDPOINT_CONCURRENCY: '2',
      WEBHOOK_TIMEOUT: `${TIMEOUT_MS}ms`,
      WEBHOOK_RETRY_SCHEDULE: '1s',
      WEBHOOK_POLL_INTERVAL: '100ms',
      WEBHOOK_SHUTDOWN_GRACE: '2s',
    });
  });
  afterEach(async () => {
    // Receivers first: their hanging requests then fail at once, so no attempt is still in
    // flight when the server shuts down.
    await Promise.all(receivers.splice(0).map((r) => r.close()));
    await server.close();
  });

  async function organization() {
    const org = await server.createOrganization();
    const { token } = await server.createToken(org.id, ['all']);
    return { id: org.id, api: typedClient(server, token) };
  }

  async function receiver(reply?: (request: { path: string }, index: number) => Reply) {
    const r = await startReceiver(reply);
    receivers.push(r);
    return r;
  }

  async function endpoint(caller: TypedClient, url: string) {
    const res = await caller.webhookEndpoints.create({ body: { url, events: ['*'] } });
    return expectStatus(res, 201).body.id;
  }

  let studentNumber = 0;
  async function createStudent(caller: TypedClient) {
    studentNumber += 1;
    const res = await caller.students.create({
      body: { student_number: `F-${studentNumber}`, first_name: 'Fair', last_name: 'Share' },
    });
    return expectStatus(res, 201).body;
  }

  /**
   * A backlog: `count` events of the organization committed in bulk (as an import would), written
   * the way the API writes them (the transactional outbox) but without `count` requests. In
   * transactions of 50, letting the event loop turn between them: on SQLite the writes are
   * synchronous, and one long stall would skew the arrival times the test measures.
   */
  async function backlog(organization: { id: string; api: TypedClient }, count: number) {
    const student = await createStudent(organization.api);
    const events = server.app.get(EventsService);
    for (let done = 0; done < count; done += 50) {
      await server.app.get(TransactionRunner).run(async (manager) => {
        for (let i = done; i < Math.min(count, done + 50); i += 1)
          await events.record(manager, organization.id, 'student.updated', student);
      });
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Writes one event for the fast tenant and returns how long its delivery took to arrive. */
  async function fastDelivery(caller: TypedClient, hook: Receiver, path: string) {
    const arrived = () => hook.received.filter((r) => r.path === path);
    const before = arrived().length;
    await createStudent(caller);
    // From the commit (the API's answer): the event is due from then on.
    const committed = Date.now();
    const request = await waitFor(() => arrived()[before], {
      timeoutMs: TIMEOUT_MS * 4,
      what: "the fast tenant's delivery",
    });
    return request.at - committed;
  }

  /** The recorded attempts of the fast tenant's deliveries, which all succeeded at once. */
  async function recordedAttempts(caller: TypedClient, endpointId: string, count: number) {
    const deliveries = await waitFor(async () => {
      const res = await caller.webhookEndpoints.deliveries({ params: { id: endpointId } });
      const { data } = expectStatus(res, 200).body;
      return data.length === count && data.every((d) => d.status === 'succeeded') && data;
    });
    return deliveries.flatMap((d) => d.attempts);
  }

  it("a tenant with slow receivers and a large backlog holds only its share; another tenant's delivery goes out at once", async () => {
    const slow = await organization();
    // Six receivers that never answer (each attempt lasts the whole timeout): together their
    // endpoints could hold every slot (6 × 2 = 12).
    const slowHooks = await Promise.all(
      Array.from({ length: 6 }, () => receiver(() => ({ status: 204, hang: true }))),
    );
    for (const hook of slowHooks) await endpoint(slow.api, hook.url);
    const fast = await organization();
    const fastHook = await receiver();
    const fastEndpoint = await endpoint(fast.api, fastHook.url);

    // 500 events × 6 endpoints: 3,000 deliveries due before the fast tenant's first one.
    await backlog(slow, 500);
    const waits = [await fastDelivery(fast.api, fastHook, '/hooks')];
    // And once the slow tenant's attempts are hanging in every slot it may take.
    const slowRequests = () => slowHooks.flatMap((h) => h.received);
    await waitFor(() => slowRequests().length >= ORGANIZATION_SHARE, {
      what: 'the slow tenant to take its slots',
    });
    await new Promise((r) => setTimeout(r, 300));
    waits.push(await fastDelivery(fast.api, fastHook, '/hooks'));
    for (const waited of waits) expect(waited).toBeLessThan(BOUND_MS);
    // The attempts' latencies are their own: the receiver answers at once.
    for (const attempt of await recordedAttempts(fast.api, fastEndpoint, 2)) {
      expect(attempt).toMatchObject({ status_code: 204, error: null });
      expect(attempt.latency_ms).toBeLessThan(BOUND_MS);
    }

    // Every slow attempt hangs for the whole timeout, so the requests that arrived within half a
    // timeout of the first were all in flight together (the half allows for event-loop stalls in
    // this one process): never more than the organization's share.
    const first = Math.min(...slowRequests().map((r) => r.at));
    const together = slowRequests().filter((r) => r.at < first + TIMEOUT_MS / 2).length;
    expect(together).toBe(ORGANIZATION_SHARE);
  });

  it("endpoints of different tenants on one host:port do not share a connection pool that makes one wait for the other's", async () => {
    // One receiver stands for a shared webhook host (one host:port, a path per endpoint): the slow
    // tenant's paths never answer, the fast tenant's answers at once.
    const shared = await receiver((request) =>
      request.path.startsWith('/slow') ? { status: 204, hang: true } : { status: 204 },
    );
    const base = shared.base;
    const slow = await organization();
    for (let i = 0; i < 3; i += 1) await endpoint(slow.api, `${base}/slow-${i}`);
    const fast = await organization();
    const fastEndpoint = await endpoint(fast.api, `${base}/fast`);

    await backlog(slow, 10);
    await waitFor(() => shared.received.length >= 2, {
      what: 'the slow tenant to hold connections to the shared host',
    });
    await new Promise((r) => setTimeout(r, 300));

    const waited = await fastDelivery(fast.api, shared, '/fast');
    expect(waited).toBeLessThan(BOUND_MS);
    const [attempt] = await recordedAttempts(fast.api, fastEndpoint, 1);
    expect(attempt).toMatchObject({ status_code: 204, error: null });
    expect(attempt!.latency_ms).toBeLessThan(BOUND_MS);
  });

  // Issue 30, defect 7: three hanging endpoints of one school held all its slots, and its healthy
  // endpoint waited for their timeouts (6.3 s median).
  it('within one organization, endpoints that hang leave its healthy endpoint a fair share', async () => {
    await server.close();
    server = await startServer({
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_CONCURRENCY: '16',
      WEBHOOK_ORGANIZATION_CONCURRENCY: '8',
      WEBHOOK_ENDPOINT_CONCURRENCY: '4',
      WEBHOOK_TIMEOUT: `${TIMEOUT_MS}ms`,
      WEBHOOK_RETRY_SCHEDULE: '1s',
      WEBHOOK_POLL_INTERVAL: '100ms',
      WEBHOOK_SHUTDOWN_GRACE: '2s',
    });
    const school = await organization();
    const hanging = await Promise.all(
      Array.from({ length: 3 }, () => receiver(() => ({ status: 204, hang: true }))),
    );
    for (const hook of hanging) await endpoint(school.api, hook.url);
    const healthy = await receiver();
    await endpoint(school.api, healthy.url);

    // 20 events, each due at all four endpoints at once.
    await backlog(school, 20);
    const committed = Date.now();
    await waitFor(() => healthy.received.length >= 21, {
      timeoutMs: TIMEOUT_MS * 6,
      what: "the healthy endpoint's 21 deliveries",
    });

    // All of them while the hanging endpoints' first attempts still hang (a slot each of the
    // 8 were theirs alone, they would all have waited for a timeout).
    const last = Math.max(...healthy.received.map((r) => r.at));
    expect(last - committed).toBeLessThan(BOUND_MS);
    // Four endpoints want slots: two each of the school's eight, so the hanging ones held six.
    const hangingRequests = hanging.flatMap((h) => h.received);
    const first = Math.min(...hangingRequests.map((r) => r.at));
    const together = hangingRequests.filter((r) => r.at < first + TIMEOUT_MS / 2).length;
    expect(together).toBe(6);
  });
});
