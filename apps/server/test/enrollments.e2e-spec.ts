import {
  ENROLLMENT_STATUSES,
  ENROLLMENT_TRANSITIONS,
  type EnrollmentStatus,
} from '@platform/contract';
import { client, eventsOf, startServer, type TestServer } from './support/server';

describe('enrollments', () => {
  let server: TestServer;
  let orgId: string;
  let api: ReturnType<typeof client>;
  let counter = 0;

  beforeAll(async () => {
    server = await startServer();
    orgId = (await server.createOrganization()).id;
    api = client(server, (await server.createToken(orgId, ['all'])).token);
  });
  afterAll(() => server.close());

  async function student() {
    counter++;
    const res = await api.post('/v1/students', {
      student_number: `E-${counter}`,
      first_name: 'Eva',
      last_name: `Enrolled${counter}`,
    });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }

  async function course(fields: Record<string, unknown> = {}) {
    counter++;
    const res = await api.post('/v1/courses', {
      code: `C-${counter}`,
      title: `Course ${counter}`,
      ...fields,
    });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }

  /** An enrollment brought into `state` through the API. */
  async function enrollmentIn(state: EnrollmentStatus) {
    const create = await api.post('/v1/enrollments', {
      student_id: await student(),
      course_id: await course(),
      status: state === 'active' || state === 'completed' ? 'active' : 'pending',
    });
    expect(create.status).toBe(201);
    const id = create.body.id as string;
    const via: Partial<Record<EnrollmentStatus, string>> = {
      completed: 'complete',
      dropped: 'drop',
      cancelled: 'cancel',
    };
    if (via[state])
      expect((await api.post(`/v1/enrollments/${id}/${via[state]}`)).status).toBe(200);
    return id;
  }

  it('creates a pending enrollment and sends enrollment.created', async () => {
    const studentId = await student();
    const courseId = await course();
    const res = await api.post('/v1/enrollments', {
      student_id: studentId,
      course_id: courseId,
      notes: 'Scholarship',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      object: 'enrollment',
      student_id: studentId,
      course_id: courseId,
      status: 'pending',
      notes: 'Scholarship',
      activated_at: null,
    });
    const events = await eventsOf(server, orgId);
    expect(events.at(-1)).toMatchObject({
      type: 'enrollment.created',
      data: res.body,
      api_version: 'v1',
    });
  });

  describe('state machine: every transition from every state', () => {
    // Written out from the specification, independently of the code's transition table:
    // pending → active → completed, pending | active → dropped, pending → cancelled.
    const ALLOWED: Record<EnrollmentStatus, string[]> = {
      pending: ['activate', 'drop', 'cancel'],
      active: ['complete', 'drop'],
      completed: [],
      dropped: [],
      cancelled: [],
    };
    const TARGET = {
      activate: 'active',
      complete: 'completed',
      drop: 'dropped',
      cancel: 'cancelled',
    } as const;
    const cases = ENROLLMENT_STATUSES.flatMap((state) =>
      (Object.keys(TARGET) as (keyof typeof TARGET)[]).map((transition) => ({
        state,
        transition,
        to: TARGET[transition],
        allowed: ALLOWED[state].includes(transition),
      })),
    );

    it('the contract offers exactly these transitions', () => {
      expect(Object.keys(ENROLLMENT_TRANSITIONS).sort()).toEqual(Object.keys(TARGET).sort());
    });

    it.each(cases)(
      '$transition from $state → allowed: $allowed',
      async ({ state, transition, to, allowed }) => {
        const id = await enrollmentIn(state);
        const before = (await api.get(`/v1/enrollments/${id}`)).body;
        const eventsBefore = (await eventsOf(server, orgId)).length;
        const res = await api.post(`/v1/enrollments/${id}/${transition}`);
        const events = await eventsOf(server, orgId);
        if (allowed) {
          expect(res.status).toBe(200);
          expect(res.body.status).toBe(to);
          const stamp = {
            active: 'activated_at',
            completed: 'completed_at',
            dropped: 'dropped_at',
            cancelled: 'cancelled_at',
          }[to];
          expect(res.body[stamp]).toEqual(expect.any(String));
          expect(events).toHaveLength(eventsBefore + 1);
          expect(events.at(-1)).toMatchObject({ type: `enrollment.${to}`, data: res.body });
        } else {
          expect(res.status).toBe(409);
          expect(res.body.code).toBe('invalid_state_transition');
          expect(res.body.detail).toContain(`from '${state}' to '${to}'`);
          expect(events).toHaveLength(eventsBefore);
          expect((await api.get(`/v1/enrollments/${id}`)).body).toEqual(before);
        }
      },
    );
  });

  it('refuses a second live enrollment of a student in a course, naming the field', async () => {
    const studentId = await student();
    const courseId = await course();
    const first = await api.post('/v1/enrollments', { student_id: studentId, course_id: courseId });
    const second = await api.post('/v1/enrollments', {
      student_id: studentId,
      course_id: courseId,
      status: 'active',
    });
    expect(second.status).toBe(409);
    expect(second.body.code).toBe('conflict');
    expect(second.body.errors).toEqual([
      expect.objectContaining({ path: 'body.course_id', code: 'already_exists' }),
    ]);
    expect(second.body.detail).toContain(first.body.id);
    // Once the first is no longer live, the student can enrol again.
    await api.post(`/v1/enrollments/${first.body.id}/cancel`);
    expect(
      (await api.post('/v1/enrollments', { student_id: studentId, course_id: courseId })).status,
    ).toBe(201);
  });

  it('refuses new enrollments in a full course, counting only live ones', async () => {
    const courseId = await course({ capacity: 2 });
    const a = await api.post('/v1/enrollments', {
      student_id: await student(),
      course_id: courseId,
    });
    await api.post('/v1/enrollments', {
      student_id: await student(),
      course_id: courseId,
      status: 'active',
    });
    const full = await api.post('/v1/enrollments', {
      student_id: await student(),
      course_id: courseId,
    });
    expect(full.status).toBe(409);
    expect(full.body.detail).toMatch(/is full \(capacity 2\)/);
    await api.post(`/v1/enrollments/${a.body.id}/drop`);
    expect(
      (await api.post('/v1/enrollments', { student_id: await student(), course_id: courseId }))
        .status,
    ).toBe(201);
    // and capacity cannot be lowered below the live enrollments
    const shrink = await api.patch(`/v1/courses/${courseId}`, { capacity: 1 });
    expect(shrink.status).toBe(400);
    expect(shrink.body.errors[0].path).toBe('body.capacity');
  });

  it('fills a course exactly to capacity under concurrent requests', async () => {
    const courseId = await course({ capacity: 3 });
    const students = await Promise.all(Array.from({ length: 8 }, () => student()));
    const results = await Promise.all(
      students.map((studentId) =>
        api.post('/v1/enrollments', { student_id: studentId, course_id: courseId }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(3);
    expect(results.filter((r) => r.status === 409)).toHaveLength(5);
    const listed = await api.get(`/v1/enrollments?course_id=${courseId}`);
    expect(listed.body.meta.total).toBe(3);
  });

  it('refuses an archived course and unknown references', async () => {
    const archived = await course({ status: 'archived' });
    const res = await api.post('/v1/enrollments', {
      student_id: await student(),
      course_id: archived,
    });
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/archived/);
    const unknown = await api.post('/v1/enrollments', {
      student_id: 'stu_01M81AW4437YFWV4VE6WMBH8MY',
      course_id: archived,
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0]).toMatchObject({ path: 'body.student_id', code: 'not_found' });
    const malformed = await api.post('/v1/enrollments', {
      student_id: 'nope',
      course_id: archived,
      extra: 1,
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors.map((e: { path: string }) => e.path).sort()).toEqual([
      'body.extra',
      'body.student_id',
    ]);
  });

  it('updates notes only, with enrollment.updated, and no event when nothing changed', async () => {
    const id = await enrollmentIn('active');
    const res = await api.patch(`/v1/enrollments/${id}`, { notes: 'Moved to evening group' });
    expect(res.status).toBe(200);
    expect(res.body.notes).toBe('Moved to evening group');
    const count = (await eventsOf(server, orgId)).length;
    expect((await eventsOf(server, orgId)).at(-1)).toMatchObject({
      type: 'enrollment.updated',
      data: res.body,
    });
    expect(
      (await api.patch(`/v1/enrollments/${id}`, { notes: 'Moved to evening group' })).status,
    ).toBe(200);
    expect(await eventsOf(server, orgId)).toHaveLength(count);
    const statusChange = await api.patch(`/v1/enrollments/${id}`, { status: 'completed' });
    expect(statusChange.status).toBe(400);
    expect(statusChange.body.errors[0].path).toBe('body.status');
  });

  it('lists by student, course, status and time', async () => {
    const studentId = await student();
    const [c1, c2, c3] = [await course(), await course(), await course()];
    const e1 = (
      await api.post('/v1/enrollments', { student_id: studentId, course_id: c1, status: 'active' })
    ).body;
    const e2 = (await api.post('/v1/enrollments', { student_id: studentId, course_id: c2 })).body;
    const e3 = (
      await api.post('/v1/enrollments', { student_id: studentId, course_id: c3, status: 'active' })
    ).body;
    await api.post(`/v1/enrollments/${e3.id}/complete`);
    const ids = async (query: string) =>
      (await api.get(`/v1/enrollments?${query}`)).body.data.map((e: { id: string }) => e.id);

    expect(await ids(`student_id=${studentId}`)).toEqual([e3.id, e2.id, e1.id]);
    expect(await ids(`student_id=${studentId}&status=active,completed&sort=created_at`)).toEqual([
      e1.id,
      e3.id,
    ]);
    expect(await ids(`course_id=${c2},${c3}&student_id=${studentId}`)).toEqual([e3.id, e2.id]);
    expect(
      await ids(`student_id=${studentId}&activated_at[gte]=${e1.activated_at}&sort=activated_at`),
    ).toEqual([e1.id, e3.id]);
    expect(await ids(`student_id=${studentId}&completed_at[lte]=2999-01-01T00:00:00Z`)).toEqual([
      e3.id,
    ]);
    const bad = await api.get('/v1/enrollments?student_id=crs_01M81AW4437YFWV4VE6WMBH8MY');
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe('query.student_id');
  });
});
