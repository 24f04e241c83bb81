import type { Problem } from '@platform/contract';
import { eventsOf, rawClient, startServer, type TestServer } from './support/server';

type Row = { id: string; external_id: string | null; [field: string]: unknown };
type Page = { data: Row[] };

describe('external ids: records found by the key of the school’s own system', () => {
  let server: TestServer;
  let orgId: string;
  let raw: ReturnType<typeof rawClient>;
  let other: ReturnType<typeof rawClient>;

  beforeAll(async () => {
    server = await startServer();
    orgId = (await server.createOrganization()).id;
    raw = rawClient(server, (await server.createToken(orgId, ['all'])).token);
    const otherOrg = (await server.createOrganization()).id;
    other = rawClient(server, (await server.createToken(otherOrg, ['all'])).token);
  });
  afterAll(() => server.close());

  const student = (n: string, extra: object = {}) => ({
    student_number: `N-${n}`,
    first_name: 'Ada',
    last_name: n,
    ...extra,
  });

  it('is set on create, returned, and addresses the record as ext:<external_id>', async () => {
    const created = await raw.post<Row>('/v1/students', student('1', { external_id: 'SIS-0001' }));
    expect(created.status).toBe(201);
    expect(created.body.external_id).toBe('SIS-0001');
    const plain = await raw.post<Row>('/v1/students', student('2'));
    expect(plain.body.external_id).toBeNull();

    const byExt = await raw.get<Row>('/v1/students/ext:SIS-0001');
    expect(byExt.status).toBe(200);
    expect(byExt.body).toEqual(created.body);
    // Percent-encoded, as the SDKs send it.
    expect((await raw.get<Row>('/v1/students/ext%3ASIS-0001')).body.id).toBe(created.body.id);

    const missing = await raw.get<Problem>('/v1/students/ext:SIS-9999');
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toContain('ext:SIS-9999');
  });

  it('updates and deletes by ext:, with the events naming the record by its id', async () => {
    const created = await raw.post<Row>('/v1/courses', {
      code: 'EXT-1',
      title: 'Algebra',
      external_id: 'class-77',
    });
    expect(created.status).toBe(201);
    const before = (await eventsOf(server, orgId)).length;
    const patched = await raw.patch<Row>('/v1/courses/ext:class-77', { title: 'Algebra II' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id: created.body.id, title: 'Algebra II' });
    // Renamed: the old external id no longer finds it, the new one does.
    const renamed = await raw.patch<Row>('/v1/courses/ext:class-77', { external_id: 'class-78' });
    expect(renamed.body.external_id).toBe('class-78');
    expect((await raw.get('/v1/courses/ext:class-77')).status).toBe(404);
    const deleted = await raw.delete<{ id: string; deleted: boolean }>('/v1/courses/ext:class-78');
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id: created.body.id, object: 'course', deleted: true });
    expect((await raw.get(`/v1/courses/${created.body.id}`)).status).toBe(404);

    const events = (await eventsOf(server, orgId)).slice(before);
    expect(events.map((e) => e.type)).toEqual([
      'course.updated',
      'course.updated',
      'course.deleted',
    ]);
    expect(events[1]!.previous_attributes).toMatchObject({ external_id: 'class-77' });
    expect(events[2]!.data.id).toBe(created.body.id);
  });

  it('is unique per organization (409 naming external_id), not across organizations, and null clears it', async () => {
    const first = await raw.post<Row>('/v1/students', student('3', { external_id: 'DUP-1' }));
    expect(first.status).toBe(201);
    const dup = await raw.post<Problem>('/v1/students', student('4', { external_id: 'DUP-1' }));
    expect(dup.status).toBe(409);
    expect(dup.body.errors).toEqual([
      expect.objectContaining({ path: 'body.external_id', code: 'already_exists' }),
    ]);
    const second = await raw.post<Row>('/v1/students', student('5'));
    const taken = await raw.patch<Problem>(`/v1/students/${second.body.id}`, {
      external_id: 'DUP-1',
    });
    expect(taken.status).toBe(409);
    expect(taken.body.errors?.[0]?.path).toBe('body.external_id');

    // Another organization may use the same key, and cannot reach this one's record by it.
    const theirs = await other.post<Row>('/v1/students', student('3', { external_id: 'DUP-1' }));
    expect(theirs.status).toBe(201);
    expect((await other.get<Row>('/v1/students/ext:DUP-1')).body.id).toBe(theirs.body.id);
    expect((await raw.get<Row>('/v1/students/ext:DUP-1')).body.id).toBe(first.body.id);

    // Cleared, the key is free again; any number of records have none.
    const cleared = await raw.patch<Row>('/v1/students/ext:DUP-1', { external_id: null });
    expect(cleared.body.external_id).toBeNull();
    expect(
      (await raw.patch<Row>(`/v1/students/${second.body.id}`, { external_id: 'DUP-1' })).status,
    ).toBe(200);
  });

  it('two creates racing for one external id: one is created, the other is the 409', async () => {
    const results = await Promise.all(
      ['6', '7', '8', '9'].map((n) =>
        raw.post<Row | Problem>('/v1/students', student(n, { external_id: 'RACE-1' })),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
    for (const r of results.filter((r) => r.status === 409)) {
      expect((r.body as Problem).errors?.[0]?.path).toBe('body.external_id');
    }
    const listed = await raw.get<Page>('/v1/students?external_id=RACE-1');
    expect(listed.body.data).toHaveLength(1);
  });

  it('filters lists by one or several external ids', async () => {
    for (const key of ['F-1', 'F-2', 'F-3']) {
      await raw.post('/v1/courses', { code: key, title: 'Filtered', external_id: `course-${key}` });
    }
    const one = await raw.get<Page>('/v1/courses?external_id=course-F-2');
    expect(one.body.data.map((c) => c.code)).toEqual(['F-2']);
    const two = await raw.get<Page>('/v1/courses?external_id=course-F-1,course-F-3&sort=code');
    expect(two.body.data.map((c) => c.code)).toEqual(['F-1', 'F-3']);
  });

  it.each([
    ['empty', ''],
    ['a comma', 'a,b'],
    ['a slash', 'a/b'],
    ['a space', 'a b'],
    ['129 characters', 'x'.repeat(129)],
  ])('refuses an external id with %s (400 naming body.external_id)', async (_, value) => {
    const res = await raw.post<Problem>('/v1/students', student('bad', { external_id: value }));
    expect(res.status).toBe(400);
    expect(res.body.errors?.map((e) => e.path)).toEqual(['body.external_id']);
  });

  it('names a student or course by ext: in the reference fields of a body', async () => {
    const s = await raw.post<Row>('/v1/students', student('ref', { external_id: 'SIS-REF' }));
    const c = await raw.post<Row>('/v1/courses', {
      code: 'REF-1',
      title: 'Referenced',
      external_id: 'class-ref',
      capacity: 1,
    });
    const enrollment = await raw.post<Row>('/v1/enrollments', {
      student_id: 'ext:SIS-REF',
      course_id: 'ext:class-ref',
    });
    expect(enrollment.status).toBe(201);
    expect(enrollment.body).toMatchObject({ student_id: s.body.id, course_id: c.body.id });
    // The course's seat rule still holds for a course named by ext: (capacity 1, now full).
    const other = await raw.post<Row>('/v1/students', student('ref-2'));
    const full = await raw.post<Problem>('/v1/enrollments', {
      student_id: other.body.id,
      course_id: 'ext:class-ref',
    });
    expect(full.status).toBe(409);

    const payment = await raw.post<Row>('/v1/payments', {
      student_id: 'ext:SIS-REF',
      amount: 1000,
      currency: 'EUR',
    });
    expect(payment.status).toBe(201);
    expect(payment.body.student_id).toBe(s.body.id);
    const exam = await raw.post<Row>('/v1/exams', {
      course_id: 'ext:class-ref',
      title: 'Midterm',
      max_score: 100,
    });
    expect(exam.status).toBe(201);
    expect(exam.body.course_id).toBe(c.body.id);

    const theirs = await theirStudent('SIS-THEIRS');
    for (const [body, field] of [
      [{ student_id: 'ext:SIS-NONE', course_id: c.body.id }, 'student_id'],
      [{ student_id: `ext:${theirs}`, course_id: c.body.id }, 'student_id'],
      [{ student_id: s.body.id, course_id: 'ext:class-none' }, 'course_id'],
      [{ student_id: 'ext:bad/key', course_id: c.body.id }, 'student_id'],
    ] as const) {
      const res = await raw.post<Problem>('/v1/enrollments', body);
      expect(res.status).toBe(400);
      expect(res.body.errors?.map((e) => e.path)).toEqual([`body.${field}`]);
    }
  });

  /** A student of the other organization with `key` as its external id. */
  async function theirStudent(key: string): Promise<string> {
    const res = await other.post<Row>('/v1/students', student(key, { external_id: key }));
    expect(res.status).toBe(201);
    return key;
  }

  /** An enrollment, payment, exam and result with external ids `<kind>-<tag>`, named by ext:. */
  async function recordsWithKeys(tag: string) {
    await raw.post<Row>('/v1/students', student(tag, { external_id: `SIS-${tag}` }));
    await raw.post<Row>('/v1/courses', { code: tag, title: tag, external_id: `class-${tag}` });
    const enrollment = await raw.post<Row>('/v1/enrollments', {
      student_id: `ext:SIS-${tag}`,
      course_id: `ext:class-${tag}`,
      status: 'active',
      external_id: `enr-${tag}`,
    });
    // Each reference field takes the ext: of the record it names.
    const payment = await raw.post<Row>('/v1/payments', {
      student_id: `ext:SIS-${tag}`,
      enrollment_id: `ext:enr-${tag}`,
      amount: 2500,
      currency: 'EUR',
      external_id: `inv-${tag}`,
    });
    const exam = await raw.post<Row>('/v1/exams', {
      course_id: `ext:class-${tag}`,
      title: 'Final',
      max_score: 100,
      external_id: `exam-${tag}`,
    });
    const result = await raw.post<Row>('/v1/exam_results', {
      exam_id: `ext:exam-${tag}`,
      student_id: `ext:SIS-${tag}`,
      score: 80,
      external_id: `res-${tag}`,
    });
    for (const res of [enrollment, payment, exam, result]) expect(res.status).toBe(201);
    expect(payment.body.enrollment_id).toBe(enrollment.body.id);
    expect(result.body.exam_id).toBe(exam.body.id);
    return { enrollments: enrollment, payments: payment, exams: exam, exam_results: result };
  }
  const KEYS = { enrollments: 'enr', payments: 'inv', exams: 'exam', exam_results: 'res' } as const;

  it('enrollments, payments, exams and exam results: set, found by ext:, filtered, unique', async () => {
    const made = await recordsWithKeys('all');
    for (const [collection, created] of Object.entries(made)) {
      const key = `${KEYS[collection as keyof typeof KEYS]}-all`;
      expect(created.body.external_id).toBe(key);
      expect((await raw.get<Row>(`/v1/${collection}/ext:${key}`)).body).toEqual(created.body);
      const listed = await raw.get<Page>(`/v1/${collection}?external_id=${key}`);
      expect(listed.body.data.map((r) => r.id)).toEqual([created.body.id]);
      expect((await other.get<Problem>(`/v1/${collection}/ext:${key}`)).status).toBe(404);
    }

    // Unique per organization: the 409 names external_id, also where the resource has a
    // conflict of its own (one result per student per exam).
    const second = await raw.post<Row>('/v1/students', student('all-2'));
    await raw.post('/v1/enrollments', {
      student_id: second.body.id,
      course_id: 'ext:class-all',
      status: 'active',
    });
    const dupResult = await raw.post<Problem>('/v1/exam_results', {
      exam_id: made.exams.body.id,
      student_id: second.body.id,
      score: 70,
      external_id: 'res-all',
    });
    expect(dupResult.status).toBe(409);
    expect(dupResult.body.errors?.[0]?.path).toBe('body.external_id');
    const dupPayment = await raw.post<Problem>('/v1/payments', {
      student_id: second.body.id,
      amount: 100,
      currency: 'EUR',
      external_id: 'inv-all',
    });
    expect(dupPayment.status).toBe(409);
    expect(dupPayment.body.errors?.[0]?.path).toBe('body.external_id');
  });

  it('enrollments, exams and exam results: renamed through their update', async () => {
    await recordsWithKeys('ren');
    for (const collection of ['enrollments', 'exams', 'exam_results'] as const) {
      const key = `${KEYS[collection]}-ren`;
      const renamed = await raw.patch<Row>(`/v1/${collection}/ext:${key}`, {
        external_id: `${key}-2`,
      });
      expect(renamed.status).toBe(200);
      expect((await raw.get<Row>(`/v1/${collection}/ext:${key}-2`)).body.id).toBe(renamed.body.id);
      expect((await raw.get<Problem>(`/v1/${collection}/ext:${key}`)).status).toBe(404);
    }
  });

  it('reference filters take ext: too, alone or mixed with ids, only in the caller’s organization', async () => {
    const a = await raw.post<Row>('/v1/students', student('flt-a', { external_id: 'SIS-FLT-A' }));
    const b = await raw.post<Row>('/v1/students', student('flt-b', { external_id: 'SIS-FLT-B' }));
    const c = await raw.post<Row>('/v1/students', student('flt-c'));
    await raw.post('/v1/courses', { code: 'FLT-1', title: 'Filters', external_id: 'class-flt' });
    const enrolled: Record<string, string> = {};
    for (const s of [a, b, c]) {
      const res = await raw.post<Row>('/v1/enrollments', {
        student_id: s.body.id,
        course_id: 'ext:class-flt',
      });
      enrolled[s.body.id] = res.body.id;
    }
    const ids = async (query: string) => {
      const res = await raw.get<Page>(`/v1/enrollments?${query}`);
      expect(res.status).toBe(200);
      return res.body.data.map((r) => r.id).sort();
    };
    expect(await ids('student_id=ext:SIS-FLT-A')).toEqual([enrolled[a.body.id]]);
    expect(await ids(`student_id=ext:SIS-FLT-A,${c.body.id}`)).toEqual(
      [enrolled[a.body.id], enrolled[c.body.id]].sort(),
    );
    expect(await ids('course_id=ext:class-flt&student_id=ext:SIS-FLT-B')).toEqual([
      enrolled[b.body.id],
    ]);
    expect(await ids('course_id=ext:class-flt')).toHaveLength(3);
    // An unknown key matches nothing. Another organization with the same keys sees only its
    // own records by them, and this one only its own.
    expect(await ids('student_id=ext:SIS-NOBODY')).toEqual([]);
    await theirStudent('SIS-FLT-A');
    await other.post('/v1/courses', { code: 'FLT-1', title: 'Theirs', external_id: 'class-flt' });
    const their = await other.post<Row>('/v1/enrollments', {
      student_id: 'ext:SIS-FLT-A',
      course_id: 'ext:class-flt',
    });
    expect(their.status).toBe(201);
    const theirs = await other.get<Page>('/v1/enrollments?student_id=ext:SIS-FLT-A');
    expect(theirs.body.data.map((r) => r.id)).toEqual([their.body.id]);
    expect(await ids('student_id=ext:SIS-FLT-A')).toEqual([enrolled[a.body.id]]);
    // A malformed key is the 400 naming the filter.
    const bad = await raw.get<Problem>('/v1/enrollments?student_id=ext:bad/key');
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toContain('ext:<external_id>');
  });

  it('an ext: id on a resource without external ids is not found, never a 500', async () => {
    const res = await raw.get<Problem>('/v1/webhook_endpoints/ext:SIS-0001');
    expect(res.status).toBe(404);
  });
});
