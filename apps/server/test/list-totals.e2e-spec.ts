import type { PageLinks, PageMeta } from '@platform/contract';
import { demoStudents, type Student } from '../src/testing';
import { expectStatus, type QueryOf, typedClient, type TypedClient } from './support/api';
import {
  DATABASE_KIND,
  rawCall,
  type RawResponse,
  startServer,
  type TestServer,
} from './support/server';

const DAY = 86_400_000;

/** 30 students, one a day from 2026-01-01; every third (10) is a Nakamura in grade 9. */
function thirtyStudents(organizationId: string): Student[] {
  const base = Date.parse('2026-01-01T00:00:00.000Z');
  return demoStudents(organizationId, 30, base).map((s, i) => ({
    ...s,
    createdAt: new Date(base + i * DAY),
    updatedAt: new Date(base + i * DAY),
    firstName: `First${i}`,
    lastName: i % 3 === 0 ? 'Nakamura' : 'Okafor',
    email: `student${i}@example.com`,
    gradeLevel: i % 3 === 0 ? 9 : 10,
    // The ten Nakamuras are active; the rest alternate inactive and graduated (10 each).
    status: i % 3 === 0 ? 'active' : i % 2 === 0 ? 'inactive' : 'graduated',
  }));
}

/**
 * Follows the server's own `next` links from `path`, exactly as given rather than rebuilt, and
 * returns the ids in the order seen and the number of pages. On every page the total is at least
 * what was seen, and while rows remain (`expected` of them) the bound leaves a page after this one.
 */
async function followNext(server: TestServer, token: string, path: string, expected: number) {
  const seen: string[] = [];
  let url: string | null = path;
  let pages = 0;
  while (url) {
    const res: RawResponse<{ data: { id: string }[]; meta: PageMeta; links: PageLinks }> =
      await rawCall<{ data: { id: string }[]; meta: PageMeta; links: PageLinks }>(
        server,
        url.replace(/^https?:\/\/[^/]+/, ''),
        { token },
      );
    expect(res.status).toBe(200);
    const meta = res.body.meta;
    seen.push(...res.body.data.map((s) => s.id));
    if (seen.length < expected) expect(meta.total_pages).toBeGreaterThan(meta.page);
    expect(meta.total).toBeGreaterThanOrEqual(seen.length);
    url = res.body.links.next;
    pages += 1;
  }
  return { seen, pages };
}
/** Rows counted past the requested page; 5 here so the bound is crossed with a few dozen rows. */
const AHEAD = 5;

/** A range every one of the thirty matches: a query the tallies do not answer, so it is counted. */
const SINCE_2025 = { 'created_at[gte]': '2025-01-01T00:00:00Z' } as const;

/**
 * What `meta.total` promises of a counted query (a range, a filter the tallies do not keep, two
 * filters, a search): exact while the matches end within `per_page + AHEAD` rows past the page's
 * offset, else a lower bound flagged `total_exact: false` that still ends past the page, so
 * following `next` (or paging while page < total_pages) visits every row.
 */
describe('meta.total with a bounded count (LIST_TOTAL_COUNT_AHEAD)', () => {
  let server: TestServer;
  let token: string;
  let api: TypedClient;
  let students: Student[];

  beforeAll(async () => {
    server = await startServer({ LIST_TOTAL_COUNT_AHEAD: String(AHEAD) });
    const orgId = (await server.createOrganization()).id;
    ({ token } = await server.createToken(orgId, ['students:read']));
    api = typedClient(server, token);
    students = thirtyStudents(orgId);
    await server.insertStudents(orgId, students);
    // Another organization's rows are never counted.
    const other = await server.createOrganization({ name: 'Other School' });
    await server.insertStudents(other.id, 20, Date.parse('2026-01-01T00:00:00.000Z'));
  });
  afterAll(() => server.close());

  const list = async (query: QueryOf<TypedClient['students']['list']>) =>
    expectStatus(await api.students.list({ query }), 200);

  it('is exact when the collection ends within the bound', async () => {
    // Offset 20 + 4 per page + 5 ahead = 29 rows counted at most: the 30 exceed it...
    const near = await list({ ...SINCE_2025, per_page: 4, page: 6 });
    expect(near.body.meta).toEqual({
      page: 6,
      per_page: 4,
      total: 29,
      total_pages: 8,
      total_exact: false,
    });
    // ...from offset 24 on, the bound (33) is past the end: exact.
    const last = await list({ ...SINCE_2025, per_page: 4, page: 7 });
    expect(last.body.meta).toEqual({
      page: 7,
      per_page: 4,
      total: 30,
      total_pages: 8,
      total_exact: true,
    });
    expect(last.body.links.last).toContain('page=8');
  });

  it('is a lower bound past the bound, with more pages than the current one', async () => {
    const first = await list({ ...SINCE_2025, per_page: 2 });
    expect(first.body.meta).toEqual({
      page: 1,
      per_page: 2,
      total: 7,
      total_pages: 4,
      total_exact: false,
    });
    expect(new URL(first.body.links.next!).searchParams.get('cursor')).toMatch(/\./);
    expect(first.body.links.last).toContain('page=4');
  });

  it('visits every row exactly once by following next', async () => {
    const { seen, pages } = await followNext(
      server,
      token,
      '/v1/students?per_page=4&created_at%5Bgte%5D=2025-01-01T00%3A00%3A00Z',
      students.length,
    );
    expect(pages).toBe(8);
    expect(seen.sort()).toEqual(students.map((s) => s.id).sort());
  });

  it('counts within a filter or a search the same way', async () => {
    // 10 Nakamuras in grade 9: page 1 of 2 counts at most 2 + 5 = 7 of them.
    const queries: QueryOf<TypedClient['students']['list']>[] = [
      { grade_level: 9 },
      { q: 'nakamura' },
      { q: 'nakamura', grade_level: 9 },
      { status: 'active', grade_level: 9 },
    ];
    for (const query of queries) {
      const first = await list({ ...query, per_page: 2 });
      expect(first.body.meta).toMatchObject({ total: 7, total_pages: 4, total_exact: false });
      const deep = await list({ ...query, per_page: 2, page: 3 });
      expect(deep.body.meta).toMatchObject({ total: 10, total_pages: 5, total_exact: true });
    }
    const none = await list({ q: 'nakamura', grade_level: 10 });
    expect(none.body.meta).toMatchObject({ total: 0, total_pages: 0, total_exact: true });
  });
});

/**
 * What `meta.total` promises for a `q` search: the same kind of bound, nearer the page
 * (LIST_SEARCH_COUNT_AHEAD, 200 by default), so a common word does not read thousands of
 * matches to count them. A list without `q` keeps its own, further bound.
 */
describe('meta.total of a search (LIST_SEARCH_COUNT_AHEAD)', () => {
  /** Lists count 50 past the page, searches 3. */
  const LIST_AHEAD = 50;
  const SEARCH_AHEAD = 3;
  let server: TestServer;
  let token: string;
  let api: TypedClient;
  let nakamuras: Student[];

  beforeAll(async () => {
    server = await startServer({
      LIST_TOTAL_COUNT_AHEAD: String(LIST_AHEAD),
      LIST_SEARCH_COUNT_AHEAD: String(SEARCH_AHEAD),
    });
    const orgId = (await server.createOrganization()).id;
    ({ token } = await server.createToken(orgId, ['students:read']));
    api = typedClient(server, token);
    const students = thirtyStudents(orgId);
    await server.insertStudents(orgId, students);
    nakamuras = students.filter((s) => s.lastName === 'Nakamura');
  });
  afterAll(() => server.close());

  const list = async (query: QueryOf<TypedClient['students']['list']>) =>
    expectStatus(await api.students.list({ query }), 200);

  it('counts a search only a few matches past the page, and a list as far as before', async () => {
    // Page 1 of 2 counts at most 2 + 3 = 5 of the 10 Nakamuras: a lower bound, one more page.
    const first = await list({ q: 'nakamura', per_page: 2 });
    expect(first.body.meta).toEqual({
      page: 1,
      per_page: 2,
      total: 5,
      total_pages: 3,
      total_exact: false,
    });
    expect(new URL(first.body.links.next!).searchParams.get('cursor')).toMatch(/\./);
    // Offset 6 + 2 + 3 = 11 > 10: exact from page 4 on.
    const later = await list({ q: 'nakamura', per_page: 2, page: 4 });
    expect(later.body.meta).toEqual({
      page: 4,
      per_page: 2,
      total: 10,
      total_pages: 5,
      total_exact: true,
    });
    // The same 30 rows without q are counted exactly: 2 + 50 covers them.
    const all = await list({ per_page: 2 });
    expect(all.body.meta).toMatchObject({ total: 30, total_pages: 15, total_exact: true });
  });

  it('visits every match exactly once, newest first, by following next', async () => {
    const path = '/v1/students?q=nakamura&per_page=3';
    const { seen } = await followNext(server, token, path, nakamuras.length);
    // The default order, -created_at: the same rows in the same order as an exact count gives.
    expect(seen).toEqual(
      [...nakamuras].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime()).map((s) => s.id),
    );
  });
});

/**
 * What `meta.total` promises of a list without `q` and with at most one equality filter on a
 * tallied field (students', courses', enrollments', payments' and exam results' `status`): exact,
 * whatever the collection's size and the page, from counters the database keeps in each write's
 * transaction (database/list-tallies.ts). The count bound (5 here) plays no part.
 */
describe('meta.total from the tallies', () => {
  let server: TestServer;
  let orgId: string;
  let token: string;
  let api: TypedClient;
  let otherApi: TypedClient;
  let otherId: string;

  beforeAll(async () => {
    server = await startServer({ LIST_TOTAL_COUNT_AHEAD: String(AHEAD) });
    orgId = (await server.createOrganization()).id;
    ({ token } = await server.createToken(orgId, [
      'students:read',
      'students:write',
      'courses:read',
      'courses:write',
      'enrollments:read',
      'enrollments:write',
    ]));
    api = typedClient(server, token);
    await server.insertStudents(orgId, thirtyStudents(orgId));
    const other = await server.createOrganization({ name: 'Other School' });
    otherId = other.id;
    const otherToken = await server.createToken(other.id, ['students:read', 'students:write']);
    otherApi = typedClient(server, otherToken.token);
    await server.insertStudents(other.id, 20, Date.parse('2026-01-01T00:00:00.000Z'));
  });
  afterAll(() => server.close());

  const totals = async (client: TypedClient, query: QueryOf<TypedClient['students']['list']>) =>
    expectStatus(await client.students.list({ query: { per_page: 2, ...query } }), 200).body.meta;

  it('is exact on every page, unfiltered and per status, however far past the bound', async () => {
    expect(await totals(api, {})).toEqual({
      page: 1,
      per_page: 2,
      total: 30,
      total_pages: 15,
      total_exact: true,
    });
    expect(await totals(api, { page: 9 })).toMatchObject({ total: 30, total_exact: true });
    expect(await totals(api, { status: 'active' })).toMatchObject({
      total: 10,
      total_pages: 5,
      total_exact: true,
    });
    // Several values of the filter: their tallies summed.
    expect(await totals(api, { status: 'inactive,graduated' })).toMatchObject({
      total: 20,
      total_exact: true,
    });
    expect(await totals(api, { status: 'withdrawn' })).toMatchObject({
      total: 0,
      total_pages: 0,
      total_exact: true,
    });
    // Another organization's rows are its own.
    expect(await totals(otherApi, {})).toMatchObject({ total: 20, total_exact: true });
  });

  it('follows creates, status changes and deletes through the API', async () => {
    const created = expectStatus(
      await api.students.create({
        body: { student_number: 'T-1', first_name: 'Tally', last_name: 'Test', status: 'active' },
      }),
      201,
    ).body;
    expect(await totals(api, {})).toMatchObject({ total: 31, total_exact: true });
    expect(await totals(api, { status: 'active' })).toMatchObject({ total: 11 });

    expectStatus(
      await api.students.update({ params: { id: created.id }, body: { status: 'withdrawn' } }),
      200,
    );
    expect(await totals(api, { status: 'active' })).toMatchObject({ total: 10 });
    expect(await totals(api, { status: 'withdrawn' })).toMatchObject({ total: 1 });
    // A change of another field moves no tally.
    expectStatus(
      await api.students.update({ params: { id: created.id }, body: { grade_level: 4 } }),
      200,
    );
    expect(await totals(api, {})).toMatchObject({ total: 31 });
    expect(await totals(api, { status: 'withdrawn' })).toMatchObject({ total: 1 });

    expectStatus(await api.students.delete({ params: { id: created.id } }), 200);
    expect(await totals(api, {})).toMatchObject({ total: 30 });
    expect(await totals(api, { status: 'withdrawn' })).toMatchObject({ total: 0 });
    expect(await totals(otherApi, {})).toMatchObject({ total: 20 });
  });

  it('counts concurrent creates in one organization, every one', async () => {
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        otherApi.students.create({
          body: { student_number: `C-${i}`, first_name: 'Con', last_name: `Current${i}` },
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(12).fill(201));
    expect(await totals(otherApi, {})).toMatchObject({ total: 32, total_exact: true });
    const [{ n }] = await server.dataSource.query(
      `SELECT COUNT(*) AS n FROM students WHERE organization_id = '${otherId}'`,
    );
    expect(Number(n)).toBe(32);
  });

  it('sees writes that bypass the API (raw SQL), since the database keeps them', async () => {
    // Every grade-10 student of the thirty (the twenty not active) becomes withdrawn.
    await server.dataSource.query(
      `UPDATE students SET status = 'withdrawn' WHERE organization_id = '${orgId}' AND grade_level = 10`,
    );
    expect(await totals(api, { status: 'withdrawn' })).toMatchObject({ total: 20 });
    expect(await totals(api, { status: 'inactive,graduated' })).toMatchObject({ total: 0 });
    expect(await totals(api, {})).toMatchObject({ total: 30 });
  });

  it('moves the tallies with a row moved to another organization (raw SQL)', async () => {
    const [moved] = await server.dataSource.query(
      `SELECT id, status FROM students WHERE organization_id = '${orgId}' AND status = 'active' ORDER BY id LIMIT 1`,
    );
    await server.dataSource.query(
      // A number of its own: the other organization's twenty use the same series.
      `UPDATE students SET organization_id = '${otherId}', student_number = 'MOVED-1' WHERE id = '${moved.id}'`,
    );
    expect(await totals(api, {})).toMatchObject({ total: 29 });
    expect(await totals(api, { status: 'active' })).toMatchObject({ total: 9 });
    expect(await totals(otherApi, {})).toMatchObject({ total: 33 });
    // Moved back, status changed on the way: both tallies of both organizations follow.
    await server.dataSource.query(
      `UPDATE students SET organization_id = '${orgId}', status = 'graduated' WHERE id = '${moved.id}'`,
    );
    expect(await totals(api, {})).toMatchObject({ total: 30 });
    expect(await totals(api, { status: 'active' })).toMatchObject({ total: 9 });
    expect(await totals(api, { status: 'graduated' })).toMatchObject({ total: 1 });
    expect(await totals(otherApi, {})).toMatchObject({ total: 32 });
  });

  it('lets a status change and a create in one organization queue, not deadlock', async () => {
    // Transaction A changes a student's status and creates one; B, open at the same time, creates
    // one. On PostgreSQL both hold uncommitted writes to one organization's students, and each
    // takes the tally rows when it commits (whole-collection row first), so both commit and both
    // are counted. SQLite takes one writer at a time, so there the two run one after the other.
    const row = (id: string, number: string, status: string) => {
      const at = new Date().toISOString();
      return DATABASE_KIND === 'postgres'
        ? `INSERT INTO students (id, organization_id, student_number, first_name, last_name, status, created_at, updated_at) VALUES ('${id}', '${orgId}', '${number}', 'Lock', 'Order', '${status}', '${at}', '${at}')`
        : `INSERT INTO students (id, organization_id, student_number, first_name, last_name, status, created_at, updated_at) VALUES ('${id}', '${orgId}', '${number}', 'Lock', 'Order', '${status}', '${at.replace('T', ' ').replace('Z', '')}', '${at.replace('T', ' ').replace('Z', '')}')`;
    };
    const [target] = await server.dataSource.query(
      `SELECT id FROM students WHERE organization_id = '${orgId}' AND status = 'withdrawn' LIMIT 1`,
    );
    const a = server.dataSource.createQueryRunner();
    const b = server.dataSource.createQueryRunner();
    try {
      await a.startTransaction();
      await a.query(`UPDATE students SET status = 'inactive' WHERE id = '${target.id}'`);
      if (DATABASE_KIND === 'postgres') {
        await b.startTransaction();
        await b.query(row('stu_01JLOCKORDERB0000000000000', 'LOCK-B', 'inactive'));
      }
      await a.query(row('stu_01JLOCKORDERA0000000000000', 'LOCK-A', 'graduated'));
      await a.commitTransaction();
      if (DATABASE_KIND === 'postgres') {
        await b.commitTransaction();
      } else {
        await b.query(row('stu_01JLOCKORDERB0000000000000', 'LOCK-B', 'inactive'));
      }
    } finally {
      await a.release();
      await b.release();
    }
    expect(await totals(api, {})).toMatchObject({ total: 32, total_exact: true });
    const [{ n }] = await server.dataSource.query(
      `SELECT COUNT(*) AS n FROM students WHERE organization_id = '${orgId}' AND status = 'inactive'`,
    );
    expect(await totals(api, { status: 'inactive' })).toMatchObject({ total: Number(n) });
  });

  it("keeps an enrollment's status tallies through its transitions", async () => {
    const student = expectStatus(
      await api.students.create({
        body: { student_number: 'E-1', first_name: 'En', last_name: 'Rolled' },
      }),
      201,
    ).body.id;
    const course = expectStatus(
      await api.courses.create({ body: { code: 'TALLY', title: 'Tallies', status: 'active' } }),
      201,
    ).body.id;
    const enrollments = async (status?: 'pending' | 'active' | 'completed') =>
      expectStatus(await api.enrollments.list({ query: status ? { status } : {} }), 200).body.meta;
    const id = expectStatus(
      await api.enrollments.create({ body: { student_id: student, course_id: course } }),
      201,
    ).body.id;
    expect(await enrollments('pending')).toMatchObject({ total: 1, total_exact: true });
    expectStatus(await api.enrollments.activate({ params: { id } }), 200);
    expectStatus(await api.enrollments.complete({ params: { id } }), 200);
    expect(await enrollments('pending')).toMatchObject({ total: 0, total_exact: true });
    expect(await enrollments('completed')).toMatchObject({ total: 1, total_exact: true });
    expect(await enrollments()).toMatchObject({ total: 1, total_exact: true });
    const courses = expectStatus(await api.courses.list({ query: { status: 'active' } }), 200);
    expect(courses.body.meta).toMatchObject({ total: 1, total_exact: true });
  });
});
