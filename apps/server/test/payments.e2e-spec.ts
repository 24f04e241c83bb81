import { client, eventsOf, startServer, type TestServer } from './support/server';

describe('payments', () => {
  let server: TestServer;
  let orgId: string;
  let api: ReturnType<typeof client>;
  let studentId: string;
  let otherStudentId: string;
  let enrollmentId: string;

  beforeAll(async () => {
    server = await startServer();
    orgId = (await server.createOrganization()).id;
    api = client(server, (await server.createToken(orgId, ['all'])).token);
    studentId = (
      await api.post('/v1/students', {
        student_number: 'P-1',
        first_name: 'Pia',
        last_name: 'Payer',
      })
    ).body.id;
    otherStudentId = (
      await api.post('/v1/students', {
        student_number: 'P-2',
        first_name: 'Otto',
        last_name: 'Other',
      })
    ).body.id;
    const courseId = (await api.post('/v1/courses', { code: 'FEE', title: 'Fees' })).body.id;
    enrollmentId = (
      await api.post('/v1/enrollments', { student_id: studentId, course_id: courseId })
    ).body.id;
  });
  afterAll(() => server.close());

  const create = (fields: Record<string, unknown> = {}) =>
    api.post('/v1/payments', { student_id: studentId, amount: 12_500, currency: 'EUR', ...fields });

  /** A payment brought into a state through the API. */
  async function paymentIn(
    state: 'pending' | 'succeeded' | 'failed' | 'partly refunded' | 'fully refunded',
  ) {
    const id = (await create()).body.id as string;
    if (state !== 'pending')
      await api.post(`/v1/payments/${id}/${state === 'failed' ? 'fail' : 'succeed'}`);
    if (state === 'partly refunded') await api.post(`/v1/payments/${id}/refund`, { amount: 500 });
    if (state === 'fully refunded') await api.post(`/v1/payments/${id}/refund`);
    return id;
  }

  it('records a pending payment with amount in minor units and sends payment.created', async () => {
    const res = await create({
      enrollment_id: enrollmentId,
      description: 'Term 1 tuition',
      external_reference: 'ch_123',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
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
    const res = await create(fields);
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it('refuses an enrollment of another student, and unknown references', async () => {
    const other = await create({ student_id: otherStudentId, enrollment_id: enrollmentId });
    expect(other.status).toBe(400);
    expect(other.body.errors[0]).toMatchObject({ path: 'body.enrollment_id' });
    const unknown = await create({ enrollment_id: 'enr_01M81AW4437YFWV4VE6WMBH8MY' });
    expect(unknown.body.errors[0]).toMatchObject({ path: 'body.enrollment_id', code: 'not_found' });
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
      ([state, operation, status, to]: readonly [string, string, number, string?]) => ({
        state: state as Parameters<typeof paymentIn>[0],
        operation,
        status,
        to,
      }),
    );

    it.each(rows)('$state + $operation → $status', async ({ state, operation, status, to }) => {
      const id = await paymentIn(state);
      const before = await eventsOf(server, orgId);
      const res = await api.post(`/v1/payments/${id}/${operation}`);
      expect(res.status).toBe(status);
      const after = await eventsOf(server, orgId);
      if (status === 200) {
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
    const first = await api.post(`/v1/payments/${id}/refund`, { amount: 2_500 });
    expect(first.body).toMatchObject({
      status: 'refunded',
      amount_refunded: 2_500,
      refunded_at: expect.any(String),
    });
    const tooMuch = await api.post(`/v1/payments/${id}/refund`, { amount: 10_001 });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body.errors[0]).toMatchObject({ path: 'body.amount' });
    expect(tooMuch.body.detail).toContain('10000');
    const rest = await api.post(`/v1/payments/${id}/refund`);
    expect(rest.body.amount_refunded).toBe(12_500);
    const nothingLeft = await api.post(`/v1/payments/${id}/refund`, { amount: 1 });
    expect(nothingLeft.status).toBe(400);
    const refunds = (await eventsOf(server, orgId)).filter(
      (e) => e.type === 'payment.refunded' && e.data.id === id,
    );
    expect(refunds.map((e) => e.data.amount_refunded)).toEqual([2_500, 12_500]);
  });

  it('records a failure reason', async () => {
    const id = await paymentIn('pending');
    const res = await api.post(`/v1/payments/${id}/fail`, { failure_reason: 'card_declined' });
    expect(res.body).toMatchObject({
      status: 'failed',
      failure_reason: 'card_declined',
      failed_at: expect.any(String),
    });
  });

  it('lists by student, status, currency, amount range and q', async () => {
    const own = await api.post('/v1/payments', {
      student_id: otherStudentId,
      amount: 99,
      currency: 'USD',
      description: 'Library fine',
    });
    const ids = async (query: string) =>
      (await api.get(`/v1/payments?${query}`)).body.data.map((p: { id: string }) => p.id);
    expect(await ids(`student_id=${otherStudentId}`)).toEqual([own.body.id]);
    expect(await ids('currency=USD')).toEqual([own.body.id]);
    expect(await ids('amount[lt]=100')).toEqual([own.body.id]);
    expect(await ids('q=library')).toEqual([own.body.id]);
    const failed = (await api.get('/v1/payments?status=failed&per_page=100')).body;
    expect(failed.data.every((p: { status: string }) => p.status === 'failed')).toBe(true);
    expect(failed.meta.total).toBeGreaterThanOrEqual(2);
    const sorted = (await api.get('/v1/payments?sort=-amount&per_page=3')).body.data.map(
      (p: { amount: number }) => p.amount,
    );
    expect(sorted).toEqual([...sorted].sort((a, b) => b - a));
    expect((await api.get('/v1/payments?amount[gte]=abc')).body.errors[0].path).toBe(
      'query.amount[gte]',
    );
  });

  it('has no update or delete: payments are financial records', async () => {
    const id = await paymentIn('pending');
    expect((await api.patch(`/v1/payments/${id}`, { amount: 1 })).status).toBe(405);
    expect((await api.delete(`/v1/payments/${id}`)).status).toBe(405);
  });
});
