import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { contract } from '@platform/contract';
import { DataSource } from 'typeorm';
import { loadConfig } from '../../config/env';
import { dataSourceOptions } from '../../database/data-source';
import { APP_SCHEMA } from '../../schema';
import type { CompiledSql } from '../../database/sql';
import { Course } from '../../courses/course.entity';
import { Exam } from '../../exams/exam.entity';
import { Payment } from '../../payments/payment.entity';
import { Student } from '../../students/student.entity';
import { pageBounds, pageStatements, POSTGRES_WALK_ROWS, walkAnswer } from './find-page';
import { encodeListCursor } from './list-cursor';
import { listFieldsFor } from './list-fields';

/**
 * The query plans behind "page 300 costs about what page 1 costs": on SQLite, every sortable
 * order is served by an index (no temp B-tree sort), and the OFFSET walk reads ids from a
 * covering index rather than whole rows.
 */
describe(pageStatements.name, () => {
  let dir: string;
  let dataSource: DataSource;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'plan-'));
    dataSource = new DataSource(
      dataSourceOptions(
        loadConfig({ DATABASE_URL: `sqlite:${dir}/db.sqlite` }).database,
        APP_SCHEMA,
      ),
    );
    await dataSource.initialize();
    await dataSource.runMigrations();
  });
  afterAll(async () => {
    await dataSource.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  type PlanRow = { id: number; parent: number; detail: string };

  async function plan(rawQuery: Record<string, string>) {
    const query = contract.students.list.query.parse(rawQuery);
    const { page, count, pageWithTotal, every } = pageStatements(
      dataSource.getRepository(Student),
      'org_x',
      query,
      listFieldsFor(dataSource.getMetadata(Student), contract.students.list.query),
    );
    const explain = (statement: CompiledSql): Promise<PlanRow[]> =>
      dataSource.query(`EXPLAIN QUERY PLAN ${statement.text}`, statement.values);
    const pageRows = await explain(page);
    const subquery = pageRows.find((r) => r.detail.startsWith('LIST SUBQUERY'));
    return {
      /** The steps of the inner id walk (LIMIT/OFFSET), which is where deep pages cost. */
      idWalk: pageRows.filter((r) => r.parent === subquery?.id).map((r) => r.detail),
      /** The outer steps: fetch the page's rows by id. */
      outer: pageRows.filter((r) => r.parent === 0).map((r) => r.detail),
      count: (await explain(count)).map((r) => r.detail),
      /** Page and tally in one statement, when the total is tallied. */
      withTotal: pageWithTotal && (await explain(pageWithTotal)).map((r) => r.detail),
      /** Every matching row, unpaged (an export). */
      every: every && (await explain(every)).map((r) => r.detail),
    };
  }

  // An export streams a million rows: read in index order as they come, never collected first.
  it.each([
    [{ sort: 'created_at' }, 'idx_students_org_created (organization_id=?)'],
    [
      { sort: 'created_at', status: 'active' },
      'idx_students_org_status_created (organization_id=? AND status=?)',
    ],
  ])('the unpaged read of %j walks one index, with no sort step', async (query, index) => {
    expect((await plan(query)).every).toEqual([`SEARCH students USING INDEX ${index}`]);
  });

  it.each([
    ['-created_at', 'idx_students_org_created'],
    ['created_at', 'idx_students_org_created'],
    ['-updated_at', 'idx_students_org_updated'],
    ['last_name', 'idx_students_org_last_name'],
    ['-first_name', 'idx_students_org_first_name'],
  ])('sort=%s walks %s for ids only, with no sort step', async (sort, index) => {
    const { idWalk, outer } = await plan({ sort, page: '300' });
    expect(idWalk).toEqual([`SEARCH students USING COVERING INDEX ${index} (organization_id=?)`]);
    expect(outer).toContain('SEARCH students USING INDEX sqlite_autoindex_students_1 (id=?)');
  });

  // A field added to `search` without a migration would make every search fail on SQLite.
  it.each([
    ['students', Student, contract.students.list.query],
    ['courses', Course, contract.courses.list.query],
    ['exams', Exam, contract.exams.list.query],
    ['payments', Payment, contract.payments.list.query],
  ] as const)(
    '%s: q searches exactly the columns of the trigram index',
    async (_table, entity, listQuery: object) => {
      const repo = dataSource.getRepository(entity);
      const fields = listFieldsFor(repo.metadata, listQuery);
      const indexed: { name: string }[] = await dataSource.query(
        `SELECT name FROM pragma_table_info('${repo.metadata.tableName}_search')`,
      );
      expect(indexed.map((c) => c.name).sort()).toEqual(
        (fields.search ?? [])
          .map((property) => repo.metadata.findColumnWithPropertyName(property)!.databaseName)
          .sort(),
      );
    },
  );

  it('counts a filter the tallies do not answer from an index, in a bounded subquery', async () => {
    const { count } = await plan({ 'created_at[gte]': '2026-01-01T00:00:00Z' });
    expect(count).toEqual([
      'CO-ROUTINE counted',
      expect.stringMatching(
        /^SEARCH students USING COVERING INDEX \w+ \(organization_id=\? AND created_at>\?\)$/,
      ),
      'SCAN counted',
    ]);
  });

  it.each<Record<string, string>>([{}, { status: 'active' }, { status: 'active,graduated' }])(
    'reads the total of %j from its tally rows by primary key, not from the students',
    async (query) => {
      const { count } = await plan(query);
      expect(count).toEqual([
        expect.stringMatching(
          /^SEARCH list_tallies USING PRIMARY KEY \(organization_id=\? AND collection=\? AND field=\? AND value=\?\)$/,
        ),
      ]);
    },
  );

  it.each<Record<string, string>>([{}, { status: 'active' }])(
    'reads the tallied total of %j with the page, in one statement that walks the page as alone',
    async (query) => {
      const { idWalk, withTotal } = await plan({ ...query, sort: 'last_name', page: '300' });
      expect(withTotal).toEqual(
        expect.arrayContaining([
          'SCALAR SUBQUERY 1',
          expect.stringMatching(/^SEARCH list_tallies USING PRIMARY KEY /),
          'SEARCH students USING INDEX sqlite_autoindex_students_1 (id=?)',
        ]),
      );
      expect(withTotal).toEqual(expect.arrayContaining(idWalk));
    },
  );

  it('keeps a counted total a statement of its own', async () => {
    const { withTotal } = await plan({ 'created_at[gte]': '2026-01-01T00:00:00Z' });
    expect(withTotal).toBeUndefined();
  });
});

/** What a PostgreSQL walk's first row says: the page and total from it, or the trigram search. */
describe(walkAnswer.name, () => {
  const cap = 225;
  it('answers with the bound, inexact, when the walk reached it', () => {
    expect(walkAnswer({ __total: '225', __window: null }, cap)).toEqual({ total: cap });
  });
  it('answers with what it found, exact, when the window held every row', () => {
    expect(walkAnswer({ __total: '10', __window: '400' }, cap)).toEqual({ total: 10 });
    expect(walkAnswer({ __total: 0, __window: POSTGRES_WALK_ROWS }, cap)).toEqual({ total: 0 });
  });
  it('leaves it to the trigram search when rows were left unwalked', () => {
    expect(walkAnswer({ __total: '100', __window: POSTGRES_WALK_ROWS + 1 }, cap)).toBeUndefined();
    expect(walkAnswer({ __total: '100', __window: '1000000' }, cap)).toBeUndefined();
  });
});

/**
 * On PostgreSQL a list's count and page can each see their own snapshot; the caller must never get
 * a total that contradicts the rows beside it (a CI run once saw `total: 0` beside a delivery).
 */
describe(pageBounds.name, () => {
  const query = (raw: Record<string, string>) => contract.students.list.query.parse(raw);
  it('counts a short first page by its rows, whatever the count said', () => {
    expect(pageBounds(query({}), 0, 1)).toBe(1);
    expect(pageBounds(query({}), 7, 3)).toBe(3);
    expect(pageBounds(query({}), 4, 0)).toBe(0);
  });
  it('counts a short later page as the full pages before it plus its rows', () => {
    expect(pageBounds(query({ page: '3', per_page: '10' }), 0, 4)).toBe(24);
    expect(pageBounds(query({ page: '3', per_page: '10' }), 30, 4)).toBe(24);
  });
  it('raises a count below a full page to at least the rows through it, and keeps one above', () => {
    expect(pageBounds(query({ page: '2', per_page: '10' }), 5, 10)).toBe(20);
    expect(pageBounds(query({ page: '2', per_page: '10' }), 90, 10)).toBe(90);
  });
  it('keeps the count for an empty page past the end and under a cursor', () => {
    expect(pageBounds(query({ page: '5', per_page: '10' }), 12, 0)).toBe(12);
    const cursor = encodeListCursor('org_x', 'students', {
      page: 2,
      sort: '-created_at',
      values: ['2026-01-01T00:00:00.000Z'],
      id: '1',
    });
    expect(pageBounds(query({ per_page: '10', cursor }), 0, 3)).toBe(0);
  });
});
