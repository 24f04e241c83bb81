import { Webhook } from 'standardwebhooks';
import { WebhookAttemptRecord } from '../src/webhooks/webhook-attempt.entity';
import {
  type BodyOf,
  expectStatus,
  positionOf,
  type QueryOf,
  typedClient,
  type TypedClient,
} from './support/api';
import { startServer, type TestServer } from './support/server';
import {
  type Receiver,
  type Received,
  type Reply,
  startReceiver,
  waitFor as waitUntil,
  type WaitOptions,
} from './support/receiver';

const SCHEDULE_MS = 150;

/**
 * The server's error log lines. A delivery that cannot be signed or sent is logged as an error
 * and never arrives: a wait below then fails at once with that line, rather than running out.
 */
const serverErrors: string[] = [];

function waitFor<T>(check: () => T | Promise<T>, options: WaitOptions = {}) {
  return waitUntil(check, {
    ...options,
    failFast: () =>
      serverErrors.length ? `the server logged an error: ${serverErrors[0]}` : undefined,
  });
}

/**
 * Delivery against real receivers on loopback, on a compressed retry schedule: 3 retries
 * 150 ms apart, a 600 ms attempt timeout, endpoints disabled after 4 s of failures.
 */
describe('webhook delivery', () => {
  let server: TestServer;
  let api: TypedClient;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    server = await startServer(
      {
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        WEBHOOK_RETRY_SCHEDULE: `${SCHEDULE_MS}ms,${SCHEDULE_MS}ms,${SCHEDULE_MS}ms`,
        WEBHOOK_TIMEOUT: '600ms',
        // Longer than the timeout test's four failed attempts (~3 s), which must not disable.
        WEBHOOK_DISABLE_AFTER: '4s',
        WEBHOOK_ENDPOINT_CONCURRENCY: '2',
        WEBHOOK_POLL_INTERVAL: '100ms',
        LOG_LEVEL: 'error',
      },
      { logDestination: { write: (line: string) => void serverErrors.push(line.trim()) } },
    );
  });
  afterAll(async () => {
    await server.close();
    await Promise.all(receivers.map((r) => r.close()));
  });

  /** A fresh organization (so other tests' endpoints never see its events) with a token. */
  async function organization() {
    const org = await server.createOrganization();
    return typedClient(server, (await server.createToken(org.id, ['all'])).token);
  }

  async function receiver(reply?: (request: unknown, index: number) => Reply) {
    const r = await startReceiver(reply);
    receivers.push(r);
    return r;
  }

  async function endpoint(
    caller: TypedClient,
    url: string,
    events: BodyOf<TypedClient['webhookEndpoints']['create']>['events'] = ['*'],
  ) {
    return expectStatus(await caller.webhookEndpoints.create({ body: { url, events } }), 201).body;
  }

  let studentNumber = 0;
  async function createStudent(caller: TypedClient) {
    studentNumber += 1;
    const res = await caller.students.create({
      body: { student_number: `W-${studentNumber}`, first_name: 'Web', last_name: 'Hook' },
    });
    return expectStatus(res, 201);
  }

  async function deliveries(
    caller: TypedClient,
    endpointId: string,
    query: QueryOf<TypedClient['webhookEndpoints']['deliveries']> = {},
  ) {
    const res = await caller.webhookEndpoints.deliveries({ params: { id: endpointId }, query });
    return expectStatus(res, 200).body.data;
  }

  /** An endpoint as the API reads it back. */
  async function endpointNow(caller: TypedClient, id: string) {
    return expectStatus(await caller.webhookEndpoints.retrieve({ params: { id } }), 200).body;
  }

  /** A delivery as the API reads it back. */
  async function deliveryNow(caller: TypedClient, id: string) {
    return expectStatus(await caller.webhookDeliveries.retrieve({ params: { id } }), 200).body;
  }

  it('POSTs each committed event, signed with the Standard Webhooks headers the reference library verifies', async () => {
    api = await organization();
    const hook = await receiver();
    const ep = await endpoint(api, hook.url);
    const student = await createStudent(api);

    const [request] = await waitFor(() => hook.received.length > 0 && hook.received);
    const wh = new Webhook(ep.secret);
    const verified = wh.verify(request!.body, request!.headers as Record<string, string>) as any;
    expect(verified).toMatchObject({
      object: 'event',
      type: 'student.created',
      api_version: 'v1',
      data: student.body,
    });
    expect(request!.headers['content-type']).toBe('application/json');
    // It names a page this server serves (its API reference), not a placeholder domain.
    expect(request!.headers['user-agent']).toBe(`PlatformWebhooks/1.0 (+${server.url}/docs)`);
    expect(request!.headers['webhook-id']).toMatch(/^msg_/);
    expect(
      Math.abs(Number(request!.headers['webhook-timestamp']) - Date.now() / 1000),
    ).toBeLessThan(5);
    // The body is the event exactly as the events API returns it, and the endpoint's chain: its
    // first change has no previous position.
    const event = expectStatus(await api.events.retrieve({ params: { id: verified.id } }), 200);
    expect(JSON.parse(request!.body)).toEqual({ ...event.body, previous_position: null });
    expect(request!.headers['webhook-previous-position']).toBeUndefined();

    const delivery = await waitFor(async () => {
      const [first] = await deliveries(api, ep.id);
      return first?.status === 'succeeded' && first;
    });
    expect(delivery).toMatchObject({
      id: request!.headers['webhook-id'],
      object: 'webhook_delivery',
      endpoint_id: ep.id,
      event_id: verified.id,
      event_type: 'student.created',
      status: 'succeeded',
      attempt_count: 1,
      next_attempt_at: null,
      attempts: [{ status_code: 204, response_body: null, error: null }],
    });
  });

  it("carries each event's change feed position in the body and the webhook-position header", async () => {
    const caller = await organization();
    const hook = await receiver();
    await endpoint(caller, hook.url);
    const student = (await createStudent(caller)).body;
    await caller.students.update({ params: { id: student.id }, body: { grade_level: 7 } });
    await caller.students.delete({ params: { id: student.id } });

    const received = await waitFor(() => hook.received.length >= 3 && hook.received);
    const delivered = received
      .map((r) => ({ header: r.headers['webhook-position'], body: JSON.parse(r.body) }))
      .sort((a, b) => a.body.position - b.body.position);
    expect(delivered.map((d) => [d.body.position, d.header, d.body.type])).toEqual([
      [1, '1', 'student.created'],
      [2, '2', 'student.updated'],
      [3, '3', 'student.deleted'],
    ]);
    // The same positions and cursors the feed has: a gap in deliveries is filled from the feed
    // after the last delivery's cursor.
    for (const d of delivered) expect(positionOf(d.body.cursor)).toBe(d.body.position);
    const feed = expectStatus(
      await caller.events.changes({ query: { after: delivered[0]!.body.cursor } }),
      200,
    ).body;
    expect(feed.data.map((e) => [e.position, e.cursor, e.id])).toEqual(
      delivered.slice(1).map((d) => [d.body.position, d.body.cursor, d.body.id]),
    );
  });

  it('retries a 500 with the same webhook-id, and keeps every attempt with its status, latency and 4 KiB of body', async () => {
    const caller = await organization();
    const big = 'x'.repeat(10_000);
    const hook = await receiver((_req, i) =>
      i === 0 ? { status: 500, body: big } : { status: 200, body: 'ok' },
    );
    const ep = await endpoint(caller, hook.url);
    await createStudent(caller);

    await waitFor(() => hook.received.length >= 2, { what: 'the retry' });
    expect(hook.received[1]!.headers['webhook-id']).toBe(hook.received[0]!.headers['webhook-id']);
    expect(hook.received[1]!.at - hook.received[0]!.at).toBeGreaterThanOrEqual(SCHEDULE_MS * 0.9);
    const delivery = await waitFor(async () => {
      const [first] = await deliveries(caller, ep.id);
      return first?.status === 'succeeded' && first;
    });
    expect(delivery.attempt_count).toBe(2);
    expect(delivery.attempts).toHaveLength(2);
    expect(delivery.attempts[0]).toMatchObject({ status_code: 500, error: null });
    expect(delivery.attempts[0]!.response_body).toBe('x'.repeat(4096));
    expect(delivery.attempts[1]).toMatchObject({ status_code: 200, response_body: 'ok' });
    for (const attempt of delivery.attempts) {
      // Whole milliseconds, within the 600 ms timeout both answered in (seconds or a timestamp
      // in this field would fail here).
      expect(Number.isInteger(attempt.latency_ms)).toBe(true);
      expect(attempt.latency_ms).toBeLessThan(600);
      expect(Date.parse(attempt.attempted_at)).not.toBeNaN();
    }

    // An attempt committed after the delivery's row was read (its number past the count read;
    // here written without its count) is not shown beside that row, in the list or alone: the
    // answer is one state of the delivery, never `attempt_count: 2` beside three attempts.
    await server.dataSource.getRepository(WebhookAttemptRecord).insert({
      messageId: delivery.id,
      number: 3,
      attemptedAt: new Date(),
      statusCode: 200,
      latencyMs: 1,
      responseBody: 'later',
      error: null,
      requestHeaders: null,
    });
    const [listed] = await deliveries(caller, ep.id);
    expect(listed).toMatchObject({ attempt_count: 2, status: 'succeeded' });
    expect(listed!.attempts.map((a) => a.status_code)).toEqual([500, 200]);
    expect((await deliveryNow(caller, delivery.id)).attempts).toHaveLength(2);
  });

  it('a response slower than the timeout is a failed attempt; after the last retry the delivery is failed', async () => {
    const caller = await organization();
    const hook = await receiver(() => ({ status: 200, hang: true }));
    const ep = await endpoint(caller, hook.url);
    await createStudent(caller);

    const delivery = await waitFor(
      async () => {
        const [first] = await deliveries(caller, ep.id);
        return first?.status === 'failed' && first;
      },
      { timeoutMs: 15_000, what: 'the delivery to fail' },
    );
    expect(delivery.attempt_count).toBe(4);
    expect(delivery.next_attempt_at).toBeNull();
    for (const attempt of delivery.attempts) {
      expect(attempt.status_code).toBeNull();
      expect(attempt.error).toMatch(/no response within 0.6 s/);
      expect(attempt.latency_ms).toBeGreaterThanOrEqual(590);
    }
    expect(await deliveries(caller, ep.id, { status: 'failed' })).toHaveLength(1);
    expect(await deliveries(caller, ep.id, { status: 'pending,succeeded' })).toHaveLength(0);
  });

  it('a refused connection is a failed attempt that says so', async () => {
    const caller = await organization();
    const closed = await receiver();
    await closed.close();
    const ep = await endpoint(caller, closed.url);
    await createStudent(caller);
    const delivery = await waitFor(async () => {
      const [first] = await deliveries(caller, ep.id);
      return (first?.attempt_count ?? 0) >= 1 && first;
    });
    expect(delivery.attempts[0]).toMatchObject({
      status_code: null,
      error: 'connection refused',
      response_body: null,
    });
  });

  it('honours Retry-After on a 429', async () => {
    const caller = await organization();
    const hook = await receiver((_req, i) =>
      i === 0 ? { status: 429, headers: { 'Retry-After': '1' } } : { status: 204 },
    );
    await endpoint(caller, hook.url);
    await createStudent(caller);
    await waitFor(() => hook.received.length >= 2, { what: 'the retry' });
    // The same message again, not a second one: the schedule says 150 ms; the endpoint asked for a second.
    expect(hook.received[1]!.headers['webhook-id']).toBe(hook.received[0]!.headers['webhook-id']);
    expect(hook.received[1]!.at - hook.received[0]!.at).toBeGreaterThanOrEqual(950);
  });

  it('a 410 disables the endpoint at once; re-enabled, it gets what is still pending', async () => {
    const caller = await organization();
    let gone = true;
    const hook = await receiver(() => (gone ? { status: 410 } : { status: 204 }));
    const ep = await endpoint(caller, hook.url);
    await createStudent(caller);

    const disabled = await waitFor(async () => {
      const now = await endpointNow(caller, ep.id);
      return now.enabled === false && now;
    });
    expect(disabled.disabled_reason).toBe('gone');
    const before = hook.received.length;
    expect(before).toBe(1);
    // Nothing is sent to a disabled endpoint, and the message stays pending for it.
    await new Promise((r) => setTimeout(r, SCHEDULE_MS * 3));
    expect(hook.received).toHaveLength(before);
    expect((await deliveries(caller, ep.id))[0]!.status).toBe('pending');
    expect((await caller.webhookEndpoints.test({ params: { id: ep.id } })).status).toBe(409);

    gone = false;
    const enabled = await caller.webhookEndpoints.update({
      params: { id: ep.id },
      body: { enabled: true },
    });
    expect(expectStatus(enabled, 200).body).toMatchObject({ enabled: true, disabled_reason: null });
    await waitFor(() => hook.received.length > before, { what: 'the pending delivery' });
    const delivery = await waitFor(async () => {
      const [first] = await deliveries(caller, ep.id);
      return first?.status === 'succeeded' && first;
    });
    expect(delivery.attempts.map((a) => a.status_code)).toEqual([410, 204]);
  });

  it('an endpoint that fails everything for longer than the limit is disabled', async () => {
    const caller = await organization();
    const hook = await receiver(() => ({ status: 503 }));
    const ep = await endpoint(caller, hook.url);
    const started = Date.now();
    const disabled = await waitFor(
      async () => {
        await createStudent(caller);
        const now = await endpointNow(caller, ep.id);
        return now.enabled === false && now;
      },
      { timeoutMs: 20_000, intervalMs: 200, what: 'the endpoint to be disabled' },
    );
    expect(disabled.disabled_reason).toBe('failing');
    expect(Date.now() - started).toBeGreaterThanOrEqual(4000);
    // The streak stays on record; a disabled endpoint has no disable to come.
    expect(Date.parse(disabled.failing_since!)).toBeLessThanOrEqual(started + 1000);
    expect(disabled.disables_at).toBeNull();
  });

  it('a slow endpoint does not hold up a fast one', async () => {
    const caller = await organization();
    const slow = await receiver(() => ({ status: 204, delayMs: 500 }));
    const fast = await receiver();
    await endpoint(caller, slow.url);
    await endpoint(caller, fast.url);
    // Messages, not requests: an attempt that overran the timeout on a loaded machine is retried.
    const messages = (requests: Received[]) =>
      new Set(requests.map((r) => r.headers['webhook-id'])).size;
    // Ten events at once, so both endpoints have a backlog however slowly the machine runs.
    await Promise.all(Array.from({ length: 10 }, () => createStudent(caller)));
    await waitFor(() => messages(fast.received) >= 10, { what: 'the fast endpoint' });
    // The slow endpoint takes its messages two at a time, each answered after 500 ms: five
    // rounds for ten. The fast one must have had all ten before the slow one's fourth round
    // (at most six), measured on the slow endpoint's own pace rather than the wall clock; an
    // endpoint held up by the slow one's replies would go in step with it (eight or more).
    const fastDoneAt = fast.received.find((_, i, all) => messages(all.slice(0, i + 1)) >= 10)!.at;
    expect(messages(slow.received.filter((r) => r.at <= fastDoneAt))).toBeLessThanOrEqual(6);
    await waitFor(() => messages(slow.received) >= 10, { what: 'the slow endpoint' });
  });

  it('delivers only subscribed types, and only to the organization the event belongs to', async () => {
    const caller = await organization();
    const other = await organization();
    const payments = await receiver();
    const everything = await receiver();
    const othersHook = await receiver();
    await endpoint(caller, payments.url, ['course.created']);
    await endpoint(caller, everything.url);
    await endpoint(other, othersHook.url);
    await createStudent(caller);
    expectStatus(
      await caller.courses.create({ body: { code: 'SUB-1', title: 'Subscriptions' } }),
      201,
    );
    await waitFor(() => everything.received.length >= 2);
    await waitFor(() => payments.received.length >= 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(payments.received.map((r) => JSON.parse(r.body).type)).toEqual(['course.created']);
    expect(othersHook.received).toHaveLength(0);
  });

  it('rotation: two signatures for the overlap, each verifiable with its own secret', async () => {
    const caller = await organization();
    const hook = await receiver();
    const ep = await endpoint(caller, hook.url);
    const rotated = expectStatus(
      await caller.webhookEndpoints.rotateSecret({ params: { id: ep.id } }),
      200,
    );
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(ep.secret);
    await createStudent(caller);
    const [request] = await waitFor(() => hook.received.length > 0 && hook.received);
    const signatures = String(request!.headers['webhook-signature']).split(' ');
    expect(signatures).toHaveLength(2);
    for (const secret of [ep.secret, rotated.body.secret]) {
      expect(() =>
        new Webhook(secret).verify(request!.body, request!.headers as Record<string, string>),
      ).not.toThrow();
    }
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(
        request!.body,
        request!.headers as Record<string, string>,
      ),
    ).toThrow();
  });

  it('test sends a ping to that endpoint only; retry redelivers with the same webhook-id', async () => {
    const caller = await organization();
    const hook = await receiver();
    const bystander = await receiver();
    const ep = await endpoint(caller, hook.url);
    await endpoint(caller, bystander.url);

    const queued = expectStatus(await caller.webhookEndpoints.test({ params: { id: ep.id } }), 202);
    expect(queued.body).toMatchObject({ status: 'pending', event_type: 'ping', attempts: [] });
    const [ping] = await waitFor(() => hook.received.length > 0 && hook.received);
    expect(JSON.parse(ping!.body)).toMatchObject({
      type: 'ping',
      data: { message: expect.any(String) },
    });
    expect(ping!.headers['webhook-id']).toBe(queued.body.id);
    // A ping is not a change: it has no feed position.
    expect(JSON.parse(ping!.body)).toMatchObject({ position: null, cursor: null });
    expect(ping!.headers['webhook-position']).toBeUndefined();

    await waitFor(async () => (await deliveryNow(caller, queued.body.id)).status === 'succeeded');
    const retried = await caller.webhookDeliveries.retry({ params: { id: queued.body.id } });
    expect(expectStatus(retried, 202).body.status).toBe('pending');
    await waitFor(() => hook.received.length >= 2, { what: 'the redelivery' });
    expect(hook.received[1]!.headers['webhook-id']).toBe(queued.body.id);
    const final = await waitFor(async () => {
      const now = await deliveryNow(caller, queued.body.id);
      return now.attempt_count === 2 && now;
    });
    expect(final.status).toBe('succeeded');
    expect(bystander.received).toHaveLength(0);
  });
});
