import { contract } from '@platform/contract';
import {
  pageStatements,
  POSTGRES_WALK_ROWS,
  POSTGRES_WALK_WHOLE,
  SEARCH_COUNT_AHEAD,
} from '../src/common/list/find-page';
import { listFieldsFor } from '../src/common/list/list-fields';
import { Student as StudentEntity } from '../src/students/student.entity';
import { demoStudents, type Student } from '../src/testing';
import { expectStatus, type QueryOf, typedClient, type TypedClient } from './support/api';
import { matching, searchTotal } from './support/search';
import { DATABASE_KIND, rawCall, startServer, type TestServer } from './support/server';

/**
 * A `q` that most of an organization's students contain (an email domain): the trigram index
 * would hand the database every row to sort, so the page is taken by walking the list's own order
 * instead (SQLite: SEARCH_WALK_ROWS; PostgreSQL: POSTGRES_WALK_ROWS, after a probe). Here: the
 * pages, totals and cursors are those of the rows as they are, whichever way the server took
 * them, and on PostgreSQL which index served which search. Speed: bench/collection-size.bench.js.
 */
/** Twice the rows of an organization walked whatever the probe finds; within the walk's window. */
const STUDENTS = 2 * POSTGRES_WALK_WHOLE;
const DOMAIN = 'demo-school';
type Page = { data: { id: string }[]; links: { next: string | null } };

describe('GET /v1/students?q= that most students contain', () => {
  let server: TestServer;
  let orgId: string;
  let token: string;
  let rows: Student[];
  /** A small school's: every one of its students fits in PostgreSQL's walk. */
  let smallToken: string;
  let small: Student[];

  beforeAll(async () => {
    server = await startServer();
    orgId = (await server.createOrganization()).id;
    ({ token } = await server.createToken(orgId, ['students:read']));
    rows = demoStudents(orgId, STUDENTS, Date.parse('2026-01-01T00:00:00.000Z'));
    await server.insertStudents(orgId, rows);
    // Another organization's students match too: never counted, never listed.
    const other = await server.createOrganization({ name: 'Other School' });
    await server.insertStudents(other.id, 300);
    const smallId = (await server.createOrganization({ name: 'Small School' })).id;
    ({ token: smallToken } = await server.createToken(smallId, ['students:read']));
    small = demoStudents(smallId, 400, Date.now(), [], 1);
    await server.insertStudents(smallId, small);
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

  it('pages newest first, each the next slice of the matches, the total the count bound', async () => {
    const expected = withEmail().sort(newestFirst);
    // Most students have an email (90 %): the q is broad.
    expect(expected.length).toBeGreaterThan(STUDENTS * 0.8);
    // Page 60 counts 3,200 matches: on PostgreSQL, a walk of more than 3,000 rows.
    for (const page of [1, 2, 9, 60]) {
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

  it('pages a surname: each page the next slice of its matches', async () => {
    const expected = matching(rows, 'nakamura').sort(newestFirst);
    // A few percent of the students: fewer than page 4's bound, so its total is exact.
    expect(expected.length).toBeGreaterThan(100);
    expect(expected.length).toBeLessThan(4 * 25 + SEARCH_COUNT_AHEAD);
    for (const page of [1, 2, 4]) {
      const { meta, data } = (await list({ q: 'Nakamura', per_page: 25, page })).body;
      expect(meta).toMatchObject(searchTotal(expected.length, 25, page));
      expect(ids(data)).toEqual(ids(expected.slice((page - 1) * 25, page * 25)));
    }
  });

  it("counts a small school's matches exactly: they are all in the walk's window", async () => {
    // S000100 to S000199: more than a page needs, fewer than the count's bound.
    const expected = matching(small, 'S0001').sort(newestFirst);
    expect(expected).toHaveLength(100);
    const res = await typedClient(server, smallToken).students.list({ query: { q: 'S0001' } });
    const { meta, data } = expectStatus(res, 200).body;
    expect(meta).toMatchObject({ total: 100, total_exact: true, total_pages: 4 });
    expect(ids(data)).toEqual(ids(expected.slice(0, 25)));
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

/** The students table's index scans, and the entries they read, as PostgreSQL counts them. */
const counters = async (server: TestServer) => {
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

/** What the walk of a search found, and the rows it had to walk when it found too few. */
const walkOf = async (
  server: TestServer,
  organizationId: string,
  q: string,
  more: Record<string, unknown> = {},
) => {
  const repo = server.dataSource.getRepository(StudentEntity);
  const query = contract.students.list.query.parse({ q, ...more });
  const fields = listFieldsFor(repo.metadata, contract.students.list.query);
  const { walk } = pageStatements(repo, organizationId, query, fields);
  const [row] = await server.dataSource.query(walk!.text, walk!.values);
  return { found: Number(row?.__total), held: row?.__window ?? null };
};

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
    let orgId: string;
    /** A small school's, which all fit in the walk's window. */
    let smallId: string;
    let small: Student[];

    beforeAll(async () => {
      server = await startServer();
      orgId = (await server.createOrganization()).id;
      ({ token } = await server.createToken(orgId, ['students:read']));
      await server.insertStudents(orgId, demoStudents(orgId, STUDENTS, Date.now()));
      smallId = (await server.createOrganization({ name: 'Small School' })).id;
      small = demoStudents(smallId, 400, Date.now(), [], 1);
      await server.insertStudents(smallId, small);
      await server.dataSource.query('VACUUM ANALYZE students');
    }, 120_000);
    afterAll(() => server.close());

    async function readBy(query: QueryOf<TypedClient['students']['list']>) {
      const before = await counters(server);
      expectStatus(await typedClient(server, token).students.list({ query }), 200);
      for (let waited = 0; waited < 30_000; waited += 100) {
        const after = await counters(server);
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
      const read = await readBy({ q: DOMAIN });
      expect(read.trigramScans).toBe(0);
      // Reading the organization's index whole would be 6,000 entries.
      expect(read.entriesRead).toBeLessThan(STUDENTS / 8);
    });

    it('a q the probe finds sparse is counted and paged from the trigram indexes', async () => {
      // S000100 to S000199: the oldest students, none among the newest the probe reads.
      expect((await readBy({ q: 'S0001' })).trigramScans).toBeGreaterThan(0);
    });

    // Last: their statements run on this test's own connection, whose counts PostgreSQL reports
    // late.
    it("a small school's search is answered by its walk: the window held every row", async () => {
      // S000010 to S000019: too few for the probe, but the school's 400 rows fit in the window,
      // so the walk reads them all and what it found is the exact count.
      expect(matching(small, 'S00001')).toHaveLength(10);
      expect(await walkOf(server, smallId, 'S00001')).toEqual({ found: 10, held: '400' });
      // S005900 to S005999, the newest 100: dense enough to walk, and the organization's 6,000
      // rows fit in the window, so what the walk found is the exact count.
      expect(STUDENTS).toBeLessThanOrEqual(POSTGRES_WALK_ROWS);
      expect(await walkOf(server, orgId, 'S0059')).toEqual({ found: 100, held: String(STUDENTS) });
      // A broad q reaches the bound: the rows are not counted.
      expect(await walkOf(server, orgId, DOMAIN)).toEqual({
        found: SEARCH_COUNT_AHEAD + 25,
        held: null,
      });
    });

    it('a broad q a filter narrows to a few percent, or on a deep page, is answered by the walk', async () => {
      // Each walks past 3,000 rows. A trigram bitmap, built whole over the table, costs 200+ ms
      // for either at a million rows (a 503). Withdrawn: about 5 % of the students.
      const bound = (perPage: number, page = 1) => page * perPage + SEARCH_COUNT_AHEAD;
      expect(await walkOf(server, orgId, DOMAIN, { status: 'withdrawn' })).toEqual({
        found: bound(25),
        held: null,
      });
      expect(await walkOf(server, orgId, DOMAIN, { per_page: 50, page: 60 })).toEqual({
        found: bound(50, 60),
        held: null,
      });
    });
  },
);
