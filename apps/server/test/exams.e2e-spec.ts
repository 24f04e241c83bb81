import {
  type BodyOf,
  expectStatus,
  type QueryOf,
  typedClient,
  type TypedClient,
} from './support/api';
import { eventsOf, startServer, type TestServer } from './support/server';

describe('exams and exam results', () => {
  let server: TestServer;
  let orgId: string;
  let api: TypedClient;
  let courseId: `crs_${string}`;
  let n = 0;

  beforeAll(async () => {
    server = await startServer();
    orgId = (await server.createOrganization()).id;
    api = typedClient(server, (await server.createToken(orgId, ['all'])).token);
    const course = await api.courses.create({ body: { code: 'BIO', title: 'Biology' } });
    courseId = expectStatus(course, 201).body.id;
  });
  afterAll(() => server.close());

  async function enrolledStudent(status: 'pending' | 'active' | 'completed' = 'active') {
    n++;
    const student = await api.students.create({
      body: { student_number: `X-${n}`, first_name: 'Ex', last_name: `Aminee${n}` },
    });
    const id = expectStatus(student, 201).body.id;
    const enrollment = await api.enrollments.create({
      body: {
        student_id: id,
        course_id: courseId,
        status: status === 'pending' ? 'pending' : 'active',
      },
    });
    const enrollmentId = expectStatus(enrollment, 201).body.id;
    if (status === 'completed') await api.enrollments.complete({ params: { id: enrollmentId } });
    return id;
  }

  const exam = async (fields: Partial<BodyOf<TypedClient['exams']['create']>> = {}) =>
    expectStatus(
      await api.exams.create({
        body: {
          course_id: courseId,
          title: 'Midterm',
          max_score: 100,
          held_on: '2026-03-01',
          ...fields,
        },
      }),
      201,
    ).body;
  const result = (body: BodyOf<TypedClient['examResults']['create']>) =>
    api.examResults.create({ body });

  it('creates, updates and deletes an exam with its events', async () => {
    const created = await exam({ title: 'Quiz 1', max_score: 20 });
    expect(created).toMatchObject({
      object: 'exam',
      course_id: courseId,
      title: 'Quiz 1',
      max_score: 20,
      held_on: '2026-03-01',
    });
    const updated = await api.exams.update({
      params: { id: created.id },
      body: { title: 'Quiz 1 (retake)', held_on: null },
    });
    expect(expectStatus(updated, 200).body).toMatchObject({
      title: 'Quiz 1 (retake)',
      held_on: null,
    });
    const deleted = await api.exams.delete({ params: { id: created.id } });
    expect(expectStatus(deleted, 200).body).toEqual({
      id: created.id,
      object: 'exam',
      deleted: true,
    });
    expect((await api.exams.retrieve({ params: { id: created.id } })).status).toBe(404);
    const types = (await eventsOf(server, orgId))
      .filter((e) => e.data.id === created.id)
      .map((e) => e.type);
    expect(types).toEqual(['exam.created', 'exam.updated', 'exam.deleted']);
  });

  it('records a draft result, publishes it, and a correction of a published result is an update', async () => {
    const e = await exam();
    const studentId = await enrolledStudent();
    const created = expectStatus(
      await result({ exam_id: e.id, student_id: studentId, score: 71.5, grade: 'C' }),
      201,
    );
    expect(created.body).toMatchObject({
      object: 'exam_result',
      score: 71.5,
      grade: 'C',
      status: 'draft',
      published_at: null,
    });
    const publish = () => api.examResults.publish({ params: { id: created.body.id } });
    expect(expectStatus(await publish(), 200).body).toMatchObject({
      status: 'published',
      published_at: expect.any(String),
    });
    const again = expectStatus(await publish(), 409);
    expect(again.body.code).toBe('invalid_state_transition');
    expect(again.body.detail).toContain("from 'published' to 'published'");
    const corrected = expectStatus(
      await api.examResults.update({
        params: { id: created.body.id },
        body: { score: 74, grade: 'C+' },
      }),
      200,
    );
    expect(corrected.body).toMatchObject({ score: 74, grade: 'C+', status: 'published' });
    const events = (await eventsOf(server, orgId)).filter((ev) => ev.data.id === created.body.id);
    expect(events.map((ev) => ev.type)).toEqual([
      'exam_result.created',
      'exam_result.published',
      'exam_result.updated',
    ]);
    expect(events[2]!.data).toEqual(corrected.body);
  });

  it('keeps one result per student per exam, scores within 0..max_score', async () => {
    const e = await exam({ max_score: 50 });
    const studentId = await enrolledStudent('completed');
    expectStatus(await result({ exam_id: e.id, student_id: studentId, score: 50 }), 201);
    const dup = expectStatus(
      await result({ exam_id: e.id, student_id: studentId, score: 10 }),
      409,
    );
    expect(dup.body.errors?.[0]).toMatchObject({ path: 'body.student_id', code: 'already_exists' });
    const other = await enrolledStudent();
    const over = expectStatus(await result({ exam_id: e.id, student_id: other, score: 50.5 }), 400);
    expect(over.body.errors?.[0]?.path).toBe('body.score');
    const negative = await result({ exam_id: e.id, student_id: other, score: -1 });
    expect(negative.status).toBe(400);
    // max_score cannot drop below a recorded score
    const shrink = expectStatus(
      await api.exams.update({ params: { id: e.id }, body: { max_score: 40 } }),
      409,
    );
    expect(shrink.body.detail).toContain('50');
  });

  it('requires an active or completed enrollment in the course', async () => {
    const e = await exam();
    const pending = await enrolledStudent('pending');
    const res = expectStatus(await result({ exam_id: e.id, student_id: pending, score: 10 }), 409);
    expect(res.body.detail).toMatch(/no active or completed enrollment/);
  });

  it('refuses to delete an exam that has results', async () => {
    const e = await exam();
    expectStatus(
      await result({ exam_id: e.id, student_id: await enrolledStudent(), score: 1 }),
      201,
    );
    const res = await api.exams.delete({ params: { id: e.id } });
    expect(res.status).toBe(409);
    expect((await api.exams.retrieve({ params: { id: e.id } })).status).toBe(200);
  });

  it('lists exams and results with their filters', async () => {
    const course2 = expectStatus(
      await api.courses.create({ body: { code: 'CHEM', title: 'Chemistry' } }),
      201,
    ).body.id;
    const chem = await exam({
      course_id: course2,
      title: 'Lab practical',
      max_score: 10,
      held_on: '2026-06-15',
    });
    const exams = async (query: QueryOf<TypedClient['exams']['list']>) =>
      expectStatus(await api.exams.list({ query }), 200).body.data.map((x) => x.id);
    expect(await exams({ course_id: course2 })).toEqual([chem.id]);
    expect(await exams({ 'held_on[gte]': '2026-06-01' })).toEqual([chem.id]);
    expect(await exams({ q: 'practical' })).toEqual([chem.id]);

    const e = await exam();
    const s1 = await enrolledStudent();
    const s2 = await enrolledStudent();
    const r1 = expectStatus(await result({ exam_id: e.id, student_id: s1, score: 90 }), 201).body;
    const r2 = expectStatus(await result({ exam_id: e.id, student_id: s2, score: 60 }), 201).body;
    await api.examResults.publish({ params: { id: r2.id } });
    const results = async (query: QueryOf<TypedClient['examResults']['list']>) =>
      expectStatus(await api.examResults.list({ query }), 200).body.data.map((x) => x.id);
    expect(await results({ exam_id: e.id, sort: '-score' })).toEqual([r1.id, r2.id]);
    expect(await results({ exam_id: e.id, status: 'published' })).toEqual([r2.id]);
    expect(await results({ student_id: s1 })).toEqual([r1.id]);
    expect(await results({ exam_id: e.id, 'published_at[gte]': '2000-01-01T00:00:00Z' })).toEqual([
      r2.id,
    ]);
  });
});
