import { POSTGRES_WALK_ROWS, SEARCH_COUNT_AHEAD } from '../src/common/list/find-page';
import { demoStudents, type Student } from '../src/testing';
import { expectStatus, type QueryOf, typedClient, type TypedClient } from './support/api';
import { DATABASE_KIND, rawCall, startServer, type TestServer } from './support/server';

/**
 * A `q` that most of an organization's students contain (an email domain): the trigram index
 * would hand the database every row to sort, so the page is taken by walking the list's own order
 * instead (SQLite: SEARCH_WALK_ROWS; PostgreSQL: POSTGRES_WALK_ROWS, after a probe). Here: the
 * pages, totals and cursors are those of the rows as they are, whichever way the server took
 * them, and on PostgreSQL which index served which search. Speed: bench/collection-size.bench.js.
 */
const STUDENTS = 2 * POSTGRES_WALK_ROWS;
const DOMAIN = 'demo-school';
type Page = { data: { id: string }[]; links: { next: string | null } };

describe('GET /v1/students?q= that most students contain', () => {
  let server: TestServer;
  let orgId: string;
  let token: string;
  let rows: Student[];

  beforeAll(async () => {
    server = await startServer();
    orgId = (await server.createOrganization()).id;
    ({ token } = await server.createToken(orgId, ['students:read']));
    rows = demoStudents(orgId, STUDENTS, Date.parse('2026-01-01T00:00:00.000Z'));
    await server.insertStudents(orgId, rows);
    // Another organization's students match too: never counted, never listed.
    const other = await server.createOrganization({ name: 'Other School' });
    await server.insertStudents(other.id, 300);
    if (DATABASE_KIND === 'postgres') await server.dataSource.query('VACUUM ANALYZE students');
  }, 120_000);
  afterAll(() => server.close());

  const list = async (query: QueryOf<TypedClient['students']['list']>) =>
    expectStatus(await typedClient(server, token).students.list({ query }), 200);
  const ids = (students: { id: string }[]) => students.map((s) => s.id);
  const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const newestFirst = (a: Student, b: Student) =>
    b.createdAt.getTime() - a.createdAt.getTime() || compare(b.id, a.id);
  const byLastName = (a: Student, b: Student) =>
    compare(a.lastName, b.lastName) || compare(a.id, b.id);
  const withEmail = () => rows.filter((s) => s.email?.includes(DOMAIN));
  /** A search's total: its matches up to `offset + per_page + SEARCH_COUNT_AHEAD`, then that bound. */
  const searchTotal = (matches: number, perPage: number, page = 1) => {
    const cap = page * perPage + SEARCH_COUNT_AHEAD;
    return { total: Math.min(matches, cap), total_exact: matches < cap };
  };

  it('pages newest first, each the next slice of the matches, the total the count bound', async () => {
    const expected = withEmail().sort(newestFirst);
    // Most students have an email (90 %): the q is broad.
    expect(expected.length).toBeGreaterThan(STUDENTS * 0.8);
    for (const page of [1, 2, 9]) {
      const res = await list({ q: DOMAIN, per_page: 50, page });
      expect(res.body.meta).toMatchObject(searchTotal(expected.length, 50, page));
      expect(ids(res.body.data)).toEqual(ids(expected.slice((page - 1) * 50, page * 50)));
    }
  });

  it('keeps the sort and the filters: by last name, graduated or withdrawn only', async () => {
    const expected = withEmail()
      .filter((s) => s.status === 'graduated' || s.status === 'withdrawn')
      .sort(byLastName);
    expect(expected.length).toBeGreaterThan(50);
    const res = await list({
      q: DOMAIN.toUpperCase(),
      status: 'graduated,withdrawn',
      sort: 'last_name',
      per_page: 50,
    });
    expect(res.body.meta).toMatchObject(searchTotal(expected.length, 50));
    expect(ids(res.body.data)).toEqual(ids(expected.slice(0, 50)));
  });

  it("follows links.next through the matches: each once, in order, none of another school's", async () => {
    const expected = withEmail().sort((a, b) => -newestFirst(a, b));
    const seen: string[] = [];
    let path: string | null = `/v1/students?q=${DOMAIN}&sort=created_at&per_page=100`;
    for (let page = 0; page < 4 && path; page++) {
      const res: { status: number; body: Page } = await rawCall<Page>(server, path, { token });
      expect(res.status).toBe(200);
      const { data, links } = res.body;
      seen.push(...ids(data));
      path = links.next && links.next.slice(server.url.length);
    }
    expect(seen).toEqual(ids(expected.slice(0, 400)));
  });
});

/**
 * What a search read, as PostgreSQL's statistics count index scans and the index entries they
 * read. A backend reports its counts when it goes idle, at most once a second, so each check
 * waits until the scan of the list-order index that every walk and probe makes is counted.
 */
(DATABASE_KIND === 'postgres' ? describe : () => undefined)(
  'PostgreSQL: what a search reads',
  () => {
    let server: TestServer;
    let token: string;

    beforeAll(async () => {
      server = await startServer();
      const orgId = (await server.createOrganization()).id;
      ({ token } = await server.createToken(orgId, ['students:read']));
      await server.insertStudents(orgId, demoStudents(orgId, STUDENTS, Date.now()));
      await server.dataSource.query('VACUUM ANALYZE students');
    }, 120_000);
    afterAll(() => server.close());

    const counters = async () => {
      const found: { name: string; scans: string; read: string }[] = await server.dataSource.query(
        'SELECT indexrelname AS name, idx_scan AS scans, idx_tup_read AS read ' +
          "FROM pg_stat_user_indexes WHERE relname = 'students'",
      );
      const sum = (key: 'scans' | 'read', test: (name: string) => boolean) =>
        found.filter((i) => test(i.name)).reduce((n, i) => n + Number(i[key]), 0);
      return {
        orderScans: sum('scans', (name) => name === 'idx_students_org_created'),
        trigramScans: sum('scans', (name) => name.endsWith('_trgm')),
        entriesRead: sum('read', () => true),
      };
    };

    async function readBy(q: string) {
      const before = await counters();
      expectStatus(await typedClient(server, token).students.list({ query: { q } }), 200);
      for (let waited = 0; waited < 30_000; waited += 100) {
        const after = await counters();
        if (after.orderScans > before.orderScans)
          return {
            trigramScans: after.trigramScans - before.trigramScans,
            entriesRead: after.entriesRead - before.entriesRead,
          };
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error('the statistics never counted the search');
    }

    it('a q most students contain reads a few hundred rows in list order, no trigram index', async () => {
      const read = await readBy(DOMAIN);
      expect(read.trigramScans).toBe(0);
      // The organization has twice the walk's window; reading its index whole would be 6,000.
      expect(read.entriesRead).toBeLessThan(POSTGRES_WALK_ROWS / 4);
    });

    it('a surname is probed, then counted and paged from the trigram indexes', async () => {
      expect((await readBy('nakamura')).trigramScans).toBeGreaterThan(0);
    });
  },
);
