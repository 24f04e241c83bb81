import { batchCaller, outcomeOf as outcome } from './support/batch';
import { eventsOf, rawClient, startServer, type TestServer } from './support/server';

type Row = { id: string; [field: string]: unknown };

describe('batch upserts of payments: recorded once, moved to the outcome the books report', () => {
  let server: TestServer;
  let orgId: string;
  let token: string;
  let raw: ReturnType<typeof rawClient>;

  beforeAll(async () => {
    server = await startServer();
    orgId = (await server.createOrganization()).id;
    ({ token } = await server.createToken(orgId, ['all']));
    raw = rawClient(server, token);
    for (const key of ['S-1', 'S-2']) {
      const body = { student_number: key, first_name: 'Ada', last_name: key, external_id: key };
      expect((await raw.post('/v1/students', body)).status).toBe(201);
    }
  });
  afterAll(() => server.close());

  const batch = (items: unknown[]) => batchCaller(server, token)('/v1/payments/batch', items);
  const pay = (key: string, extra: object = {}) => ({
    external_id: key,
    student_id: 'ext:S-1',
    amount: 10_000,
    currency: 'EUR',
    ...extra,
  });
  const typesOf = async (from: number) =>
    (await eventsOf(server, orgId)).slice(from).map((e) => [e.type, e.data.external_id]);

  it('records new payments and takes each to the state it reports, one event per step', async () => {
    const before = (await eventsOf(server, orgId)).length;
    const res = await batch([
      pay('P-1'),
      pay('P-2', { status: 'succeeded' }),
      pay('P-3', { status: 'failed', failure_reason: 'card declined' }),
      pay('P-4', { status: 'refunded', amount_refunded: 2_500 }),
      pay('P-5', { student_id: 'ext:NOPE' }),
      pay('P-6', { amount_refunded: 20_000 }),
    ]);
    expect(res.status).toBe(200);
    expect(outcome(res)).toEqual([
      ['created', null, null],
      ['created', null, null],
      ['created', null, null],
      ['created', null, null],
      ['failed', 'validation_error', 'body.items.4.student_id'],
      ['failed', 'validation_error', 'body.items.5.amount_refunded'],
    ]);
    expect(await typesOf(before)).toEqual([
      ['payment.created', 'P-1'],
      ['payment.created', 'P-2'],
      ['payment.succeeded', 'P-2'],
      ['payment.created', 'P-3'],
      ['payment.failed', 'P-3'],
      ['payment.created', 'P-4'],
      ['payment.succeeded', 'P-4'],
      ['payment.refunded', 'P-4'],
    ]);
    const p4 = (await raw.get<Row>('/v1/payments/ext:P-4')).body;
    expect(p4).toMatchObject({ status: 'refunded', amount_refunded: 2_500 });
    const p3 = (await raw.get<Row>('/v1/payments/ext:P-3')).body;
    expect(p3).toMatchObject({ status: 'failed', failure_reason: 'card declined' });
  });

  it('moves payments on record; sent again, the same report changes nothing', async () => {
    const report = [
      pay('P-1', { status: 'succeeded' }),
      { external_id: 'P-4', amount_refunded: 10_000 },
      { external_id: 'P-2', status: 'succeeded' },
    ];
    const before = (await eventsOf(server, orgId)).length;
    expect(outcome(await batch(report))).toEqual([
      ['updated', null, null],
      ['updated', null, null],
      ['unchanged', null, null],
    ]);
    expect(await typesOf(before)).toEqual([
      ['payment.succeeded', 'P-1'],
      ['payment.refunded', 'P-4'],
    ]);
    expect((await raw.get<Row>('/v1/payments/ext:P-4')).body.amount_refunded).toBe(10_000);
    expect(outcome(await batch(report)).map((r) => r[0])).toEqual([
      'unchanged',
      'unchanged',
      'unchanged',
    ]);
  });

  it('refuses a state no transition reaches, an undone refund and a changed record', async () => {
    const res = await batch([
      { external_id: 'P-3', status: 'succeeded' }, // failed stays failed
      { external_id: 'P-2', status: 'pending' },
      { external_id: 'P-4', amount_refunded: 100 }, // 10,000 already refunded
      pay('P-1', { amount: 9_999 }),
    ]);
    expect(outcome(res)).toEqual([
      ['failed', 'invalid_state_transition', null],
      ['failed', 'invalid_state_transition', null],
      ['failed', 'validation_error', 'body.items.2.amount_refunded'],
      ['failed', 'conflict', 'body.items.3.amount'],
    ]);
    const more = await batch([
      { external_id: 'P-1', student_id: 'ext:S-2' },
      { external_id: 'P-2', status: 'failed' },
    ]);
    expect(outcome(more)).toEqual([
      ['failed', 'conflict', 'body.items.0.student_id'],
      ['failed', 'invalid_state_transition', null],
    ]);
    const p1 = (await raw.get<Row>('/v1/payments/ext:P-1')).body;
    expect(p1).toMatchObject({ amount: 10_000, status: 'succeeded' });
  });
});
