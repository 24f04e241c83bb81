import type { Problem } from '@platform/contract';
import { type BatchResult, batchCaller, outcomeOf as outcome } from './support/batch';
import { eventsOf, rawCall, rawClient, startServer, type TestServer } from './support/server';

type Row = { id: string; [field: string]: unknown };

describe('batch upserts of exams and exam results (create-only references)', () => {
  let server: TestServer;
  let orgId: string;
  let token: string;
  let raw: ReturnType<typeof rawClient>;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    server = await startServer();
    orgId = (await server.createOrganization()).id;
    ({ token } = await server.createToken(orgId, ['all']));
    raw = rawClient(server, token);
    for (const code of ['MATH', 'ART']) {
      const course = await raw.post<Row>('/v1/courses', {
        code,
        title: code,
        external_id: `class-${code}`,
      });
      expect(course.status).toBe(201);
      ids[code] = course.body.id;
    }
    // S-1 and S-2 take MATH; S-3 is only pending in it.
    for (const [key, status] of [
      ['S-1', 'active'],
      ['S-2', 'active'],
      ['S-3', 'pending'],
    ] as const) {
      const body = { student_number: key, first_name: 'Ada', last_name: key, external_id: key };
      const created = await raw.post<Row>('/v1/students', body);
      expect(created.status).toBe(201);
      ids[key] = created.body.id;
      const enrolled = await raw.post('/v1/enrollments', {
        student_id: `ext:${key}`,
        course_id: 'ext:class-MATH',
        status,
      });
      expect(enrolled.status).toBe(201);
    }
  });
  afterAll(() => server.close());

  const batch = (path: string, items: unknown[]) => batchCaller(server, token)(path, items);

  it('exams: created under a course named by ext:, updated, and never moved to another course', async () => {
    const exam = (key: string, extra: object = {}) => ({
      external_id: key,
      course_id: 'ext:class-MATH',
      title: `Exam ${key}`,
      max_score: 100,
      ...extra,
    });
    const first = await batch('/v1/exams/batch', [
      exam('E-1'),
      exam('E-2', { course_id: ids.ART }),
      exam('E-3', { course_id: 'ext:no-such-class' }),
      { external_id: 'E-4', title: 'No course' },
    ]);
    expect(first.status).toBe(200);
    expect(outcome(first)).toEqual([
      ['created', null, null],
      ['created', null, null],
      ['failed', 'validation_error', 'body.items.2.course_id'],
      ['failed', 'validation_error', 'body.items.3.course_id'],
    ]);
    const e1 = (await raw.get<Row>('/v1/exams/ext:E-1')).body;
    expect(e1).toMatchObject({ course_id: ids.MATH, title: 'Exam E-1', max_score: 100 });

    const before = (await eventsOf(server, orgId)).length;
    const second = await batch('/v1/exams/batch', [
      // The same course, by id or ext:, is no change; another course is refused.
      exam('E-1'),
      { external_id: 'E-1', course_id: ids.MATH, title: 'Midterm' },
      { external_id: 'E-2', course_id: 'ext:class-MATH', title: 'Moved?' },
      { external_id: 'E-2', title: 'Kept' },
    ]);
    expect(second.status).toBe(400);
    expect((second.body as Problem & { errors: { path: string }[] }).errors[0]!.path).toBe(
      'body.items.1.external_id',
    );
    const third = await batch('/v1/exams/batch', [
      exam('E-1', { title: 'Midterm' }),
      { external_id: 'E-2', course_id: 'ext:class-MATH', title: 'Moved?' },
    ]);
    expect(outcome(third)).toEqual([
      ['updated', null, null],
      ['failed', 'conflict', 'body.items.1.course_id'],
    ]);
    expect(third.body.data[1]!.error!.detail).toContain(ids.ART);
    expect((await raw.get<Row>('/v1/exams/ext:E-2')).body).toMatchObject({
      course_id: ids.ART,
      title: 'Exam E-2',
    });
    const events = (await eventsOf(server, orgId)).slice(before);
    expect(events.map((e) => [e.type, e.data.title])).toEqual([['exam.updated', 'Midterm']]);
  });

  it('results: the create rules per item, one result per student and exam within the batch too', async () => {
    const result = (key: string, student: string, score: number, extra: object = {}) => ({
      external_id: key,
      exam_id: 'ext:E-1',
      student_id: `ext:${student}`,
      score,
      ...extra,
    });
    const first = await batch('/v1/exam_results/batch', [
      result('R-1', 'S-1', 80, { grade: 'B' }),
      result('R-2', 'S-1', 90), // S-1's result for E-1 is R-1's, made just before
      result('R-3', 'S-3', 70), // only pending in the course
      result('R-4', 'S-2', 101), // above max_score
      result('R-5', 'S-2', 100),
      result('R-6', 'S-2', 50, { exam_id: 'ext:E-2' }), // S-2 is not enrolled in ART
    ]);
    expect(first.status).toBe(200);
    expect(outcome(first)).toEqual([
      ['created', null, null],
      ['failed', 'conflict', 'body.items.1.student_id'],
      ['failed', 'conflict', null],
      ['failed', 'validation_error', 'body.items.3.score'],
      ['created', null, null],
      ['failed', 'conflict', null],
    ]);
    expect(first.body.counts).toEqual({ created: 2, updated: 0, unchanged: 0, failed: 4 });
    const r1 = (await raw.get<Row>('/v1/exam_results/ext:R-1')).body;
    expect(r1).toMatchObject({ student_id: ids['S-1'], score: 80, grade: 'B', status: 'draft' });

    // A result already on record is refused to a new external id, as its create would be.
    const again = await batch('/v1/exam_results/batch', [result('R-7', 'S-1', 60)]);
    expect(outcome(again)).toEqual([['failed', 'conflict', 'body.items.0.student_id']]);

    const corrected = await batch('/v1/exam_results/batch', [
      result('R-1', 'S-1', 85),
      { external_id: 'R-5', student_id: 'ext:S-1', score: 10 },
      { external_id: 'R-9', student_id: 'ext:S-2', score: 5 }, // new, without its exam
    ]);
    expect(outcome(corrected)).toEqual([
      ['updated', null, null],
      ['failed', 'conflict', 'body.items.1.student_id'],
      ['failed', 'validation_error', 'body.items.2.exam_id'],
    ]);
    expect((await raw.get<Row>('/v1/exam_results/ext:R-1')).body.score).toBe(85);
    expect((await raw.get<Row>('/v1/exam_results/ext:R-5')).body.score).toBe(100);

    // An update is held to the exam's max_score as a PATCH is.
    const over = await batch('/v1/exam_results/batch', [{ external_id: 'R-5', score: 120 }]);
    expect(outcome(over)).toEqual([['failed', 'validation_error', 'body.items.0.score']]);
  });

  it('concurrent batches recording one student and exam under different keys: one result', async () => {
    const made = await batch('/v1/exams/batch', [
      { external_id: 'E-5', course_id: 'ext:class-MATH', title: 'Final', max_score: 10 },
    ]);
    expect(made.body.counts.created).toBe(1);
    const item = (n: number) => ({
      external_id: `RACE-${n}`,
      exam_id: 'ext:E-5',
      student_id: 'ext:S-2',
      score: n,
    });
    const results = await Promise.all(
      [1, 2, 3, 4].map((n) => batch('/v1/exam_results/batch', [item(n)])),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const statuses = results.map((r) => r.body.data[0]!.status).sort();
    expect(statuses).toEqual(['created', 'failed', 'failed', 'failed']);
    const listed = await raw.get<{ data: Row[] }>(`/v1/exam_results?exam_id=ext:E-5`);
    expect(listed.body.data).toHaveLength(1);
  });

  it('an exam whose max_score would drop below a recorded score fails alone', async () => {
    const res = await batch('/v1/exams/batch', [
      { external_id: 'E-1', max_score: 50 },
      { external_id: 'E-2', max_score: 40 },
    ]);
    expect(outcome(res)).toEqual([
      ['failed', 'conflict', null],
      ['updated', null, null],
    ]);
    expect((await raw.get<Row>('/v1/exams/ext:E-1')).body.max_score).toBe(100);
  });

  it('costs 20 of the rate limit and needs the write scope', async () => {
    const fresh = (await server.createOrganization()).id;
    const writer = (await server.createToken(fresh, ['exam_results:write'])).token;
    const reader = (await server.createToken(fresh, ['exam_results:read'])).token;
    const send = (t: string, path: string) =>
      rawCall<BatchResult>(server, path, {
        token: t,
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        // Both fail alone: a new record without the create body's fields.
        body: JSON.stringify({
          items: [
            { external_id: 'X-1', ...(path.includes('exams') ? { title: 'T' } : { score: 1 }) },
          ],
        }),
      });
    const res = await send(writer, '/v1/exam_results/batch');
    expect(res.status).toBe(200);
    expect(res.body.counts.failed).toBe(1);
    expect(res.headers.get('x-ratelimit-remaining')).toBe('580');
    expect((await send(writer, '/v1/exams/batch')).headers.get('x-ratelimit-remaining')).toBe(
      '560',
    );
    expect((await send(reader, '/v1/exam_results/batch')).status).toBe(403);
    expect((await send(reader, '/v1/exams/batch')).status).toBe(403);
  });
});
