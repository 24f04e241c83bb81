import { contract, STUDENT_DELETE_REFUSAL } from '@platform/contract';
import { expectStatus, type QueryOf, typedClient, type TypedClient } from './support/api';
import { eventsOf, problemOf, rawClient, startServer, type TestServer } from './support/server';

describe('students and courses: create, retrieve, update, delete', () => {
  let server: TestServer;
  let orgId: string;
  let api: TypedClient;
  /** For what the contract's types refuse: malformed bodies and queries, the /api alias. */
  let raw: ReturnType<typeof rawClient>;

  beforeAll(async () => {
    server = await startServer();
    orgId = (await server.createOrganization()).id;
    const { token } = await server.createToken(orgId, ['all']);
    api = typedClient(server, token);
    raw = rawClient(server, token);
  });
  afterAll(() => server.close());

  describe('students', () => {
    it('creates with defaults, retrieves, and reads back what was written', async () => {
      const res = expectStatus(
        await api.students.create({
          body: {
            student_number: 'S-100',
            first_name: 'Zoë',
            last_name: "O'Neil",
            email: 'zoe@example.org',
            date_of_birth: '2012-02-29',
            grade_level: 8,
          },
        }),
        201,
      );
      expect(res.body).toMatchObject({
        object: 'student',
        status: 'active',
        preferred_name: null,
        grade_level: 8,
      });
      expect(res.body.id).toMatch(/^stu_/);
      expect(res.body.created_at).toBe(res.body.updated_at);
      expect((await api.students.retrieve({ params: { id: res.body.id } })).body).toEqual(res.body);
      expect((await raw.get(`/api/v1/students/${res.body.id}`)).body).toEqual(res.body);
    });

    it.each([
      [{ first_name: 'A', last_name: 'B' }, 'body.student_number'],
      [{ student_number: '', first_name: 'A', last_name: 'B' }, 'body.student_number'],
      [
        { student_number: 'x', first_name: 'A', last_name: 'B', email: 'not-an-email' },
        'body.email',
      ],
      [
        { student_number: 'x', first_name: 'A', last_name: 'B', date_of_birth: '2013-02-29' },
        'body.date_of_birth',
      ],
      [
        { student_number: 'x', first_name: 'A', last_name: 'B', grade_level: 13 },
        'body.grade_level',
      ],
      [{ student_number: 'x', first_name: 'A', last_name: 'B', status: 'expelled' }, 'body.status'],
      [{ student_number: 'x', first_name: 'A', last_name: 'B', id: 'stu_x' }, 'body.id'],
      [{ student_number: 'x', first_name: 'A'.repeat(101), last_name: 'B' }, 'body.first_name'],
    ])('refuses %j, naming %s', async (body, path) => {
      const res = await raw.post('/v1/students', body);
      expect(res.status).toBe(400);
      expect(problemOf(res).errors?.map((e) => e.path)).toContain(path);
    });

    it('keeps student numbers unique per organization (409 naming the field), not across organizations', async () => {
      await api.students.create({
        body: { student_number: 'DUP', first_name: 'A', last_name: 'B' },
      });
      const dup = expectStatus(
        await api.students.create({
          body: { student_number: 'DUP', first_name: 'C', last_name: 'D' },
        }),
        409,
      );
      expect(dup.body.errors).toEqual([
        expect.objectContaining({ path: 'body.student_number', code: 'already_exists' }),
      ]);
      const other = await server.createOrganization();
      const otherApi = typedClient(
        server,
        (await server.createToken(other.id, ['students:write'])).token,
      );
      expectStatus(
        await otherApi.students.create({
          body: { student_number: 'DUP', first_name: 'E', last_name: 'F' },
        }),
        201,
      );
      // renaming onto a taken number is refused the same way
      const mine = expectStatus(
        await api.students.create({
          body: { student_number: 'FREE', first_name: 'G', last_name: 'H' },
        }),
        201,
      );
      const rename = await api.students.update({
        params: { id: mine.body.id },
        body: { student_number: 'DUP' },
      });
      expect(rename.status).toBe(409);
      // renaming to its own number is no conflict
      const same = await api.students.update({
        params: { id: mine.body.id },
        body: { student_number: 'FREE', first_name: 'Gee' },
      });
      expect(same.status).toBe(200);
    });

    it('lets one of several concurrent creates with the same number win; the others get the same 409', async () => {
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          api.students.create({
            body: { student_number: 'RACE-1', first_name: `R${i}`, last_name: 'Race' },
          }),
        ),
      );
      expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
      for (const lost of results.filter((r) => r.status === 409)) {
        expect(lost.body).toMatchObject({
          code: 'conflict',
          detail: "A student with student_number 'RACE-1' already exists",
          errors: [{ path: 'body.student_number', code: 'already_exists' }],
        });
      }
      const listed = expectStatus(await api.students.list({ query: { q: 'RACE-1' } }), 200);
      expect(listed.body.data.map((s) => s.student_number)).toEqual(['RACE-1']);
    });

    it('updates only the fields sent, clears with null, and records one event per real change', async () => {
      const created = expectStatus(
        await api.students.create({
          body: { student_number: 'U-1', first_name: 'Una', last_name: 'Update', email: 'u@x.org' },
        }),
        201,
      ).body;
      const before = (await eventsOf(server, orgId)).length;
      const res = expectStatus(
        await api.students.update({
          params: { id: created.id },
          body: { last_name: 'Updated', email: null },
        }),
        200,
      );
      expect(res.body).toEqual({
        ...created,
        last_name: 'Updated',
        email: null,
        updated_at: res.body.updated_at,
      });
      expect(Date.parse(res.body.updated_at)).toBeGreaterThanOrEqual(
        Date.parse(created.updated_at),
      );
      const unchanged = await api.students.update({
        params: { id: created.id },
        body: { last_name: 'Updated' },
      });
      expect(unchanged.body).toEqual(res.body);
      expect((await api.students.update({ params: { id: created.id }, body: {} })).body).toEqual(
        res.body,
      );
      const events = await eventsOf(server, orgId);
      expect(events.slice(before).map((e) => e.type)).toEqual(['student.updated']);
    });

    it('deletes an unreferenced student and refuses one with enrollments', async () => {
      const lone = expectStatus(
        await api.students.create({
          body: { student_number: 'D-1', first_name: 'Del', last_name: 'Ete' },
        }),
        201,
      ).body;
      const res = await api.students.delete({ params: { id: lone.id } });
      expect(res.body).toEqual({ id: lone.id, object: 'student', deleted: true });
      expect((await api.students.retrieve({ params: { id: lone.id } })).status).toBe(404);
      expect((await api.students.delete({ params: { id: lone.id } })).status).toBe(404);

      const busy = expectStatus(
        await api.students.create({
          body: { student_number: 'D-2', first_name: 'Busy', last_name: 'Bee' },
        }),
        201,
      ).body;
      const course = expectStatus(
        await api.courses.create({ body: { code: 'DEL', title: 'Del' } }),
        201,
      ).body;
      await api.enrollments.create({ body: { student_id: busy.id, course_id: course.id } });
      const refused = expectStatus(await api.students.delete({ params: { id: busy.id } }), 409);
      // The refusal names what refers to a student (the registry's references, the enrollment
      // made here among them) and says what to do instead, as the contract declares it.
      const { referencedBy, instead } = STUDENT_DELETE_REFUSAL;
      expect(referencedBy.split(/, | or /)).toContain('enrollments');
      expect(refused.body.detail).toBe(
        `Student ${busy.id} is still referred to by ${referencedBy}; ${instead}`,
      );
      // The reference documents the same refusal, from the same declaration.
      expect(contract.students.delete.description).toBe(
        `Refused with 409 while ${referencedBy} refer to it: ${instead}.`,
      );
      expect((await api.students.retrieve({ params: { id: busy.id } })).status).toBe(200);
    });

    it('answers 404 for an unknown or malformed id', async () => {
      for (const id of [
        'stu_01M81AW4437YFWV4VE6WMBH8MY',
        'nope',
        'crs_01M81AW4437YFWV4VE6WMBH8MY',
      ]) {
        const res = expectStatus(await api.students.retrieve({ params: { id } }), 404);
        expect(res.body.detail).toContain(id);
      }
    });
  });

  describe('courses', () => {
    it('creates, updates and deletes, with code unique per organization', async () => {
      const created = expectStatus(
        await api.courses.create({
          body: {
            code: 'MATH-101',
            title: 'Algebra',
            description: 'Linear equations',
            start_date: '2026-09-01',
            end_date: '2027-06-30',
            capacity: 30,
          },
        }),
        201,
      );
      expect(created.body).toMatchObject({
        object: 'course',
        status: 'active',
        capacity: 30,
        start_date: '2026-09-01',
      });
      const dup = expectStatus(
        await api.courses.create({ body: { code: 'MATH-101', title: 'Again' } }),
        409,
      );
      expect(dup.body.errors?.[0]?.path).toBe('body.code');
      const archived = await api.courses.update({
        params: { id: created.body.id },
        body: { status: 'archived', capacity: null },
      });
      expect(archived.body).toMatchObject({ status: 'archived', capacity: null });
      const deleted = await api.courses.delete({ params: { id: created.body.id } });
      expect(deleted.body).toEqual({ id: created.body.id, object: 'course', deleted: true });
    });

    it('refuses an end date before the start date, also when only one of them changes', async () => {
      const bad = expectStatus(
        await api.courses.create({
          body: { code: 'DATES', title: 'x', start_date: '2026-09-01', end_date: '2026-08-01' },
        }),
        400,
      );
      expect(bad.body.errors?.[0]?.path).toBe('body.end_date');
      const ok = expectStatus(
        await api.courses.create({ body: { code: 'DATES', title: 'x', start_date: '2026-09-01' } }),
        201,
      ).body;
      const later = await api.courses.update({
        params: { id: ok.id },
        body: { end_date: '2026-01-01' },
      });
      expect(later.status).toBe(400);
      expect(
        expectStatus(await api.courses.retrieve({ params: { id: ok.id } }), 200).body.end_date,
      ).toBeNull();
    });

    it('lists with status, code, date ranges and q', async () => {
      await api.courses.create({
        body: { code: 'ART-1', title: 'Painting', status: 'draft', start_date: '2027-01-10' },
      });
      await api.courses.create({
        body: { code: 'ART-2', title: 'Sculpture', start_date: '2026-01-10' },
      });
      const codes = async (query: QueryOf<TypedClient['courses']['list']>) =>
        expectStatus(await api.courses.list({ query }), 200).body.data.map((c) => c.code);
      expect(await codes({ status: 'draft' })).toEqual(['ART-1']);
      expect(await codes({ code: 'ART-2' })).toEqual(['ART-2']);
      expect(await codes({ q: 'art', sort: 'code' })).toEqual(['ART-1', 'ART-2']);
      expect(await codes({ q: 'art', 'start_date[gte]': '2026-06-01' })).toEqual(['ART-1']);
      expect(await codes({ q: 'sculp' })).toEqual(['ART-2']);
      expect((await raw.get('/v1/courses?start_date[gte]=2026-13-01')).status).toBe(400);
    });
  });
});
