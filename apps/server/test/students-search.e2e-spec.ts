import { contract } from '@platform/contract';
import {
  indexedSearch,
  pageStatements,
  POSTGRES_SEARCH_COUNT_SETTINGS,
} from '../src/common/list/find-page';
import { listFieldsFor } from '../src/common/list/list-fields';
import type { CompiledSql } from '../src/database/sql';
import { Student as StudentEntity } from '../src/students/student.entity';
import { demoStudents, type Student } from '../src/testing';
import { expectStatus, type QueryOf, typedClient, type TypedClient } from './support/api';
import { migratedUpTo } from './support/empty-database';
import { matching, searchTotal } from './support/search';
import { DATABASE_KIND, problemOf, rawCall, startServer, type TestServer } from './support/server';

/**
 * `q` is served by trigram indexes (FTS5 on SQLite, pg_trgm on PostgreSQL) rather than by
 * reading every row of the organization, and runs under a time budget. Speed itself is measured
 * by bench/search.bench.js; here: the plan the database picks for the server's own SQL, the
 * results, and the 503 past the budget.
 */
const LARGE = 20_000;

const DAY = 86_400_000;

type PlanStep = string;

describe('GET /v1/students?q= (trigram-indexed search)', () => {
  let server: TestServer;
  let orgId: string;
  let token: string;
  let otherToken: string;
  let rows: Student[];
  let theirs: Student[];

  beforeAll(async () => {
    server = await startServer();
    orgId = (await server.createOrganization()).id;
    ({ token } = await server.createToken(orgId, ['students:read', 'students:write']));
    const base = Date.parse('2026-01-01T00:00:00.000Z');
    rows = demoStudents(orgId, LARGE, base);
    // Needles with what the index must take literally: LIKE wildcards, FTS5 syntax, non-ASCII case.
    const needles: Partial<Student>[] = [
      { firstName: 'ÉMILE', lastName: 'Zola', email: 'x_y%z@needle.example' },
      { firstName: 'Ann', lastName: 'O"Neil AND Sons', email: null },
      { firstName: 'Bo', lastName: 'Li', email: 'bo.li*@needle.example' },
    ];
    needles.forEach((needle, i) => Object.assign(rows[i * 7]!, needle));
    await server.insertStudents(orgId, rows);

    const other = await server.createOrganization({ name: 'Other School' });
    ({ token: otherToken } = await server.createToken(other.id, ['students:read']));
    // The same names and numbers in another organization, which no search of ours may count.
    theirs = await server.insertStudents(other.id, 500, base + 400 * DAY);
    // What autovacuum does after a bulk insert: moves the GIN indexes' pending entries into the
    // index proper and refreshes the statistics the planner chooses by.
    if (DATABASE_KIND === 'postgres') await server.dataSource.query('VACUUM ANALYZE students');
  }, 120_000);
  afterAll(() => server.close());

  /** A successful list; the typed client encodes `q` (so `'x%z'` goes out as `q=x%25z`). */
  const list = async (query: QueryOf<TypedClient['students']['list']>, t = token) =>
    expectStatus(await typedClient(server, t).students.list({ query }), 200);
  const ids = (body: { data: { id: string }[] }) => body.data.map((s) => s.id);

  /** What `q` promises: a case-insensitive substring of a name, the email or the number. */
  /** Code-point order, as SQLite's BINARY and PostgreSQL's C.UTF-8 collation sort. */
  const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const newestFirst = (students: Student[]) =>
    [...students].sort(
      (a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.id.localeCompare(a.id),
    );

  /** The steps of the plan the database picks for the server's own count and page SQL. */
  async function plans(rawQuery: Record<string, string>, organizationId = orgId) {
    const query = contract.students.list.query.parse(rawQuery);
    const repo = server.dataSource.getRepository(StudentEntity);
    const { count, page } = pageStatements(
      repo,
      organizationId,
      query,
      listFieldsFor(repo.metadata, contract.students.list.query),
      Date.now(),
    );
    const explain = async (statement: CompiledSql, settings: readonly string[] = []) => {
      if (DATABASE_KIND === 'sqlite') {
        const steps: { detail: string }[] = await server.dataSource.query(
          `EXPLAIN QUERY PLAN ${statement.text}`,
          statement.values,
        );
        return steps.map((s) => s.detail);
      }
      // Under the planner settings the server runs the statement with, in a transaction as it does.
      const [{ 'QUERY PLAN': plan }] = await server.dataSource.transaction(async (tx) => {
        for (const setting of settings) await tx.query(`SET LOCAL ${setting} = off`);
        return tx.query(`EXPLAIN (FORMAT JSON) ${statement.text}`, statement.values);
      });
      const steps: PlanStep[] = [];
      const walk = (node: Record<string, unknown>) => {
        steps.push(
          [node['Node Type'], node['Index Name'] ?? node['Relation Name'] ?? ''].join(' ').trim(),
        );
        for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? [])
          walk(child);
      };
      walk((plan as { Plan: Record<string, unknown> }[])[0]!.Plan);
      return steps;
    };
    const countSettings = indexedSearch(query) ? POSTGRES_SEARCH_COUNT_SETTINGS : [];
    return { count: await explain(count, countSettings), page: await explain(page) };
  }

  describe('the plan', () => {
    it.each([
      ['a surname', { q: 'nakamura' }],
      ['a student number', { q: 'S012345' }],
      ['with a filter and another sort', { q: 'olivia.pat', status: 'active', sort: 'last_name' }],
    ])('for %s starts from the trigram index, never from every row', async (_what, query) => {
      const { count, page } = await plans(query);
      for (const steps of [count, page]) {
        if (DATABASE_KIND === 'sqlite') {
          // The index's matches drive the loop (CROSS JOIN: outermost), each then read by key.
          expect(steps).toContainEqual(
            expect.stringMatching(/^SCAN students_search VIRTUAL TABLE INDEX \d+:M/),
          );
          // Every read of the students table is one row by id: no scan of the table and no
          // walk over the organization's idx_students_org_* range, whatever its size.
          const studentReads = steps.filter((s) => /^(SCAN|SEARCH) students /.test(s));
          expect(new Set(studentReads)).toEqual(
            new Set(['SEARCH students USING INDEX sqlite_autoindex_students_1 (id=?)']),
          );
        } else {
          expect(steps.filter((s) => /^Seq Scan students$/.test(s))).toEqual([]);
        }
      }
      if (DATABASE_KIND === 'postgres') {
        // The count must see every match: one trigram index scan per searchable column. For a
        // page the planner may instead walk the sort index and stop at LIMIT when matches are
        // dense, which reads about (page × per_page ÷ share of rows matching) rows.
        const trigramScans = count.filter((s) =>
          /^Bitmap Index Scan idx_students_\w+_trgm$/.test(s),
        );
        expect(trigramScans).toHaveLength(4);
      }
    });
  });

  describe('the plan of a 1–2 character q', () => {
    it.each([
      ['a surname', { q: 'Li' }],
      ['with a filter and another sort', { q: 'o', status: 'active', sort: 'last_name' }],
    ])('for %s reads only the organization, by its index', async (_what, query) => {
      // The small organization (500 of 20,500 rows): PostgreSQL may rightly seq-scan for the big
      // one, whose rows are nearly the whole table, but a small one must not read the others'.
      const otherOrgId = theirs[0]!.organizationId;
      const { count, page } = await plans(query, otherOrgId);
      for (const steps of [count, page]) {
        // No trigram to look up: the scan walks the organization's entries of an
        // (organization_id, …) index, never the whole table.
        expect(steps.join('\n')).not.toMatch(/students_search|^Seq Scan students$/m);
        // Every read of students goes through an index that starts with organization_id (or
        // fetches the page's rows by id).
        const reads = steps.filter((s) =>
          DATABASE_KIND === 'sqlite'
            ? /^(SCAN|SEARCH) students /.test(s)
            : /Index( Only)? Scan /.test(s),
        );
        expect(reads.length).toBeGreaterThan(0);
        for (const read of reads) {
          expect(read).toMatch(
            DATABASE_KIND === 'sqlite'
              ? /^SEARCH students USING (COVERING )?INDEX \w+ \((organization_id=\?|id=\?)/
              : /Index( Only)? Scan ((idx|uq)_students_org_\w+|students_pkey)$/,
          );
        }
      }
    });
  });

  describe('the results', () => {
    it.each(['nakamura', 'NAKAMURA', 'S01234', 'olivia.patel1', 'gARcía', 'zhang', 'and'])(
      'q=%s: every match of the organization, counted and paged in order',
      async (q) => {
        const expected = newestFirst(matching(rows, q));
        expect(expected.length).toBeGreaterThan(0);
        const first = await list({ q, per_page: 100 });
        expect(first.status).toBe(200);
        expect(first.body.meta).toMatchObject(searchTotal(expected.length, 100));
        expect(ids(first.body)).toEqual(expected.slice(0, 100).map((s) => s.id));
        if (expected.length > 100) {
          const second = await list({ q, per_page: 100, page: 2 });
          expect(ids(second.body)).toEqual(expected.slice(100, 200).map((s) => s.id));
        }
      },
    );

    it('a page past the end is empty with the right total; no match is a total of 0', async () => {
      const res = await list({ q: 'zhang', per_page: 100, page: 999 });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([]);
      expect(res.body.meta).toMatchObject({ page: 999, total: matching(rows, 'zhang').length });
      const none = await list({ q: 'qxqxq' });
      expect(none.body.data).toEqual([]);
      expect(none.body.meta).toMatchObject({ total: 0, total_pages: 0 });
    });

    it('takes wildcards, quotes and search syntax literally', async () => {
      for (const [q, who] of [
        ['x_y%', 0],
        ['o"neil and', 7],
        ['li*@', 14],
      ] as const) {
        const res = await list({ q });
        expect(res.status).toBe(200);
        expect(ids(res.body)).toEqual([rows[who]!.id]);
      }
      expect((await list({ q: 'x%z' })).body.meta.total).toBe(0);
    });

    it('folds case beyond ASCII: q=émile finds ÉMILE', async () => {
      expect(ids((await list({ q: 'émile' })).body)).toEqual([rows[0]!.id]);
    });

    it('combines with filters and sort', async () => {
      const res = await list({
        q: 'olivia',
        status: 'graduated,withdrawn',
        sort: 'last_name',
        per_page: 100,
      });
      const expected = matching(rows, 'olivia')
        .filter((s) => s.status === 'graduated' || s.status === 'withdrawn')
        .sort((a, b) => compare(a.lastName, b.lastName) || compare(a.id, b.id));
      expect(res.body.meta.total).toBe(expected.length);
      expect(ids(res.body)).toEqual(expected.slice(0, 100).map((s) => s.id));
    });

    it("never finds another organization's students, in either direction", async () => {
      const number = theirs[3]!.studentNumber;
      expect(matching(rows, number).length).toBe(1); // ours has the same number
      const mine = await list({ q: number });
      expect(ids(mine.body)).toEqual([rows[3]!.id]);
      const other = await list({ q: number }, otherToken);
      expect(ids(other.body)).toEqual([theirs[3]!.id]);
      expect((await list({ q: 'needle.example' }, otherToken)).body.meta.total).toBe(0);
    });

    it('follows every write: create, rename, delete', async () => {
      const api = typedClient(server, token);
      const created = expectStatus(
        await api.students.create({
          body: { student_number: 'Q-NEW-1', first_name: 'Quetzal', last_name: 'Brightwater' },
        }),
        201,
      );
      const byId = { params: { id: created.body.id } };
      expect(ids((await list({ q: 'brightwater' })).body)).toEqual([created.body.id]);

      expect((await api.students.update({ ...byId, body: { last_name: 'Dunmore' } })).status).toBe(
        200,
      );
      expect((await list({ q: 'brightwater' })).body.meta.total).toBe(0);
      expect(ids((await list({ q: 'dunmore' })).body)).toEqual([created.body.id]);
      // A change to other fields keeps the row findable.
      await api.students.update({ ...byId, body: { grade_level: 3 } });
      expect(ids((await list({ q: 'quetzal' })).body)).toEqual([created.body.id]);

      expect((await api.students.delete(byId)).status).toBe(200);
      expect((await list({ q: 'quetzal' })).body.meta.total).toBe(0);
    });

    it('an empty q is a 400 naming query.q', async () => {
      // An empty q is beyond the contract's types' intent and must reach the wire as `q=`: raw.
      const res = await rawCall(server, '/v1/students?q=', { token });
      expect(res.status).toBe(400);
      expect(problemOf(res).errors).toEqual([
        expect.objectContaining({ path: 'query.q', message: 'q must not be empty' }),
      ]);
    });
  });

  /**
   * 1–2 characters have no trigram to look up: they scan the organization's rows, with the same
   * results a longer q would give. v1 accepted them before the index; refusing them would break
   * searches for two-letter surnames.
   */
  describe('a q of 1 or 2 characters', () => {
    it.each(['Li', 'li', 'LI', 'o', 'S0'])(
      'q=%s: every match of the organization, case-insensitively, counted and paged',
      async (q) => {
        const expected = newestFirst(matching(rows, q));
        expect(expected.length).toBeGreaterThan(100);
        const first = await list({ q, per_page: 100 });
        expect(first.status).toBe(200);
        // Counted up to 100 + SEARCH_COUNT_AHEAD matches: past that, a flagged lower bound.
        expect(first.body.meta).toMatchObject(searchTotal(expected.length, 100));
        expect(ids(first.body)).toEqual(expected.slice(0, 100).map((s) => s.id));
        const second = await list({ q, per_page: 100, page: 2 });
        expect(ids(second.body)).toEqual(expected.slice(100, 200).map((s) => s.id));
      },
    );

    it('finds a two-letter surname with filters and sort, like a longer q', async () => {
      const res = await list({ q: 'Li', status: 'active', sort: 'last_name', per_page: 100 });
      const expected = matching(rows, 'li')
        .filter((s) => s.status === 'active')
        .sort((a, b) => compare(a.lastName, b.lastName) || compare(a.id, b.id));
      expect(res.body.meta).toMatchObject(searchTotal(expected.length, 100));
      expect(ids(res.body)).toEqual(expected.slice(0, 100).map((s) => s.id));
    });

    it("never finds or counts another organization's students, in either direction", async () => {
      // The other organization holds the same demo names: its matches must not leak into ours.
      expect(matching(theirs, 'li').length).toBeGreaterThan(0);
      const mine = await list({ q: 'li', per_page: 100 });
      expect(mine.body.meta).toMatchObject(searchTotal(matching(rows, 'li').length, 100));
      const other = await list({ q: 'li', per_page: 100 }, otherToken);
      expect(other.body.meta).toMatchObject(searchTotal(matching(theirs, 'li').length, 100));
      expect(ids(other.body)).toEqual(
        newestFirst(matching(theirs, 'li'))
          .slice(0, 100)
          .map((s) => s.id),
      );
      // The needle's `%` exists only in our organization.
      expect((await list({ q: '%' }, otherToken)).body.meta.total).toBe(0);
    });

    it('folds case beyond ASCII and takes wildcards literally, as a longer q does', async () => {
      // ÉMILE is the oldest of the matches: the last page holds it.
      const accented = newestFirst(matching(rows, 'é'));
      expect(accented.at(-1)!.id).toBe(rows[0]!.id);
      const res = await list({ q: 'é', per_page: 1, page: accented.length });
      expect(res.body.meta.total).toBe(accented.length);
      expect(ids(res.body)).toEqual([rows[0]!.id]);
      expect(ids((await list({ q: 'y%' })).body)).toEqual([rows[0]!.id]);
      expect(ids((await list({ q: '"N' })).body)).toEqual([rows[7]!.id]);
    });
  });

  describe('the time budget', () => {
    let tight: TestServer;

    // A second server with a 1 ms budget on the same database: the 20,000 students above.
    beforeAll(async () => {
      tight = await startServer({ SEARCH_TIMEOUT: '1ms' }, { databaseUrl: server.databaseUrl });
    });
    afterAll(() => tight.close());

    it('a search that cannot finish in time is a 503 that says how to narrow it', async () => {
      // Matches nearly every student, and page 100 counts 10,200 of them (past what PostgreSQL's
      // walk of a broad q takes on, POSTGRES_WALK_ROWS): far more than 1 ms of work on any machine.
      const res = await typedClient(tight, token).students.list({
        query: { q: 'demo-school', per_page: 100, page: 100 },
      });
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.headers.get('retry-after')).toBe('2');
      expect(res.body).toMatchObject({
        code: 'service_unavailable',
        detail: expect.stringMatching(/within its 1 ms budget; use a longer or more specific q/),
      });
    });

    it.each([
      ['matches many students', 'Li'],
      ['matches none', 'qx'],
      ['is one character', 'z'],
    ])(
      'a 1–2 character q that %s scans within the budget: a 503, not a stall',
      async (_what, q) => {
        // The scan reads all 20,000 rows of the organization (the count needs every match);
        // the deadline must be checked on each row read, matching or not.
        const res = await typedClient(tight, token).students.list({ query: { q } });
        expect(res.status).toBe(503);
        expect(res.headers.get('retry-after')).toBe('2');
        expect(res.body).toMatchObject({
          code: 'service_unavailable',
          detail: expect.stringMatching(/within its 1 ms budget; use a longer or more specific q/),
        });
      },
    );

    // The trigram index is the whole database's: from it, the other school's search would read
    // our 18,000 matches first. Its 500 rows are scanned instead (SQLITE_SCAN_WHOLE), in less
    // time than any budget, so none is set.
    (DATABASE_KIND === 'sqlite' ? it : () => undefined)(
      "SQLite: a small school's search reads its own rows, not every organization's matches",
      async () => {
        const expected = newestFirst(matching(theirs, 'demo-school'));
        expect(expected.length).toBeGreaterThan(100);
        const query = { q: 'demo-school', per_page: 100 };
        const res = await typedClient(tight, otherToken).students.list({ query });
        const { meta, data } = expectStatus(res, 200).body;
        expect(meta).toMatchObject(searchTotal(expected.length, 100));
        expect(data.map((s) => s.id)).toEqual(expected.slice(0, 100).map((s) => s.id));
      },
    );

    it('lists without q have no budget, and the server goes on serving', async () => {
      const res = expectStatus(
        await typedClient(tight, token).students.list({ query: { per_page: 5 } }),
        200,
      );
      // Unfiltered: the whole collection's tally, exact.
      expect(res.body.meta).toMatchObject({ total: 20_000, total_exact: true });
    });
  });
});

/** The migration on a database that already holds data: existing rows become searchable. */
describe('the search-index migration on an existing database', () => {
  it('indexes the rows already there, and drops cleanly', async () => {
    const org = { id: 'org_01JSEARCHM1GRAT10N000000000' };
    const { insert, migrate, undo, drop } = await migratedUpTo('SearchIndex1766000000000', [
      org.id,
    ]);
    const now = new Date();
    const students = demoStudents(org.id, 300, now.getTime());
    await insert(StudentEntity, students);
    const after = await migrate();
    try {
      const search = async (q: string) => {
        const query = contract.students.list.query.parse({ q, per_page: '100' });
        const repo = after.getRepository(StudentEntity);
        const { count } = pageStatements(
          repo,
          org.id,
          query,
          listFieldsFor(repo.metadata, contract.students.list.query),
          Date.now() + 60_000,
        );
        const [{ total }] = await after.query(count.text, count.values);
        return Number(total);
      };
      const target = students[123]!;
      expect(await search(target.studentNumber)).toBe(1);
      expect(await search(target.lastName.toUpperCase())).toBe(
        students.filter((s) => s.lastName.toLowerCase().includes(target.lastName.toLowerCase()))
          .length,
      );
      await undo(after);
    } finally {
      await after.destroy();
      await drop();
    }
  });
});
