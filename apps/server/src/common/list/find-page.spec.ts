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
import { Organization } from '../../organizations/organization.entity';
import { Payment } from '../../payments/payment.entity';
import { Student } from '../../students/student.entity';
import { Sql } from '../../database/sql';
import {
  ListCollection,
  pageBounds,
  pageStatements,
  POSTGRES_WALK_ROWS,
  walkAnswer,
} from './find-page';
import { pageEnvelope } from './page-envelope';
import { encodeListCursor } from './list-cursor';
import { listFieldsFor } from './list-fields';

/**
 * The query plans behind "page 300 costs about what page 1 costs": on SQLite, every sortable
 * order is served by an index (no temp B-tree sort), and the OFFSET walk reads ids from a
 * covering index rather than whole rows.
 */
/** A migrated SQLite database in a temporary directory, for the enclosing describe's tests. */
function migratedDatabase(): { dataSource: () => DataSource } {
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
  return { dataSource: () => dataSource };
}

describe(pageStatements.name, () => {
  const database = migratedDatabase();

  type PlanRow = { id: number; parent: number; detail: string };

  async function plan(rawQuery: Record<string, string>) {
    const query = contract.students.list.query.parse(rawQuery);
    const { page, count, pageWithTotal, every } = pageStatements(
      database.dataSource().getRepository(Student),
      'org_x',
      query,
      listFieldsFor(database.dataSource().getMetadata(Student), contract.students.list.query),
    );
    const explain = (statement: CompiledSql): Promise<PlanRow[]> =>
      database.dataSource().query(`EXPLAIN QUERY PLAN ${statement.text}`, statement.values);
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
      const repo = database.dataSource().getRepository(entity);
      const fields = listFieldsFor(repo.metadata, listQuery);
      const indexed: { name: string }[] = await database
        .dataSource()
        .query(`SELECT name FROM pragma_table_info('${repo.metadata.tableName}_search')`);
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
 * a total that contradicts the rows beside it.
 */
describe(pageBounds.name, () => {
  const query = (raw: Record<string, string>) => contract.students.list.query.parse(raw);
  const exact = (total: number) => ({ total, raised: false });
  it('counts a short first page by its rows, whatever the count said', () => {
    expect(pageBounds(query({}), 0, 1)).toEqual(exact(1));
    expect(pageBounds(query({}), 7, 3)).toEqual(exact(3));
    expect(pageBounds(query({}), 4, 0)).toEqual(exact(0));
  });
  it('counts a short later page as the full pages before it plus its rows', () => {
    expect(pageBounds(query({ page: '3', per_page: '10' }), 0, 4)).toEqual(exact(24));
    expect(pageBounds(query({ page: '3', per_page: '10' }), 30, 4)).toEqual(exact(24));
  });
  it('raises a count below a full page past its rows, as a lower bound; keeps one above', () => {
    const page2 = query({ page: '2', per_page: '10' });
    expect(pageBounds(page2, 5, 10)).toEqual({ total: 21, raised: true });
    expect(pageBounds(page2, 20, 10)).toEqual(exact(20));
    expect(pageBounds(page2, 90, 10)).toEqual(exact(90));
  });
  it('keeps the count for an empty page past the end and under a cursor', () => {
    expect(pageBounds(query({ page: '5', per_page: '10' }), 12, 0)).toEqual(exact(12));
    const cursor = encodeListCursor('org_x', 'students', {
      page: 2,
      sort: '-created_at',
      values: ['2026-01-01T00:00:00.000Z'],
      id: '1',
    });
    expect(pageBounds(query({ per_page: '10', cursor }), 0, 3)).toEqual(exact(0));
  });
});

/**
 * The same through `find` and the page's envelope, on a real database: students written between
 * the count's statement and the page's (the page's statement waits for them), as another
 * connection's commit would land on PostgreSQL.
 */
describe(`${ListCollection.name}.find beside a write between its count and its page`, () => {
  const database = migratedDatabase();
  const url = { base: 'http://127.0.0.1/v1/students', search: '' };
  let organization = 0;

  async function findBesideWrite(raw: Record<string, string>, written: number) {
    const dataSource = database.dataSource();
    const sql = new Sql(dataSource);
    const repo = dataSource.getRepository(Student);
    const students = ListCollection.of(sql, repo, contract.students.list.query);
    // Any filter but `status` is counted rather than read from the tallies (a second statement).
    const query = contract.students.list.query.parse({ grade_level: '3', ...raw });
    organization += 1;
    const org = `org_race${organization}`;
    const now = new Date();
    await dataSource
      .getRepository(Organization)
      .insert({ id: org, name: 'Race', plan: 'standard', createdAt: now, updatedAt: now });
    const { page } = students.statements(org, query);
    const select = sql.select.bind(sql);
    jest.spyOn(sql, 'select').mockImplementation(async (text, params) => {
      if (text === page.text) {
        await repo.insert(
          Array.from({ length: written }, (_, i) => ({
            id: `stu_race${organization}x${i}`,
            organizationId: org,
            studentNumber: `R-${i}`,
            firstName: 'Race',
            lastName: 'Condition',
            status: 'active',
            gradeLevel: 3,
            createdAt: now,
            updatedAt: now,
          })),
        );
      }
      return select(text, params);
    });
    const { rows, total } = await students.find(org, query);
    return { rows, ...pageEnvelope(url, query, total) };
  }

  it('a short page answers its own rows as the exact total', async () => {
    const { rows, meta, links } = await findBesideWrite({}, 1);
    expect(rows).toHaveLength(1);
    expect(meta).toMatchObject({ total: 1, total_pages: 1, total_exact: true });
    expect(links.next).toBeNull();
  });

  it('a full page answers a lower bound past it, and a next link', async () => {
    const { rows, meta, links } = await findBesideWrite({ per_page: '2' }, 3);
    expect(rows).toHaveLength(2);
    expect(meta).toMatchObject({ total: 3, total_pages: 2, total_exact: false });
    expect(links.next).not.toBeNull();
  });
});
