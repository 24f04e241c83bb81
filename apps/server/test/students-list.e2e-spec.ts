import type { PageLinks } from '@platform/contract';
import fc from 'fast-check';
import { demoStudents, type Student } from '../src/testing';
import { expectStatus, type QueryOf, typedClient, type TypedClient } from './support/api';
import { problemOf, rawCall, startServer, type TestServer } from './support/server';

type StudentPage = { data: { id: string }[]; links: PageLinks };

const DAY = 86_400_000;

describe('GET /v1/students (the list convention)', () => {
  let server: TestServer;
  let orgId: string;
  let token: string;
  let students: Student[];
  const base = Date.parse('2026-01-01T00:00:00.000Z');

  beforeAll(async () => {
    server = await startServer();
    orgId = (await server.createOrganization()).id;
    ({ token } = await server.createToken(orgId, ['students:read']));
    // 60 students, one per day from 2026-01-01, with controlled names, statuses and grades.
    students = demoStudents(orgId, 60, base).map((s, i) => ({
      ...s,
      createdAt: new Date(base + i * DAY),
      updatedAt: new Date(base + i * DAY + (i % 7) * 3_600_000),
      lastName: ['Alpha', 'Bravo', 'Charlie'][i % 3]!,
      firstName: `First${String(i).padStart(2, '0')}`,
      status: i % 10 === 0 ? 'graduated' : i % 10 === 1 ? 'withdrawn' : 'active',
      gradeLevel: i % 13,
      email: i === 42 ? 'needle_100%@example.com' : `student${i}@example.com`,
      studentNumber: `N-${1000 + i}`,
    }));
    await server.insertStudents(orgId, students);
  });
  afterAll(() => server.close());

  /** A successful list through the typed client, which sends the keys in the order given. */
  const list = async (query: QueryOf<TypedClient['students']['list']> = {}, t = token) =>
    expectStatus(await typedClient(server, t).students.list({ query }), 200);
  /** For query strings the contract's types refuse, or that must reach the wire as written. */
  /** A page as the server sends it, for queries the contract's types would not build. */
  const rawList = (query: string) =>
    rawCall<StudentPage>(server, `/v1/students${query}`, { token });
  const ids = (body: { data: { id: string }[] }) => body.data.map((s) => s.id);
  const newestFirst = () =>
    [...students].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());

  it('defaults to page 1, 25 per page, newest first, with meta and links', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({
      page: 1,
      per_page: 25,
      total: 60,
      total_pages: 3,
      total_exact: true,
    });
    expect(ids(res.body)).toEqual(
      newestFirst()
        .slice(0, 25)
        .map((s) => s.id),
    );
    expect(res.body.data[0]).toMatchObject({
      object: 'student',
      id: students[59]!.id,
      student_number: 'N-1059',
      created_at: '2026-03-01T00:00:00.000Z',
    });
  });

  it('serves the same page under /api/v1 with links on that prefix', async () => {
    const a = await list({ per_page: 5, page: 2 });
    // The /api alias is outside the contract's paths: read raw.
    const b = await rawCall<StudentPage>(server, '/api/v1/students?per_page=5&page=2', { token });
    expect(b.status).toBe(200);
    expect(ids(b.body)).toEqual(ids(a.body));
    expect(b.body.links.next).toMatch(
      new RegExp(`^${server.url}/api/v1/students\\?per_page=5&cursor=[\\w-]+\\.[\\w-]{10}$`),
    );
  });

  describe('links and the Link header', () => {
    const rels = (header: string | null) =>
      Object.fromEntries(
        [...(header ?? '').matchAll(/<([^>]+)>; rel="(\w+)"/g)].map((m) => [m[2], m[1]]),
      );

    it('on the first page: no prev, next and last present, filters kept', async () => {
      const res = await list({ per_page: 10, status: 'active', sort: 'last_name' });
      const { links, meta } = res.body;
      expect(meta).toEqual({ page: 1, per_page: 10, total: 48, total_pages: 5, total_exact: true });
      expect(links.prev).toBeNull();
      // next is a cursor with every other parameter kept, and opens what page=2 would.
      expect(links.next).toMatch(
        new RegExp(`^${server.url}/v1/students\\?per_page=10&status=active&sort=last_name&cursor=`),
      );
      const second = await rawCall<StudentPage & { meta: { page: number } }>(
        server,
        links.next!.slice(server.url.length),
        { token },
      );
      expect(second.body.meta.page).toBe(2);
      expect(ids(second.body)).toEqual(
        ids((await list({ per_page: 10, status: 'active', sort: 'last_name', page: 2 })).body),
      );
      expect(links.last).toBe(
        `${server.url}/v1/students?per_page=10&status=active&sort=last_name&page=5`,
      );
      expect(rels(res.headers.get('link'))).toEqual({
        first: links.first,
        next: links.next,
        last: links.last,
      });
    });

    it('on a middle page: prev and next', async () => {
      const res = await list({ per_page: 10, page: 3 });
      expect(res.body.links.prev).toBe(`${server.url}/v1/students?per_page=10&page=2`);
      expect(res.body.links.next).toMatch(
        new RegExp(`^${server.url}/v1/students\\?per_page=10&cursor=[\\w-]+\\.[\\w-]{10}$`),
      );
      expect(rels(res.headers.get('link'))).toEqual({
        first: res.body.links.first,
        prev: res.body.links.prev,
        next: res.body.links.next,
        last: res.body.links.last,
      });
    });

    it('on the last page: no next, last still present', async () => {
      const res = await list({ per_page: 10, page: 6 });
      expect(res.body.data).toHaveLength(10);
      expect(res.body.links.next).toBeNull();
      expect(rels(res.headers.get('link'))).toEqual({
        first: res.body.links.first,
        prev: res.body.links.prev,
        last: res.body.links.last,
      });
    });

    it('a page past the end is empty with correct meta, not an error', async () => {
      const res = await list({ per_page: 10, page: 9 });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([]);
      expect(res.body.meta).toEqual({
        page: 9,
        per_page: 10,
        total: 60,
        total_pages: 6,
        total_exact: true,
      });
      expect(res.body.links.next).toBeNull();
      expect(res.body.links.prev).toBe(`${server.url}/v1/students?per_page=10&page=6`);
    });
  });

  describe('sort', () => {
    it('walks every page without overlap or gaps, even with many ties', async () => {
      // last_name has only three values, so ordering within a name rests on the id tie-break.
      const seen: string[] = [];
      for (let page = 1; page <= 8; page++)
        seen.push(...ids((await list({ sort: 'last_name', per_page: 8, page })).body));
      expect(seen).toHaveLength(60);
      expect(new Set(seen).size).toBe(60);
      const expected = [...students].sort(
        (a, b) => a.lastName.localeCompare(b.lastName) || a.id.localeCompare(b.id),
      );
      expect(seen).toEqual(expected.map((s) => s.id));
    });

    it.each([
      ['first_name', (a: Student, b: Student) => a.firstName.localeCompare(b.firstName)],
      ['-first_name', (a: Student, b: Student) => b.firstName.localeCompare(a.firstName)],
      ['created_at', (a: Student, b: Student) => a.createdAt.getTime() - b.createdAt.getTime()],
      [
        '-updated_at',
        (a: Student, b: Student) =>
          b.updatedAt.getTime() - a.updatedAt.getTime() || b.id.localeCompare(a.id),
      ],
      [
        '-last_name,created_at',
        (a: Student, b: Student) =>
          b.lastName.localeCompare(a.lastName) || a.createdAt.getTime() - b.createdAt.getTime(),
      ],
    ] as const)('sort=%s', async (sort, compare) => {
      const res = await list({ sort, per_page: 100 });
      expect(res.status).toBe(200);
      expect(ids(res.body)).toEqual([...students].sort(compare).map((s) => s.id));
    });
  });

  describe('filters', () => {
    it('status equality and IN', async () => {
      const one = await list({ status: 'graduated', per_page: 100 });
      expect(one.body.meta.total).toBe(6);
      expect(one.body.data.every((s) => s.status === 'graduated')).toBe(true);
      const two = await list({ status: 'graduated,withdrawn', per_page: 100 });
      expect(two.body.meta.total).toBe(12);
    });

    it('grade_level equality and IN', async () => {
      const res = await list({ grade_level: '0,12', per_page: 100 });
      const expected = students.filter((s) => s.gradeLevel === 0 || s.gradeLevel === 12);
      expect(res.body.meta.total).toBe(expected.length);
      expect(new Set(ids(res.body))).toEqual(new Set(expected.map((s) => s.id)));
    });

    it('created_at ranges, inclusive and exclusive', async () => {
      const gte = await list({ 'created_at[gte]': '2026-02-01T00:00:00Z', per_page: 100 });
      expect(gte.body.meta.total).toBe(29); // Feb 1 .. Mar 1
      const gt = await list({ 'created_at[gt]': '2026-02-01T00:00:00Z', per_page: 100 });
      expect(gt.body.meta.total).toBe(28);
      const window = await list({
        'created_at[gte]': '2026-01-10T00:00:00Z',
        'created_at[lt]': '2026-01-20T00:00:00Z',
        per_page: 100,
      });
      expect(window.body.meta.total).toBe(10);
      const lte = await list({ 'created_at[lte]': '2026-01-03T00:00:00.000+00:00' });
      expect(lte.body.meta.total).toBe(3);
    });

    it('updated_since returns records changed at or after the instant', async () => {
      const since = new Date(base + 50 * DAY);
      const res = await list({ updated_since: since.toISOString(), per_page: 100 });
      const expected = students.filter((s) => s.updatedAt >= since);
      expect(new Set(ids(res.body))).toEqual(new Set(expected.map((s) => s.id)));
    });

    it('a date-time with any offset from -23:59 to +23:59 compares as its instant; beyond, a 400', async () => {
      const pad = (n: number) => String(n).padStart(2, '0');
      // An instant (to the minute, as offsets are) near the records, and how to write it.
      const written = fc
        .record({
          minutes: fc.integer({ min: -3 * 1440, max: 62 * 1440 }),
          offsetHours: fc.integer({ min: 0, max: 99 }),
          offsetMinutes: fc.integer({ min: 0, max: 99 }),
          sign: fc.constantFrom(1, -1),
          field: fc.constantFrom('created_at[gte]', 'created_at[lt]', 'updated_since'),
        })
        .map((c) => {
          const instant = base + c.minutes * 60_000;
          const offset = c.sign * (c.offsetHours * 60 + c.offsetMinutes) * 60_000;
          const local = new Date(instant + offset).toISOString().slice(0, 19);
          const suffix = `${c.sign > 0 ? '+' : '-'}${pad(c.offsetHours)}:${pad(c.offsetMinutes)}`;
          return { ...c, instant, value: `${local}${suffix}` };
        });
      await fc.assert(
        fc.asyncProperty(written, async ({ instant, value, field, offsetHours, offsetMinutes }) => {
          // Half the offsets are impossible on purpose (a 400): sent raw.
          const res = await rawList(
            `?${new URLSearchParams({ [field]: value }).toString()}&per_page=100`,
          );
          if (offsetHours > 23 || offsetMinutes > 59) {
            expect(res.status).toBe(400);
            expect(problemOf(res).errors?.map((e) => e.path)).toEqual([`query.${field}`]);
            return;
          }
          expect(res.status).toBe(200);
          const expected = students.filter((s) =>
            field === 'created_at[gte]'
              ? s.createdAt.getTime() >= instant
              : field === 'created_at[lt]'
                ? s.createdAt.getTime() < instant
                : s.updatedAt.getTime() >= instant,
          );
          expect(new Set(ids(res.body))).toEqual(new Set(expected.map((s) => s.id)));
        }),
        { numRuns: 60 },
      );
    });

    it('q searches names, email and student number, case-insensitively, with % taken literally', async () => {
      expect((await list({ q: 'first07' })).body.data.map((s) => s.first_name)).toEqual([
        'First07',
      ]);
      expect((await list({ q: 'n-1042' })).body.meta.total).toBe(1);
      expect((await list({ q: 'STUDENT5@' })).body.meta.total).toBe(1);
      const percent = await list({ q: '100%' });
      expect(ids(percent.body)).toEqual([students[42]!.id]);
      expect((await list({ q: 'charlie', per_page: 100 })).body.meta.total).toBe(20);
    });

    it('combines filters, ranges, q and sort', async () => {
      const res = await list({
        status: 'active',
        q: 'alpha',
        'created_at[lt]': '2026-02-01T00:00:00Z',
        sort: 'first_name',
        per_page: 100,
      });
      const expected = students
        .filter(
          (s) =>
            s.status === 'active' &&
            s.lastName === 'Alpha' &&
            s.createdAt.getTime() < Date.parse('2026-02-01T00:00:00Z'),
        )
        .sort((a, b) => a.firstName.localeCompare(b.firstName));
      expect(ids(res.body)).toEqual(expected.map((s) => s.id));
    });
  });

  describe('bad parameters are a 400 naming the parameter', () => {
    it.each([
      ['page=0', 'query.page', /page must be an integer/],
      ['page=abc', 'query.page', /page must be an integer/],
      ['page=1.5', 'query.page', /page must be an integer/],
      ['per_page=0', 'query.per_page', /per_page must be an integer between 1 and 100/],
      ['per_page=101', 'query.per_page', /per_page must be an integer between 1 and 100/],
      ['per_page=-5', 'query.per_page', /per_page/],
      ['per_page=1e2', 'query.per_page', /per_page/],
      ['page=1&page=2', 'query.page', /page/],
      ['sort=email', 'query.sort', /'email' is not sortable/],
      ['sort=last_name,last_name', 'query.sort', /twice/],
      ['status=expelled', 'query.status', /status must be one or more of/],
      ['status=active,', 'query.status', /empty/],
      ['grade_level=13', 'query.grade_level', /grade_level/],
      ['created_at[gte]=yesterday', 'query.created_at[gte]', /RFC 3339/],
      ['updated_at[between]=x', 'query.updated_at[between]', /Unknown query parameter/],
      ['updated_since=2026-13-01T00:00:00Z', 'query.updated_since', /updated_since/],
      // Impossible offsets passed, then matched everything on SQLite and were a 500 on PostgreSQL.
      ['created_at[gte]=2020-01-01T00:00:00%2B99:99', 'query.created_at[gte]', /got \+99:99/],
      ['created_at[lt]=2020-01-01T00:00:00%2B24:00', 'query.created_at[lt]', /got \+24:00/],
      ['updated_since=2020-01-01T00:00:00-23:60', 'query.updated_since', /between -23:59/],
      ['updated_at[gt]=2020-01-01T00:00:00%2B0160', 'query.updated_at[gt]', /got \+0160/],
      ['created_at[gte]=2026-02-30T00:00:00Z', 'query.created_at[gte]', /RFC 3339/],
      ['created_at[gte]=2026-01-01T24:00:00Z', 'query.created_at[gte]', /RFC 3339/],
      // Year 10000 in UTC: SQLite compared it as text, below every 2026 record.
      ['created_at[gte]=9999-12-31T23:59:59-23:59', 'query.created_at[gte]', /instant between/],
      ['q=', 'query.q', /q must not be empty/],
      ['limit=10', 'query.limit', /Unknown query parameter 'limit'/],
      ['first_name=Ann', 'query.first_name', /Unknown query parameter/],
    ])('%s', async (query, path, message) => {
      // Deliberately invalid query strings, exactly as written: sent raw.
      const res = await rawList(`?${query}`);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(problemOf(res).code).toBe('validation_error');
      expect(problemOf(res).errors?.map((e) => e.path)).toContain(path);
      expect(problemOf(res).detail).toMatch(message);
    });
  });

  describe('what a client reads in a 400', () => {
    it.each([
      [
        'grade_level=-1',
        'query.grade_level',
        "grade_level must be one or more integers between 0 and 12 (got '-1')",
        'custom',
      ],
      [
        'grade_level=3,13',
        'query.grade_level',
        "grade_level must be one or more integers between 0 and 12 (got '13')",
        'custom',
      ],
      [
        'per_page=0',
        'query.per_page',
        'per_page must be an integer between 1 and 100',
        'too_small',
      ],
      [
        'per_page=101',
        'query.per_page',
        'per_page must be an integer between 1 and 100',
        'too_big',
      ],
      ['page=1000001', 'query.page', 'page must be an integer between 1 and 1000000', 'too_big'],
      ['q=', 'query.q', 'q must not be empty', 'too_small'],
      [`q=${'a'.repeat(201)}`, 'query.q', 'q must be at most 200 characters', 'too_big'],
    ])('%s', async (query, path, message, code) => {
      const res = await rawList(`?${query}`);
      expect(res.status).toBe(400);
      expect(problemOf(res).errors).toEqual([{ path, message, code }]);
    });
  });

  it('reads equality filter values trimmed, as if sent without the spaces', async () => {
    const spaced = await rawList('?grade_level=%200%20,%2012&status=%20graduated&per_page=100');
    expect(spaced.status).toBe(200);
    const plain = await list({ grade_level: '0,12', status: 'graduated', per_page: 100 });
    expect(plain.body.meta.total).toBeGreaterThan(0);
    expect(ids(spaced.body)).toEqual(ids(plain.body));
  });

  it("never shows another organization's students", async () => {
    const other = await server.createOrganization({ name: 'Other School' });
    const { token: otherToken } = await server.createToken(other.id, ['students:read']);
    const empty = await list({ per_page: 100 }, otherToken);
    expect(empty.body.meta.total).toBe(0);
    const theirs = await server.insertStudents(other.id, 3);
    const res = await list({ per_page: 100 }, otherToken);
    expect(new Set(ids(res.body))).toEqual(new Set(theirs.map((s) => s.id)));
    expect((await list({ per_page: 100 })).body.meta.total).toBe(60);
    expect((await list({ q: theirs[0]!.studentNumber })).body.meta.total).toBe(0);
  });
});
