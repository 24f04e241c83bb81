/**
 * Deleting a record while others are being created that refer to it (a payment for a student
 * being deleted, an enrollment in a course being deleted, …). Whichever commits first, the
 * answers are the documented ones, never a 500: either the delete wins (200) and every create
 * is the 400 naming the missing reference, or a create wins (201) and the delete is the 409 of a
 * record still referred to. No child is ever left referring to a deleted parent. On PostgreSQL
 * the transactions run concurrently, so the parent can vanish between a create's check and its
 * insert (the foreign key refuses the insert); on SQLite they are serialised.
 */
import { expectStatus, typedClient, type TypedClient } from './support/api';
import { problemOf, rawCall, startServer, type TestServer } from './support/server';

const ROUNDS = 40;
/** Creates sent alongside each delete. */
const CREATES = 3;

interface Race {
  /** The parent's collection (`/v1/students`) and its noun in the 400's detail. */
  parent: { path: string; noun: string };
  /** The child's collection and the field of its create body that names the parent. */
  child: { path: string; field: string };
  /** A new parent for a round. */
  newParent: (round: number) => Promise<string>;
  /** The i-th create body of a round (the parent id in `field`). */
  body: (parentId: string, i: number) => Promise<Record<string, unknown>>;
}

describe('deleting a record while records referring to it are created', () => {
  let server: TestServer;
  let api: TypedClient;
  let token: string;

  beforeAll(async () => {
    server = await startServer();
    // Each round sends several requests: room for all of them within the minute.
    const orgId = (
      await server.createOrganization({ plan: 'enterprise', rateLimitPerMinute: 20_000 })
    ).id;
    token = (await server.createToken(orgId, ['all'])).token;
    api = typedClient(server, token);
  });
  afterAll(() => server.close());

  const post = (path: string, body: unknown, key?: string) =>
    rawCall(server, path, {
      token,
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(key && { 'Idempotency-Key': key }) },
      body: JSON.stringify(body),
    });

  let serial = 0;
  const student = async () =>
    expectStatus(
      await api.students.create({
        body: { student_number: `R-${(serial += 1)}`, first_name: 'Rae', last_name: 'Race' },
      }),
      201,
    ).body.id;
  const course = async () =>
    expectStatus(
      await api.courses.create({ body: { code: `RC-${(serial += 1)}`, title: 'Races' } }),
      201,
    ).body.id;
  const exam = async (courseId: string) =>
    expectStatus(
      await api.exams.create({
        body: { course_id: courseId, title: 'Quiz', max_score: 10, held_on: '2026-03-01' },
      }),
      201,
    ).body.id;
  const enrolled = async (courseId: string) => {
    const studentId = await student();
    expectStatus(
      await api.enrollments.create({
        body: { student_id: studentId, course_id: courseId, status: 'active' },
      }),
      201,
    );
    return studentId;
  };

  /** What a round answered that it must not (a 5xx, or a 201 for a deleted parent), described. */
  let unexpected: string[] = [];

  /** One round: the delete and the creates sent at once, then what each answered checked. */
  async function round(race: Race, n: number): Promise<void> {
    const parentId = await race.newParent(n);
    const bodies = await Promise.all(
      Array.from({ length: CREATES }, (_, i) => race.body(parentId, i)),
    );
    // Every other create carries an Idempotency-Key (its work then runs in the key's transaction).
    const key = (i: number) =>
      i % 2 === 0 ? `race-${race.parent.path}-${race.child.path}-${n}-${i}` : undefined;
    const [deleted, ...created] = await Promise.all([
      rawCall(server, `${race.parent.path}/${parentId}`, { token, method: 'DELETE' }),
      ...bodies.map((body, i) => post(race.child.path, body, key(i))),
    ]);
    const gone = deleted.status === 200;
    const answers = [deleted, ...created];
    if (gone) {
      // A keyed create that was refused is not kept: its retry runs again, and is refused again.
      for (const [i, body] of bodies.entries()) {
        const k = key(i);
        if (k) answers.push(await post(race.child.path, body, k));
      }
    }
    const wanted = [gone ? 200 : 409, ...answers.slice(1).map(() => (gone ? 400 : 201))];
    if (answers.some((res, i) => res.status !== wanted[i])) {
      unexpected.push(JSON.stringify(answers.map((res) => [res.status, res.body])));
      return;
    }
    if (!gone) expect(problemOf(deleted).code).toBe('conflict');
    const message = `No ${race.parent.noun} ${parentId} in your organization`;
    for (const res of gone ? answers.slice(1) : []) {
      expect(res.headers.get('idempotent-replayed')).toBeNull();
      expect(problemOf(res)).toMatchObject({
        code: 'validation_error',
        detail: `${race.child.field}: ${message}`,
        errors: [{ path: `body.${race.child.field}`, message, code: 'not_found' }],
      });
    }
    // No child refers to a deleted parent; each 201 is there.
    const children = await rawCall<{ data: { id: string }[] }>(
      server,
      `${race.child.path}?${race.child.field}=${parentId}&per_page=100`,
      { token },
    );
    expect(children.status).toBe(200);
    expect(children.body.data).toHaveLength(gone ? 0 : CREATES);
  }

  async function run(race: Race) {
    unexpected = [];
    for (let n = 0; n < ROUNDS; n += 1) await round(race, n);
    const errors = unexpected.filter((line) => /\[5\d\d,/.test(line)).length;
    expect({ errors, unexpected }).toEqual({ errors: 0, unexpected: [] });
  }

  it('payments of a student being deleted', () =>
    run({
      parent: { path: '/v1/students', noun: 'student' },
      child: { path: '/v1/payments', field: 'student_id' },
      newParent: student,
      body: (student_id, i) => Promise.resolve({ student_id, amount: 100 + i, currency: 'EUR' }),
    }));

  it('enrollments of a student being deleted', async () => {
    const courses = await Promise.all(Array.from({ length: CREATES }, course));
    await run({
      parent: { path: '/v1/students', noun: 'student' },
      child: { path: '/v1/enrollments', field: 'student_id' },
      newParent: student,
      body: (student_id, i) => Promise.resolve({ student_id, course_id: courses[i] }),
    });
  });

  it('enrollments in a course being deleted', async () => {
    const students = await Promise.all(Array.from({ length: CREATES }, student));
    await run({
      parent: { path: '/v1/courses', noun: 'course' },
      child: { path: '/v1/enrollments', field: 'course_id' },
      newParent: course,
      body: (course_id, i) => Promise.resolve({ student_id: students[i], course_id }),
    });
  });

  it('exams of a course being deleted', () =>
    run({
      parent: { path: '/v1/courses', noun: 'course' },
      child: { path: '/v1/exams', field: 'course_id' },
      newParent: course,
      body: (course_id, i) =>
        Promise.resolve({ course_id, title: `Quiz ${i}`, max_score: 10, held_on: '2026-03-01' }),
    }));

  it('exam results of an exam being deleted', async () => {
    const courseId = await course();
    const students = await Promise.all(Array.from({ length: CREATES }, () => enrolled(courseId)));
    await run({
      parent: { path: '/v1/exams', noun: 'exam' },
      child: { path: '/v1/exam_results', field: 'exam_id' },
      newParent: () => exam(courseId),
      body: (exam_id, i) => Promise.resolve({ exam_id, student_id: students[i], score: i }),
    });
  });
});
