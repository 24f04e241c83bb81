import { Webhook } from 'standardwebhooks';
import { expectStatus, typedClient, type TypedClient } from './support/api';
import { startServer, type TestServer } from './support/server';
import { type Receiver, startReceiver, waitFor } from './support/receiver';

const PAYMENT_TYPES = ['payment.created', 'payment.succeeded'] as const;
/** The same, as the change feed's `type` filter. */
const PAYMENT_FILTER = 'payment.created,payment.succeeded';
/** The amount of the payment whose deliveries the receiver refuses until they fail for good. */
const REFUSED_AMOUNT = 666;

interface Delivery {
  id: string;
  type: string;
  position: number;
  cursor: string;
  previous_position: number | null;
  data: { amount?: number };
}

/**
 * `previous_position` on every delivery of a change: an endpoint subscribed to some types only
 * tells a lost delivery from the changes it never subscribed to, and fills exactly what it lost
 * from the change feed with its own types. On a compressed schedule: 2 retries 100 ms apart.
 */
describe('webhook delivery chains (previous_position)', () => {
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

  /** Student and payment changes, interleaved; one payment has the refused amount. */
  async function interleavedWrites(api: TypedClient, rounds: number) {
    for (let i = 0; i < rounds; i += 1) {
      const student = expectStatus(
        await api.students.create({
          body: { student_number: `G-${i}`, first_name: 'Gap', last_name: `Round ${i}` },
        }),
        201,
      ).body;
      await api.students.update({ params: { id: student.id }, body: { grade_level: 5 } });
      const amount = i === 2 ? REFUSED_AMOUNT : 1000 + i;
      const payment = expectStatus(
        await api.payments.create({ body: { student_id: student.id, amount, currency: 'EUR' } }),
        201,
      ).body;
      await api.students.update({ params: { id: student.id }, body: { grade_level: 6 } });
      await api.payments.succeed({ params: { id: payment.id } });
    }
  }

  /** Every change of the organization, from the feed (what the chain is checked against). */
  async function allChanges(api: TypedClient) {
    const res = await api.events.changes({ query: { after: '0', limit: 1000 } });
    return expectStatus(res, 200).body.data;
  }

  /**
   * A receiver applying what it accepted, in position order: where `previous_position` is not
   * the last position it applied, it fills from the feed with its types, up to the delivery.
   */
  async function applyWithFill(api: TypedClient, delivered: Delivery[]) {
    let last: Delivery | null = null;
    const applied: number[] = [];
    const filled: { type: string; position: number }[] = [];
    const read: string[] = [];
    for (const delivery of delivered) {
      if (delivery.previous_position !== (last?.position ?? null)) {
        // The recipe: from the cursor of the last change applied up to this delivery's cursor.
        let after = last?.cursor ?? '0';
        for (;;) {
          const res = await api.events.changes({
            query: { after, until: delivery.cursor, type: PAYMENT_FILTER, limit: 1 },
          });
          const page = expectStatus(res, 200).body;
          const change = page.data[0];
          if (change) read.push(change.type);
          if (!change || change.position! >= delivery.position) break;
          filled.push({ type: change.type, position: change.position! });
          applied.push(change.position!);
          after = page.next_cursor;
        }
      }
      applied.push(delivery.position);
      last = delivery;
    }
    return { applied, filled, read };
  }

  /** Each attempt's `previous_position`, signed, in the body and the header alike. */
  function expectChains(
    payments: Receiver,
    secret: string,
    everything: Receiver,
    changes: { type: string; position: number | null }[],
  ) {
    const paymentChanges = changes.filter((c) => c.type.startsWith('payment.'));
    const hook = new Webhook(secret);
    const expected = new Map(
      paymentChanges.map((c, i) => [c.position, i === 0 ? null : paymentChanges[i - 1]!.position]),
    );
    for (const r of payments.received) {
      const body = hook.verify(r.body, r.headers as Record<string, string>) as Delivery;
      expect(body.previous_position).toBe(expected.get(body.position));
      const header = r.headers['webhook-previous-position'];
      expect(header).toBe(
        body.previous_position === null ? undefined : String(body.previous_position),
      );
    }
    // An endpoint of every type: the position before, from its first change on.
    for (const r of everything.received) {
      const body = JSON.parse(r.body) as Delivery;
      expect(body.previous_position).toBe(
        body.position === changes[1]!.position ? null : body.position - 1,
      );
    }
  }

  it('chains each delivery to the previous change the endpoint subscribes to, and a lost one is filled from the feed with its types alone', async () => {
    const api = await organization();
    // A change before the endpoints exist: outside their chains.
    expectStatus(
      await api.students.create({
        body: { student_number: 'G-0-before', first_name: 'Before', last_name: 'Endpoints' },
      }),
      201,
    );
    const payments = await startReceiver((request) =>
      (JSON.parse(request.body) as Delivery).data.amount === REFUSED_AMOUNT
        ? { status: 500 }
        : { status: 204 },
    );
    const everything = await startReceiver();
    receivers.push(payments, everything);
    const paymentsEndpoint = expectStatus(
      await api.webhookEndpoints.create({
        body: { url: payments.url, events: [...PAYMENT_TYPES] },
      }),
      201,
    ).body;
    expectStatus(
      await api.webhookEndpoints.create({ body: { url: everything.url, events: ['*'] } }),
      201,
    );

    await interleavedWrites(api, 5);
    const changes = await allChanges(api);
    const paymentChanges = changes.filter((c) => c.type.startsWith('payment.'));
    expect(paymentChanges).toHaveLength(10);
    const refused = paymentChanges.filter(
      (c) => (c.data as { amount?: number }).amount === REFUSED_AMOUNT,
    );
    expect(refused).toHaveLength(2);

    // Every change but the first reaches the `*` endpoint; every payment change is attempted.
    await waitFor(() => everything.received.length >= changes.length - 1);
    const failed = await waitFor(async () => {
      const res = await api.webhookEndpoints.deliveries({
        params: { id: paymentsEndpoint.id },
        query: { status: 'failed' },
      });
      const data = expectStatus(res, 200).body.data;
      return data.length === 2 && data;
    });
    const acceptedNow = () =>
      payments.received.filter(
        (r) => (JSON.parse(r.body) as Delivery).data.amount !== REFUSED_AMOUNT,
      );
    const accepted = await waitFor(() => acceptedNow().length >= 8 && acceptedNow());

    expectChains(payments, paymentsEndpoint.secret, everything, changes);

    // The receiver applies what it accepted, in position order, and fills breaks in the chain.
    const delivered = accepted
      .map((r) => JSON.parse(r.body) as Delivery)
      .sort((a, b) => a.position - b.position);
    expect(delivered).toHaveLength(8);
    const { applied, filled, read } = await applyWithFill(api, delivered);
    // The fill read payment changes alone, and exactly the two deliveries that failed.
    expect(read.every((type) => type.startsWith('payment.'))).toBe(true);
    expect(filled).toEqual(refused.map((c) => ({ type: c.type, position: c.position })));
    expect(applied).toEqual(paymentChanges.map((c) => c.position));

    // A redelivery sends the value fixed when the delivery was made.
    const attempted = payments.received.length;
    const res = await api.webhookDeliveries.retry({ params: { id: failed[0]!.id } });
    expect(res.status).toBeLessThan(300);
    const again = await waitFor(() => payments.received[attempted]);
    expect((JSON.parse(again.body) as Delivery).data.amount).toBe(REFUSED_AMOUNT);
    expectChains(payments, paymentsEndpoint.secret, everything, changes);
  });
  it('starts a new chain when the endpoint changes its events', async () => {
    const api = await organization();
    const hook = await startReceiver();
    receivers.push(hook);
    const ep = expectStatus(
      await api.webhookEndpoints.create({ body: { url: hook.url, events: ['payment.created'] } }),
      201,
    ).body;
    const student = expectStatus(
      await api.students.create({
        body: { student_number: 'C-1', first_name: 'Chain', last_name: 'Start' },
      }),
      201,
    ).body;
    const pay = () =>
      api.payments.create({ body: { student_id: student.id, amount: 100, currency: 'EUR' } });
    await pay();
    await pay();
    await waitFor(() => hook.received.length >= 2);
    expectStatus(
      await api.webhookEndpoints.update({
        params: { id: ep.id },
        body: { events: ['payment.created', 'student.updated'] },
      }),
      200,
    );
    await api.students.update({ params: { id: student.id }, body: { grade_level: 3 } });
    await pay();
    await waitFor(() => hook.received.length >= 4);

    const chain = hook.received
      .map((r) => JSON.parse(r.body) as Delivery)
      .sort((a, b) => a.position - b.position)
      .map((d) => [d.type, d.position, d.previous_position]);
    expect(chain).toEqual([
      ['payment.created', 2, null],
      ['payment.created', 3, 2],
      // The new subscription's chain names nothing from before it.
      ['student.updated', 4, null],
      ['payment.created', 5, 4],
    ]);
  });
});
