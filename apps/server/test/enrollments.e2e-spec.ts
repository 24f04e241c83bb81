import {
  ENROLLMENT_STATUSES,
  ENROLLMENT_TRANSITIONS,
  type EnrollmentStatus,
  type EnrollmentTransition,
} from '@platform/contract';
import {
  type BodyOf,
  expectStatus,
  type QueryOf,
  typedClient,
  type TypedClient,
} from './support/api';
import { eventsOf, problemOf, rawClient, startServer, type TestServer } from './support/server';

describe('enrollments', () => {
  let server: TestServer;
  let orgId: string;
  let api: TypedClient;
  /** For what the contract's types refuse: unknown fields, malformed ids in a query. */
  let raw: ReturnType<typeof rawClient>;
  let counter = 0;

  beforeAll(async () => {
    server = await startServer();
    orgId = (await server.createOrganization()).id;
    const { token } = await server.createToken(orgId, ['all']);
    api = typedClient(server, token);
    raw = rawClient(server, token);
  });
  afterAll(() => server.close());

  async function student() {
    counter++;
    const res = await api.students.create({
      body: { student_number: `E-${counter}`, first_name: 'Eva', last_name: `Enrolled${counter}` },
    });
    return expectStatus(res, 201).body.id;
  }

  async function course(fields: Partial<BodyOf<TypedClient['courses']['create']>> = {}) {
    counter++;
    const res = await api.courses.create({
      body: { code: `C-${counter}`, title: `Course ${counter}`, ...fields },
    });
    return expectStatus(res, 201).body.id;
  }

  /** An enrollment brought into `state` through the API. */
  async function enrollmentIn(state: EnrollmentStatus) {
    const create = await api.enrollments.create({
      body: {
        student_id: await student(),
        course_id: await course(),
        status: state === 'active' || state === 'completed' ? 'active' : 'pending',
      },
    });
    const id = expectStatus(create, 201).body.id;
    const via: Partial<Record<EnrollmentStatus, EnrollmentTransition>> = {
      completed: 'complete',
      dropped: 'drop',
      cancelled: 'cancel',
    };
    const transition = via[state];
    if (transition) expectStatus(await api.enrollments[transition]({ params: { id } }), 200);
    return id;
  }

  it('creates a pending enrollment and sends enrollment.created', async () => {
    const studentId = await student();
    const courseId = await course();
    const res = expectStatus(
      await api.enrollments.create({
        body: { student_id: studentId, course_id: courseId, notes: 'Scholarship' },
      }),
      201,
    );
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
        const before = (await api.enrollments.retrieve({ params: { id } })).body;
        const eventsBefore = (await eventsOf(server, orgId)).length;
        const res = await api.enrollments[transition]({ params: { id } });
        const events = await eventsOf(server, orgId);
        if (allowed) {
          const moved = expectStatus(res, 200);
          expect(moved.body.status).toBe(to);
          const stamp = (
            {
              active: 'activated_at',
              completed: 'completed_at',
              dropped: 'dropped_at',
              cancelled: 'cancelled_at',
            } as const
          )[to];
          expect(moved.body[stamp]).toEqual(expect.any(String));
          expect(events).toHaveLength(eventsBefore + 1);
          expect(events.at(-1)).toMatchObject({ type: `enrollment.${to}`, data: moved.body });
        } else {
          const refused = expectStatus(res, 409);
          expect(refused.body.code).toBe('invalid_state_transition');
          expect(refused.body.detail).toContain(`from '${state}' to '${to}'`);
          expect(events).toHaveLength(eventsBefore);
          expect((await api.enrollments.retrieve({ params: { id } })).body).toEqual(before);
        }
      },
    );
  });

  it('refuses a second live enrollment of a student in a course, naming the field', async () => {
    const studentId = await student();
    const courseId = await course();
    const first = expectStatus(
      await api.enrollments.create({ body: { student_id: studentId, course_id: courseId } }),
      201,
    );
    const second = expectStatus(
      await api.enrollments.create({
        body: { student_id: studentId, course_id: courseId, status: 'active' },
      }),
      409,
    );
    expect(second.body.code).toBe('conflict');
    expect(second.body.errors).toEqual([
      expect.objectContaining({ path: 'body.course_id', code: 'already_exists' }),
    ]);
    expect(second.body.detail).toContain(first.body.id);
    // Once the first is no longer live, the student can enrol again.
    await api.enrollments.cancel({ params: { id: first.body.id } });
    expectStatus(
      await api.enrollments.create({ body: { student_id: studentId, course_id: courseId } }),
      201,
    );
  });

  it('refuses new enrollments in a full course, counting only live ones', async () => {
    const courseId = await course({ capacity: 2 });
    const a = expectStatus(
      await api.enrollments.create({ body: { student_id: await student(), course_id: courseId } }),
      201,
    );
    await api.enrollments.create({
      body: { student_id: await student(), course_id: courseId, status: 'active' },
    });
    const full = expectStatus(
      await api.enrollments.create({ body: { student_id: await student(), course_id: courseId } }),
      409,
    );
    expect(full.body.detail).toMatch(/is full \(capacity 2\)/);
    await api.enrollments.drop({ params: { id: a.body.id } });
    expectStatus(
      await api.enrollments.create({ body: { student_id: await student(), course_id: courseId } }),
      201,
    );
    // and capacity cannot be lowered below the live enrollments
    const shrink = expectStatus(
      await api.courses.update({ params: { id: courseId }, body: { capacity: 1 } }),
      400,
    );
    expect(shrink.body.errors?.[0]?.path).toBe('body.capacity');
  });

  it('fills a course exactly to capacity under concurrent requests', async () => {
    const courseId = await course({ capacity: 3 });
    const students = await Promise.all(Array.from({ length: 8 }, () => student()));
    const results = await Promise.all(
      students.map((studentId) =>
        api.enrollments.create({ body: { student_id: studentId, course_id: courseId } }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(3);
    expect(results.filter((r) => r.status === 409)).toHaveLength(5);
    const listed = await api.enrollments.list({ query: { course_id: courseId } });
    expect(expectStatus(listed, 200).body.meta.total).toBe(3);
  });

  it('refuses an archived course and unknown references', async () => {
    const archived = await course({ status: 'archived' });
    const res = expectStatus(
      await api.enrollments.create({ body: { student_id: await student(), course_id: archived } }),
      409,
    );
    expect(res.body.detail).toMatch(/archived/);
    const unknown = expectStatus(
      await api.enrollments.create({
        body: { student_id: 'stu_01M81AW4437YFWV4VE6WMBH8MY', course_id: archived },
      }),
      400,
    );
    expect(unknown.body.errors?.[0]).toMatchObject({ path: 'body.student_id', code: 'not_found' });
    const malformed = await raw.post('/v1/enrollments', {
      student_id: 'nope',
      course_id: archived,
      extra: 1,
    });
    expect(malformed.status).toBe(400);
    expect(
      problemOf(malformed)
        .errors?.map((e) => e.path)
        .sort(),
    ).toEqual(['body.extra', 'body.student_id']);
  });

  it('updates notes only, with enrollment.updated, and no event when nothing changed', async () => {
    const id = await enrollmentIn('active');
    const res = expectStatus(
      await api.enrollments.update({ params: { id }, body: { notes: 'Moved to evening group' } }),
      200,
    );
    expect(res.body.notes).toBe('Moved to evening group');
    const count = (await eventsOf(server, orgId)).length;
    expect((await eventsOf(server, orgId)).at(-1)).toMatchObject({
      type: 'enrollment.updated',
      data: res.body,
    });
    expectStatus(
      await api.enrollments.update({ params: { id }, body: { notes: 'Moved to evening group' } }),
      200,
    );
    expect(await eventsOf(server, orgId)).toHaveLength(count);
    const statusChange = await raw.patch(`/v1/enrollments/${id}`, { status: 'completed' });
    expect(statusChange.status).toBe(400);
    expect(problemOf(statusChange).errors?.[0]?.path).toBe('body.status');
  });

  it('lists by student, course, status and time', async () => {
    const studentId = await student();
    const [c1, c2, c3] = [await course(), await course(), await course()];
    const enrol = async (body: BodyOf<TypedClient['enrollments']['create']>) =>
      expectStatus(await api.enrollments.create({ body }), 201).body;
    const e1 = await enrol({ student_id: studentId, course_id: c1, status: 'active' });
    const e2 = await enrol({ student_id: studentId, course_id: c2 });
    const e3 = await enrol({ student_id: studentId, course_id: c3, status: 'active' });
    await api.enrollments.complete({ params: { id: e3.id } });
    const ids = async (query: QueryOf<TypedClient['enrollments']['list']>) =>
      expectStatus(await api.enrollments.list({ query }), 200).body.data.map((e) => e.id);

    expect(await ids({ student_id: studentId })).toEqual([e3.id, e2.id, e1.id]);
    expect(
      await ids({ student_id: studentId, status: 'active,completed', sort: 'created_at' }),
    ).toEqual([e1.id, e3.id]);
    expect(await ids({ course_id: `${c2},${c3}`, student_id: studentId })).toEqual([e3.id, e2.id]);
    expect(
      await ids({
        student_id: studentId,
        'activated_at[gte]': e1.activated_at!,
        sort: 'activated_at',
      }),
    ).toEqual([e1.id, e3.id]);
    expect(
      await ids({ student_id: studentId, 'completed_at[lte]': '2999-01-01T00:00:00Z' }),
    ).toEqual([e3.id]);
    const bad = await raw.get('/v1/enrollments?student_id=crs_01M81AW4437YFWV4VE6WMBH8MY');
    expect(bad.status).toBe(400);
    expect(problemOf(bad).errors?.[0]?.path).toBe('query.student_id');
  });
});
