import type { PageLinks, PageMeta, Problem } from '@platform/contract';
import { demoStudents } from '../src/testing';
import { encodeListCursor } from '../src/common/list/list-cursor';
import { problemOf, rawCall, rawClient, startServer, type TestServer } from './support/server';

type Page = { data: { id: string }[]; meta: PageMeta; links: PageLinks };

const DAY = 86_400_000;

describe('list cursors (links.next, keyset pages)', () => {
  let server: TestServer;
  let orgId: string;
  let token: string;
  let otherToken: string;

  beforeAll(async () => {
    server = await startServer();
    orgId = (await server.createOrganization()).id;
    ({ token } = await server.createToken(orgId, [
      'students:read',
      'courses:read',
      'courses:write',
    ]));
    const other = (await server.createOrganization()).id;
    ({ token: otherToken } = await server.createToken(other, ['students:read']));
    await server.insertStudents(other, 5);
    // 40 students on 8 days: five share each created_at, so the order rests on the id too.
    const base = Date.parse('2026-01-01T00:00:00.000Z');
    const students = demoStudents(orgId, 40, base).map((s, i) => ({
      ...s,
      createdAt: new Date(base + Math.floor(i / 5) * DAY),
      lastName: ['Ng', 'Émile', 'Adams', 'Zhou'][i % 4]!,
    }));
    await server.insertStudents(orgId, students);
    // 30 courses: a third without a start date (NULL), the rest on four dates, three titles.
    const raw = rawClient(server, token);
    for (let i = 0; i < 30; i++) {
      const res = await raw.post('/v1/courses', {
        code: `C-${String(i).padStart(2, '0')}`,
        title: ['Algebra', 'Biology', 'Chemistry'][i % 3],
        ...(i % 3 !== 0 && { start_date: `2026-0${(i % 4) + 1}-01` }),
      });
      expect(res.status).toBe(201);
    }
  });
  afterAll(() => server.close());

  const get = (path: string, t = token) => rawCall<Page>(server, path, { token: t });
  const ids = (page: Page) => page.data.map((row) => row.id);

  /** Every id from `path` on, following links.next; checks each next link is a cursor. */
  async function walk(path: string, t = token, between?: (pageNo: number) => Promise<void>) {
    const seen: string[] = [];
    const pages: PageMeta[] = [];
    let res = await get(path, t);
    for (;;) {
      expect(res.status).toBe(200);
      seen.push(...ids(res.body));
      pages.push(res.body.meta);
      const next = res.body.links.next;
      if (!next) return { seen, pages };
      expect(new URL(next).searchParams.has('page')).toBe(false);
      expect(new URL(next).searchParams.get('cursor')).toMatch(/^[\w-]+\.[\w-]{10}$/);
      await between?.(pages.length);
      res = await get(next.slice(server.url.length), t);
    }
  }

  it.each([
    ['/v1/students?per_page=7', 100],
    ['/v1/students?per_page=3&sort=created_at', 100],
    ['/v1/students?per_page=6&sort=last_name,-created_at', 100],
    ['/v1/students?per_page=4&sort=-last_name&created_at[gte]=2026-01-03T00:00:00Z', 100],
    ['/v1/courses?per_page=4&sort=start_date', 100],
    ['/v1/courses?per_page=4&sort=-start_date', 100],
    ['/v1/courses?per_page=5&sort=start_date,-title', 100],
    ['/v1/courses?per_page=3&sort=-title,start_date', 100],
  ])('walks %s in the order of one large page, nothing skipped or repeated', async (path, all) => {
    const whole = await get(`${path.replace(/per_page=\d+/, `per_page=${all}`)}`);
    const { seen, pages } = await walk(path);
    expect(seen).toEqual(ids(whole.body));
    expect(pages.map((meta) => meta.page)).toEqual(pages.map((_, i) => i + 1));
    // Past page 1 the total is the pages before plus what follows the cursor.
    expect(pages.at(-1)!.total).toBe(whole.body.meta.total);
  });

  it.each([
    '/v1/events?per_page=4',
    '/v1/events?per_page=3&sort=created_at',
    '/v1/personal_access_tokens?per_page=1&sort=created_at',
    '/v1/audit_events?per_page=2',
    '/v1/webhook_endpoints?per_page=1',
    '/v1/members?per_page=1&sort=email',
    '/v1/oauth_clients?per_page=1',
    '/v1/exports?per_page=1',
  ])('walks %s by cursor as one large page lists it', async (path) => {
    const all = (await server.createToken(orgId, ['all'], { name: 'walker' })).token;
    await server.createToken(orgId, ['students:read'], { name: 'another' });
    const whole = await get(path.replace(/per_page=\d+/, 'per_page=100'), all);
    expect(whole.status).toBe(200);
    // All of it in one page, so the walk must end where it does. (Request logs are left out:
    // the walk's own requests add to them.)
    expect(whole.body.data.length).toBeLessThan(100);
    const { seen } = await walk(path, all);
    expect(seen).toEqual(ids(whole.body));
    if (/events|tokens/.test(path)) expect(seen.length).toBeGreaterThan(2);
  });

  it.each([
    // A tallied total, a counted one (a range filter), a search.
    ['/v1/students?per_page=10', 40],
    ['/v1/students?per_page=5&sort=created_at&created_at[gte]=2026-01-03T00:00:00Z', 30],
    ['/v1/students?per_page=5&q=zhou', 10],
  ])('ends %s on its last full page, with no empty page after it', async (path, count) => {
    const { seen, pages } = await walk(path);
    expect(seen).toHaveLength(count);
    expect(new Set(seen).size).toBe(count);
    const perPage = pages[0]!.per_page;
    expect(pages).toHaveLength(count / perPage);
    expect(pages.at(-1)!.page).toBe(count / perPage);
  });

  it('neither skips nor repeats a record when others are created during the walk', async () => {
    const before = ids((await get('/v1/courses?per_page=100&sort=-created_at')).body);
    const raw = rawClient(server, token);
    let n = 0;
    const { seen } = await walk('/v1/courses?per_page=4&sort=-created_at', token, async () => {
      // Newest first: each new course lands before the cursor, which OFFSET pages would shift.
      expect((await raw.post('/v1/courses', { code: `NEW-${n++}`, title: 'Late' })).status).toBe(
        201,
      );
    });
    expect(seen).toEqual(before);
  });

  it('answers the page page=N would, with meta.page N and page links beside the cursor', async () => {
    const first = await get('/v1/students?per_page=10&sort=last_name');
    const second = await get(first.body.links.next!.slice(server.url.length));
    const byNumber = await get('/v1/students?per_page=10&sort=last_name&page=2');
    expect(ids(second.body)).toEqual(ids(byNumber.body));
    expect(second.body.meta).toMatchObject({ page: 2, per_page: 10, total: 40 });
    expect(second.body.links.self).toBe(first.body.links.next);
    expect(second.body.links.prev).toBe(
      `${server.url}/v1/students?per_page=10&sort=last_name&page=1`,
    );
    expect(second.body.links.last).toBe(
      `${server.url}/v1/students?per_page=10&sort=last_name&page=4`,
    );
  });

  const refusal = async (path: string, t = token) => {
    const res = await get(path, t);
    expect(res.status).toBe(400);
    const problem = problemOf(res) as Problem & { errors: { path: string }[] };
    expect(problem.errors.map((e) => e.path)).toEqual(['query.cursor']);
    return problem.detail;
  };
  const cursorOf = async (path: string, t = token) =>
    new URL((await get(path, t)).body.links.next!).searchParams.get('cursor')!;

  it("refuses another organization's cursor, another list's and an altered one", async () => {
    const mine = await cursorOf('/v1/students?per_page=2');
    expect(await refusal(`/v1/students?per_page=2&cursor=${mine}`, otherToken)).toContain(
      'not a cursor of this list',
    );
    const course = await cursorOf('/v1/courses?per_page=2');
    expect(await refusal(`/v1/students?cursor=${course}`)).toContain('not a cursor of this list');
    const altered = `${mine.slice(0, -1)}${mine.endsWith('A') ? 'B' : 'A'}`;
    expect(await refusal(`/v1/students?cursor=${altered}`)).toContain('not a cursor of this list');
  });

  it('refuses a cursor beside page, under another sort, or malformed', async () => {
    const cursor = await cursorOf('/v1/students?per_page=2');
    expect(await refusal(`/v1/students?page=2&cursor=${cursor}`)).toContain(
      'page and cursor cannot be used together: a cursor names its own page',
    );
    expect(await refusal(`/v1/students?sort=last_name&cursor=${cursor}`)).toContain(
      'cursor was made for sort=-created_at',
    );
    expect(await refusal('/v1/students?cursor=42')).toContain('not a list cursor');
  });

  it('refuses a well-tagged cursor whose keys are not the columns values, never a 500', async () => {
    for (const values of [['not a date'], [42], [null], ['2026-01-01T00:00:00Z']]) {
      const cursor = encodeListCursor(orgId, 'students', {
        page: 2,
        sort: '-created_at',
        values,
        id: 'stu_x',
      });
      expect(await refusal(`/v1/students?cursor=${cursor}`)).toContain('not a cursor of this list');
    }
  });

  it('lets per_page and filters change along the walk', async () => {
    const cursor = await cursorOf('/v1/students?per_page=5&sort=created_at');
    const res = await get(`/v1/students?per_page=3&sort=created_at&status=active&cursor=${cursor}`);
    const all = await get('/v1/students?per_page=100&sort=created_at');
    const rows = all.body.data as { id: string; status: string }[];
    const expected = rows.slice(5).filter((row) => row.status === 'active');
    expect(expected.length).toBeGreaterThan(3);
    expect(ids(res.body)).toEqual(expected.slice(0, 3).map((row) => row.id));
  });
});
