import {
  type BodyOf,
  expectStatus,
  type QueryOf,
  typedClient,
  type TypedClient,
} from './support/api';
import { eventsOf, problemOf, rawClient, startServer, type TestServer } from './support/server';

describe('payments', () => {
  let server: TestServer;
  let orgId: string;
  let api: TypedClient;
  /** For what the contract's types refuse: malformed bodies and queries, undeclared methods. */
  let raw: ReturnType<typeof rawClient>;
  let studentId: `stu_${string}`;
  let otherStudentId: `stu_${string}`;
  let enrollmentId: `enr_${string}`;

  beforeAll(async () => {
    server = await startServer();
    orgId = (await server.createOrganization()).id;
    const { token } = await server.createToken(orgId, ['all']);
    api = typedClient(server, token);
    raw = rawClient(server, token);
    const student = async (body: BodyOf<TypedClient['students']['create']>) =>
      expectStatus(await api.students.create({ body }), 201).body.id;
    studentId = await student({ student_number: 'P-1', first_name: 'Pia', last_name: 'Payer' });
    otherStudentId = await student({
      student_number: 'P-2',
      first_name: 'Otto',
      last_name: 'Other',
    });
    const course = await api.courses.create({ body: { code: 'FEE', title: 'Fees' } });
    const enrollment = await api.enrollments.create({
      body: { student_id: studentId, course_id: expectStatus(course, 201).body.id },
    });
    enrollmentId = expectStatus(enrollment, 201).body.id;
  });
  afterAll(() => server.close());

  const create = (fields: Partial<BodyOf<TypedClient['payments']['create']>> = {}) =>
    api.payments.create({
      body: { student_id: studentId, amount: 12_500, currency: 'EUR', ...fields },
    });
  /** The same with fields the contract's types refuse, for the 400s. */
  const createRaw = (fields: Record<string, unknown>) =>
    raw.post('/v1/payments', { student_id: studentId, amount: 12_500, currency: 'EUR', ...fields });

  /** A payment brought into a state through the API. */
  async function paymentIn(
    state: 'pending' | 'succeeded' | 'failed' | 'partly refunded' | 'fully refunded',
  ) {
    const { id } = expectStatus(await create(), 201).body;
    if (state !== 'pending')
      await api.payments[state === 'failed' ? 'fail' : 'succeed']({
        params: { id },
        body: undefined,
      });
    if (state === 'partly refunded')
      await api.payments.refund({ params: { id }, body: { amount: 500 } });
    if (state === 'fully refunded') await api.payments.refund({ params: { id }, body: undefined });
    return id;
  }

  it('records a pending payment with amount in minor units and sends payment.created', async () => {
    const res = await create({
      enrollment_id: enrollmentId,
      description: 'Term 1 tuition',
      external_reference: 'ch_123',
    });
    expect(expectStatus(res, 201).body).toMatchObject({
      object: 'payment',
      student_id: studentId,
      enrollment_id: enrollmentId,
      amount: 12_500,
      currency: 'EUR',
      status: 'pending',
      amount_refunded: 0,
      description: 'Term 1 tuition',
      external_reference: 'ch_123',
    });
    expect((await eventsOf(server, orgId)).at(-1)).toMatchObject({
      type: 'payment.created',
      data: res.body,
    });
  });

  it.each([
    [{ amount: 0 }, 'body.amount'],
    [{ amount: -100 }, 'body.amount'],
    [{ amount: 10.5 }, 'body.amount'],
    [{ amount: '100' }, 'body.amount'],
    [{ amount: 1e13 }, 'body.amount'],
    [{ currency: 'eur' }, 'body.currency'],
    [{ currency: 'XYZ' }, 'body.currency'],
    [{ currency: undefined }, 'body.currency'],
    [{ status: 'succeeded' }, 'body.status'],
  ])('refuses %j naming %s', async (fields, path) => {
    const res = await createRaw(fields);
    expect(res.status).toBe(400);
    expect(problemOf(res).errors?.map((e) => e.path)).toContain(path);
  });

  it('refuses an enrollment of another student, and unknown references', async () => {
    const other = expectStatus(
      await create({ student_id: otherStudentId, enrollment_id: enrollmentId }),
      400,
    );
    expect(other.body.errors?.[0]).toMatchObject({ path: 'body.enrollment_id' });
    const unknown = expectStatus(
      await create({ enrollment_id: 'enr_01M81AW4437YFWV4VE6WMBH8MY' }),
      400,
    );
    expect(unknown.body.errors?.[0]).toMatchObject({
      path: 'body.enrollment_id',
      code: 'not_found',
    });
  });

  describe('state machine: pending → succeeded | failed, succeeded → refunded', () => {
    // Written out from the specification, independently of the code.
    const cases = [
      ['pending', 'succeed', 200, 'succeeded'],
      ['pending', 'fail', 200, 'failed'],
      ['pending', 'refund', 409],
      ['succeeded', 'succeed', 409],
      ['succeeded', 'fail', 409],
      ['succeeded', 'refund', 200, 'refunded'],
      ['failed', 'succeed', 409],
      ['failed', 'fail', 409],
      ['failed', 'refund', 409],
      ['partly refunded', 'succeed', 409],
      ['partly refunded', 'fail', 409],
      ['partly refunded', 'refund', 200, 'refunded'],
      ['fully refunded', 'succeed', 409],
      ['fully refunded', 'fail', 409],
    ] as const;

    const rows = cases.map(
      ([state, operation, status, to]: readonly [
        Parameters<typeof paymentIn>[0],
        'succeed' | 'fail' | 'refund',
        200 | 409,
        string?,
      ]) => ({ state, operation, status, to }),
    );

    it.each(rows)('$state + $operation → $status', async ({ state, operation, status, to }) => {
      const id = await paymentIn(state);
      const before = await eventsOf(server, orgId);
      const res = expectStatus(
        await api.payments[operation]({ params: { id }, body: undefined }),
        status,
      );
      const after = await eventsOf(server, orgId);
      if (res.status === 200) {
        expect(res.body.status).toBe(to);
        expect(after.at(-1)).toMatchObject({ type: `payment.${to}`, data: res.body });
      } else {
        expect(res.body.code).toBe('invalid_state_transition');
        expect(after).toHaveLength(before.length);
      }
    });
  });

  it('refunds partly, then the rest, and never more than the amount', async () => {
    const id = await paymentIn('succeeded');
    const refund = (amount?: number) =>
      api.payments.refund({ params: { id }, body: amount === undefined ? undefined : { amount } });
    expect(expectStatus(await refund(2_500), 200).body).toMatchObject({
      status: 'refunded',
      amount_refunded: 2_500,
      refunded_at: expect.any(String),
    });
    const tooMuch = expectStatus(await refund(10_001), 400);
    expect(tooMuch.body.errors?.[0]).toMatchObject({ path: 'body.amount' });
    expect(tooMuch.body.detail).toContain('10000');
    expect(expectStatus(await refund(), 200).body.amount_refunded).toBe(12_500);
    expect((await refund(1)).status).toBe(400);
    const refunds = (await eventsOf(server, orgId)).filter(
      (e) => e.type === 'payment.refunded' && e.data.id === id,
    );
    expect(refunds.map((e) => e.data.amount_refunded)).toEqual([2_500, 12_500]);
  });

  it('records a failure reason', async () => {
    const id = await paymentIn('pending');
    const res = await api.payments.fail({
      params: { id },
      body: { failure_reason: 'card_declined' },
    });
    expect(expectStatus(res, 200).body).toMatchObject({
      status: 'failed',
      failure_reason: 'card_declined',
      failed_at: expect.any(String),
    });
  });

  it('lists by student, status, currency, amount range and q', async () => {
    const own = expectStatus(
      await api.payments.create({
        body: {
          student_id: otherStudentId,
          amount: 99,
          currency: 'USD',
          description: 'Library fine',
        },
      }),
      201,
    );
    const list = async (query: QueryOf<TypedClient['payments']['list']>) =>
      expectStatus(await api.payments.list({ query }), 200).body;
    const ids = async (query: QueryOf<TypedClient['payments']['list']>) =>
      (await list(query)).data.map((p) => p.id);
    expect(await ids({ student_id: otherStudentId })).toEqual([own.body.id]);
    expect(await ids({ currency: 'USD' })).toEqual([own.body.id]);
    expect(await ids({ 'amount[lt]': 100 })).toEqual([own.body.id]);
    expect(await ids({ q: 'library' })).toEqual([own.body.id]);
    const failed = await list({ status: 'failed', per_page: 100 });
    expect(failed.data.every((p) => p.status === 'failed')).toBe(true);
    expect(failed.meta.total).toBeGreaterThanOrEqual(2);
    const sorted = (await list({ sort: '-amount', per_page: 3 })).data.map((p) => p.amount);
    expect(sorted).toEqual([...sorted].sort((a, b) => b - a));
    expect(problemOf(await raw.get('/v1/payments?amount[gte]=abc')).errors?.[0]?.path).toBe(
      'query.amount[gte]',
    );
  });

  it('has no update or delete: payments are financial records', async () => {
    const id = await paymentIn('pending');
    expect((await raw.patch(`/v1/payments/${id}`, { amount: 1 })).status).toBe(405);
    expect((await raw.delete(`/v1/payments/${id}`)).status).toBe(405);
  });
});
