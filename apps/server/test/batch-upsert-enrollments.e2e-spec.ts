import { batchCaller, outcomeOf as outcome } from './support/batch';
import { eventsOf, rawClient, startServer, type TestServer } from './support/server';

type Row = { id: string; [field: string]: unknown };

describe('batch upserts of enrollments: seats, live enrollments and states across the batch', () => {
  let server: TestServer;
  let orgId: string;
  let token: string;
  let raw: ReturnType<typeof rawClient>;

  beforeAll(async () => {
    server = await startServer();
    orgId = (await server.createOrganization()).id;
    ({ token } = await server.createToken(orgId, ['all']));
    raw = rawClient(server, token);
    for (const [key, capacity] of [
      ['SMALL', 2],
      ['ONE', 1],
      ['OPEN', null],
    ] as const) {
      const body = { code: key, title: key, external_id: `class-${key}`, capacity };
      expect((await raw.post('/v1/courses', body)).status).toBe(201);
    }
    for (const key of ['S-1', 'S-2', 'S-3', 'S-4', 'S-5']) {
      const body = { student_number: key, first_name: 'Ada', last_name: key, external_id: key };
      expect((await raw.post('/v1/students', body)).status).toBe(201);
    }
  });
  afterAll(() => server.close());

  const batch = (items: unknown[]) => batchCaller(server, token)('/v1/enrollments/batch', items);
  const enroll = (key: string, student: string, course: string, extra: object = {}) => ({
    external_id: key,
    student_id: `ext:${student}`,
    course_id: `ext:class-${course}`,
    ...extra,
  });

  it('counts seats and live enrollments across its own items, as single creates would', async () => {
    const res = await batch([
      enroll('E-1', 'S-1', 'SMALL'),
      enroll('E-2', 'S-2', 'SMALL', { status: 'active' }),
      enroll('E-3', 'S-3', 'SMALL'), // the course is full now
      enroll('E-4', 'S-1', 'SMALL'), // S-1 holds a live enrollment since item 0
      enroll('E-5', 'S-1', 'OPEN', { status: 'completed' }), // not a first state
    ]);
    expect(res.status).toBe(200);
    expect(outcome(res)).toEqual([
      ['created', null, null],
      ['created', null, null],
      ['failed', 'conflict', null],
      ['failed', 'conflict', 'body.items.3.course_id'],
      ['failed', 'validation_error', 'body.items.4.status'],
    ]);
    expect(res.body.data[2]!.error!.detail).toContain('is full (capacity 2)');
    const e2 = (await raw.get<Row>('/v1/enrollments/ext:E-2')).body;
    expect(e2).toMatchObject({ status: 'active', activated_at: expect.any(String) });
  });

  it('moves existing enrollments by status, freeing the seat a later item takes', async () => {
    const before = (await eventsOf(server, orgId)).length;
    const ok = await batch([
      { external_id: 'E-1', status: 'active', notes: 'Paid' },
      { external_id: 'E-2', status: 'dropped' },
      enroll('E-3', 'S-3', 'SMALL'),
      enroll('E-6', 'S-4', 'SMALL'),
    ]);
    expect(outcome(ok)).toEqual([
      ['updated', null, null],
      ['updated', null, null],
      ['created', null, null],
      ['failed', 'conflict', null],
    ]);
    const events = (await eventsOf(server, orgId)).slice(before);
    expect(events.map((e) => [e.type, e.data.external_id, e.data.status])).toEqual([
      ['enrollment.updated', 'E-1', 'pending'],
      ['enrollment.active', 'E-1', 'active'],
      ['enrollment.dropped', 'E-2', 'dropped'],
      ['enrollment.created', 'E-3', 'pending'],
    ]);
    expect(events[1]!.previous_attributes).toMatchObject({ status: 'pending' });
    const e2 = (await raw.get<Row>('/v1/enrollments/ext:E-2')).body;
    expect(e2).toMatchObject({ status: 'dropped', dropped_at: expect.any(String) });
    // The status tallies follow (list totals).
    const active = await raw.get<{ meta: { total: number } }>('/v1/enrollments?status=active');
    expect(active.body.meta.total).toBe(1);
  });

  it('re-enrolls a student an earlier item of the batch took out of the course', async () => {
    expect(outcome(await batch([enroll('E-7', 'S-5', 'OPEN')]))).toEqual([['created', null, null]]);
    const res = await batch([
      enroll('E-8', 'S-5', 'OPEN'), // E-7 is still live here
      { external_id: 'E-7', status: 'cancelled' },
      enroll('E-9', 'S-5', 'OPEN'),
    ]);
    expect(outcome(res)).toEqual([
      ['failed', 'conflict', 'body.items.0.course_id'],
      ['updated', null, null],
      ['created', null, null],
    ]);
  });

  it('refuses a state no transition leads to, and references that would move the enrollment', async () => {
    const res = await batch([
      { external_id: 'E-2', status: 'pending' },
      { external_id: 'E-3', status: 'completed' }, // pending → completed is not a transition
      { external_id: 'E-1', course_id: 'ext:class-OPEN' },
    ]);
    expect(outcome(res)).toEqual([
      ['failed', 'invalid_state_transition', null],
      ['failed', 'invalid_state_transition', null],
      ['failed', 'conflict', 'body.items.2.course_id'],
    ]);
    const same = await batch([
      { external_id: 'E-1', student_id: 'ext:S-1', course_id: 'ext:class-SMALL', status: 'active' },
    ]);
    expect(outcome(same)).toEqual([['unchanged', null, null]]);
  });

  it('concurrent batches for the last seat: one enrollment', async () => {
    const results = await Promise.all(
      ['S-1', 'S-2', 'S-3', 'S-4'].map((s) => batch([enroll(`RACE-${s}`, s, 'ONE')])),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(results.map((r) => r.body.data[0]!.status).sort()).toEqual([
      'created',
      'failed',
      'failed',
      'failed',
    ]);
    const listed = await raw.get<{ data: Row[] }>('/v1/enrollments?course_id=ext:class-ONE');
    expect(listed.body.data).toHaveLength(1);
  });
});
