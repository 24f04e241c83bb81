import { client, eventsOf, startServer, type TestServer } from './support/server';

describe('exams and exam results', () => {
  let server: TestServer;
  let orgId: string;
  let api: ReturnType<typeof client>;
  let courseId: string;
  let n = 0;

  beforeAll(async () => {
    server = await startServer();
    orgId = (await server.createOrganization()).id;
    api = client(server, (await server.createToken(orgId, ['all'])).token);
    courseId = (await api.post('/v1/courses', { code: 'BIO', title: 'Biology' })).body.id;
  });
  afterAll(() => server.close());

  async function enrolledStudent(status: 'pending' | 'active' | 'completed' = 'active') {
    n++;
    const id = (
      await api.post('/v1/students', {
        student_number: `X-${n}`,
        first_name: 'Ex',
        last_name: `Aminee${n}`,
      })
    ).body.id;
    const enrollment = (
      await api.post('/v1/enrollments', {
        student_id: id,
        course_id: courseId,
        status: status === 'pending' ? 'pending' : 'active',
      })
    ).body;
    if (status === 'completed') await api.post(`/v1/enrollments/${enrollment.id}/complete`);
    return id as string;
  }

  const exam = async (fields: Record<string, unknown> = {}) =>
    (
      await api.post('/v1/exams', {
        course_id: courseId,
        title: 'Midterm',
        max_score: 100,
        held_on: '2026-03-01',
        ...fields,
      })
    ).body;

  it('creates, updates and deletes an exam with its events', async () => {
    const created = await exam({ title: 'Quiz 1', max_score: 20 });
    expect(created).toMatchObject({
      object: 'exam',
      course_id: courseId,
      title: 'Quiz 1',
      max_score: 20,
      held_on: '2026-03-01',
    });
    const updated = await api.patch(`/v1/exams/${created.id}`, {
      title: 'Quiz 1 (retake)',
      held_on: null,
    });
    expect(updated.body).toMatchObject({ title: 'Quiz 1 (retake)', held_on: null });
    const deleted = await api.delete(`/v1/exams/${created.id}`);
    expect(deleted.body).toEqual({ id: created.id, object: 'exam', deleted: true });
    expect((await api.get(`/v1/exams/${created.id}`)).status).toBe(404);
    const types = (await eventsOf(server, orgId))
      .filter((e) => e.data.id === created.id)
      .map((e) => e.type);
    expect(types).toEqual(['exam.created', 'exam.updated', 'exam.deleted']);
  });

  it('records a draft result, publishes it, and a correction of a published result is an update', async () => {
    const e = await exam();
    const studentId = await enrolledStudent();
    const created = await api.post('/v1/exam_results', {
      exam_id: e.id,
      student_id: studentId,
      score: 71.5,
      grade: 'C',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      object: 'exam_result',
      score: 71.5,
      grade: 'C',
      status: 'draft',
      published_at: null,
    });
    const published = await api.post(`/v1/exam_results/${created.body.id}/publish`);
    expect(published.body).toMatchObject({ status: 'published', published_at: expect.any(String) });
    const again = await api.post(`/v1/exam_results/${created.body.id}/publish`);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('invalid_state_transition');
    expect(again.body.detail).toContain("from 'published' to 'published'");
    const corrected = await api.patch(`/v1/exam_results/${created.body.id}`, {
      score: 74,
      grade: 'C+',
    });
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
    expect(
      (await api.post('/v1/exam_results', { exam_id: e.id, student_id: studentId, score: 50 }))
        .status,
    ).toBe(201);
    const dup = await api.post('/v1/exam_results', {
      exam_id: e.id,
      student_id: studentId,
      score: 10,
    });
    expect(dup.status).toBe(409);
    expect(dup.body.errors[0]).toMatchObject({ path: 'body.student_id', code: 'already_exists' });
    const other = await enrolledStudent();
    const over = await api.post('/v1/exam_results', {
      exam_id: e.id,
      student_id: other,
      score: 50.5,
    });
    expect(over.status).toBe(400);
    expect(over.body.errors[0].path).toBe('body.score');
    const negative = await api.post('/v1/exam_results', {
      exam_id: e.id,
      student_id: other,
      score: -1,
    });
    expect(negative.status).toBe(400);
    // max_score cannot drop below a recorded score
    const shrink = await api.patch(`/v1/exams/${e.id}`, { max_score: 40 });
    expect(shrink.status).toBe(409);
    expect(shrink.body.detail).toContain('50');
  });

  it('requires an active or completed enrollment in the course', async () => {
    const e = await exam();
    const pending = await enrolledStudent('pending');
    const res = await api.post('/v1/exam_results', {
      exam_id: e.id,
      student_id: pending,
      score: 10,
    });
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/no active or completed enrollment/);
  });

  it('refuses to delete an exam that has results', async () => {
    const e = await exam();
    await api.post('/v1/exam_results', {
      exam_id: e.id,
      student_id: await enrolledStudent(),
      score: 1,
    });
    const res = await api.delete(`/v1/exams/${e.id}`);
    expect(res.status).toBe(409);
    expect((await api.get(`/v1/exams/${e.id}`)).status).toBe(200);
  });

  it('lists exams and results with their filters', async () => {
    const course2 = (await api.post('/v1/courses', { code: 'CHEM', title: 'Chemistry' })).body.id;
    const chem = (
      await api.post('/v1/exams', {
        course_id: course2,
        title: 'Lab practical',
        max_score: 10,
        held_on: '2026-06-15',
      })
    ).body;
    const ids = async (path: string) =>
      (await api.get(path)).body.data.map((x: { id: string }) => x.id);
    expect(await ids(`/v1/exams?course_id=${course2}`)).toEqual([chem.id]);
    expect(await ids('/v1/exams?held_on[gte]=2026-06-01')).toEqual([chem.id]);
    expect(await ids('/v1/exams?q=practical')).toEqual([chem.id]);

    const e = await exam();
    const s1 = await enrolledStudent();
    const s2 = await enrolledStudent();
    const r1 = (await api.post('/v1/exam_results', { exam_id: e.id, student_id: s1, score: 90 }))
      .body;
    const r2 = (await api.post('/v1/exam_results', { exam_id: e.id, student_id: s2, score: 60 }))
      .body;
    await api.post(`/v1/exam_results/${r2.id}/publish`);
    expect(await ids(`/v1/exam_results?exam_id=${e.id}&sort=-score`)).toEqual([r1.id, r2.id]);
    expect(await ids(`/v1/exam_results?exam_id=${e.id}&status=published`)).toEqual([r2.id]);
    expect(await ids(`/v1/exam_results?student_id=${s1}`)).toEqual([r1.id]);
    expect(
      await ids(`/v1/exam_results?exam_id=${e.id}&published_at[gte]=2000-01-01T00:00:00Z`),
    ).toEqual([r2.id]);
  });
});
