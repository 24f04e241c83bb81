import { type Event, EventSchema, isUpdateEventType } from '@platform/contract';
import { Webhook } from 'standardwebhooks';
import { expectStatus, typedClient, type TypedClient } from './support/api';
import { startServer, type TestServer } from './support/server';
import { type Receiver, startReceiver, waitFor } from './support/receiver';

/**
 * `previous_attributes` on the events that change an existing resource: the changed top-level
 * fields with their values before, read back where events are read (by id, in the list, on the
 * change feed, in a webhook delivery); absent from created and deleted events.
 */
describe('previous_attributes', () => {
  let server: TestServer;
  let api: TypedClient;
  let hook: Receiver;
  let secret: string;

  beforeAll(async () => {
    server = await startServer({
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_POLL_INTERVAL: '100ms',
      LOG_LEVEL: 'error',
    });
    const org = await server.createOrganization();
    api = typedClient(server, (await server.createToken(org.id, ['all'])).token);
    hook = await startReceiver();
    const endpoint = await api.webhookEndpoints.create({ body: { url: hook.url, events: ['*'] } });
    secret = expectStatus(endpoint, 201).body.secret;
  });
  afterAll(async () => {
    await server.close();
    await hook.close();
  });

  /** The organization's events, oldest first. */
  async function events(): Promise<Event[]> {
    const query = { sort: 'created_at', per_page: 100 } as const;
    return expectStatus(await api.events.list({ query }), 200).body.data;
  }

  /** The newest event, read back by id, checked against the contract. */
  async function lastEvent(): Promise<Event & { previous_attributes?: unknown }> {
    const all = await events();
    const res = expectStatus(await api.events.retrieve({ params: { id: all.at(-1)!.id } }), 200);
    expect(EventSchema.safeParse(res.body).success).toBe(true);
    return res.body;
  }

  async function createStudent(number: string) {
    const body = { student_number: number, first_name: 'Pat', last_name: 'Prior', email: null };
    return expectStatus(await api.students.create({ body }), 201).body;
  }

  it('gives one changed field and updated_at, with their values before', async () => {
    const student = await createStudent('PA-1');
    const created = await lastEvent();
    expect(created.type).toBe('student.created');
    expect(created).not.toHaveProperty('previous_attributes');

    const res = await api.students.update({
      params: { id: student.id },
      body: { email: 'pat@example.com' },
    });
    const updated = expectStatus(res, 200).body;
    const event = await lastEvent();
    expect(event).toMatchObject({ type: 'student.updated', data: updated });
    expect(event.previous_attributes).toEqual({ email: null, updated_at: student.updated_at });
  });

  it('gives every changed field, and only those, when a patch sets several', async () => {
    const student = await createStudent('PA-2');
    const res = await api.students.update({
      params: { id: student.id },
      // last_name is sent unchanged: not a change, so not among previous_attributes.
      body: { first_name: 'Patricia', last_name: 'Prior', grade_level: 7, status: 'inactive' },
    });
    expectStatus(res, 200);
    expect((await lastEvent()).previous_attributes).toEqual({
      first_name: 'Pat',
      grade_level: null,
      status: 'active',
      updated_at: student.updated_at,
    });
  });

  it('records no event for a patch that changes nothing, as before', async () => {
    const student = await createStudent('PA-3');
    const before = (await events()).length;
    const res = await api.students.update({
      params: { id: student.id },
      body: { first_name: 'Pat' },
    });
    expect(expectStatus(res, 200).body).toEqual(student);
    expect(await events()).toHaveLength(before);
  });

  it('gives a status transition its previous status and timestamps', async () => {
    const student = await createStudent('PA-4');
    const course = expectStatus(
      await api.courses.create({ body: { code: 'PA', title: 'Prior art' } }),
      201,
    ).body;
    const enrollment = expectStatus(
      await api.enrollments.create({ body: { student_id: student.id, course_id: course.id } }),
      201,
    ).body;
    const active = expectStatus(
      await api.enrollments.activate({ params: { id: enrollment.id } }),
      200,
    ).body;
    expect(await lastEvent()).toMatchObject({
      type: 'enrollment.active',
      data: active,
      previous_attributes: {
        status: 'pending',
        activated_at: null,
        updated_at: enrollment.updated_at,
      },
    });
    expect(Object.keys((await lastEvent()).previous_attributes as object).sort()).toEqual([
      'activated_at',
      'status',
      'updated_at',
    ]);

    const payment = expectStatus(
      await api.payments.create({
        body: { student_id: student.id, amount: 12_500, currency: 'EUR' },
      }),
      201,
    ).body;
    const succeeded = expectStatus(
      await api.payments.succeed({ params: { id: payment.id } }),
      200,
    ).body;
    expect((await lastEvent()).previous_attributes).toEqual({
      status: 'pending',
      succeeded_at: null,
      updated_at: payment.updated_at,
    });
    const refunded = expectStatus(
      await api.payments.refund({ params: { id: payment.id }, body: { amount: 500 } }),
      200,
    ).body;
    const refund = await lastEvent();
    expect(refund).toMatchObject({ type: 'payment.refunded', data: refunded });
    expect(refund.previous_attributes).toEqual(changed(succeeded, refunded));
    expect(refund.previous_attributes).toMatchObject({ amount_refunded: 0 });
  });

  it('carries none on a deleted event', async () => {
    const student = await createStudent('PA-5');
    expectStatus(await api.students.delete({ params: { id: student.id } }), 200);
    const deleted = await lastEvent();
    expect(deleted.type).toBe('student.deleted');
    expect(deleted).not.toHaveProperty('previous_attributes');
  });

  it('reads the same on the list, the change feed and a webhook delivery as by id', async () => {
    const listed = await events();
    const feed = expectStatus(await api.events.changes({ query: { limit: 1000 } }), 200).body.data;
    expect(feed.map((e) => e.id)).toEqual(listed.map((e) => e.id));
    for (const event of listed) {
      const byId = expectStatus(await api.events.retrieve({ params: { id: event.id } }), 200).body;
      expect(event).toEqual(byId);
      expect(feed.find((e) => e.id === event.id)).toEqual(byId);
      expect('previous_attributes' in byId).toBe(isUpdateEventType(byId.type));
    }
    const updates = listed.filter((e) => isUpdateEventType(e.type));
    expect(updates.map((e) => e.type)).toEqual([
      'student.updated',
      'student.updated',
      'enrollment.active',
      'payment.succeeded',
      'payment.refunded',
    ]);

    const wh = new Webhook(secret);
    const delivered = await waitFor(() => hook.received.length >= listed.length && hook.received, {
      what: `${listed.length} deliveries`,
    });
    for (const request of delivered) {
      const payload = wh.verify(request.body, request.headers as Record<string, string>) as Event;
      // A delivery also names the endpoint's previous change (webhook-gaps.e2e-spec.ts).
      const { previous_position: previous, ...event } = payload;
      expect(previous === null || typeof previous === 'number').toBe(true);
      expect(event).toEqual(listed.find((e) => e.id === payload.id));
    }
    const first = JSON.parse(
      delivered.find((r) => JSON.parse(r.body).id === updates[0]!.id)!.body,
    ) as { previous_attributes: unknown };
    expect(first.previous_attributes).toEqual({
      email: null,
      updated_at: expect.any(String),
    });
  });
});

/** The fields of `before` whose values differ in `after`, with their values in `before`. */
function changed(before: object, after: object): Record<string, unknown> {
  const next = after as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(before).filter(
      ([key, value]) => JSON.stringify(value) !== JSON.stringify(next[key]),
    ),
  );
}
