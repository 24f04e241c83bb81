import { DataSource, QueryFailedError } from 'typeorm';
import { loadConfig } from '../src/config/env';
import { dataSourceOptions } from '../src/database/data-source';
import { Sql } from '../src/database/sql';
import { insertRows } from '../src/database/write-rows';
import { Organization } from '../src/organizations/organization.entity';
import { APP_SCHEMA } from '../src/schema';
import { emptyDatabase } from './support/empty-database';

/**
 * `Sql.select` goes straight to the driver (the list's statements on every request) and
 * `insertRows` binds positional placeholders: on the database this run uses (SQLite, or
 * PostgreSQL with TEST_DATABASE_URL), both must read and write what TypeORM's own paths do.
 */
describe('Sql.select and insertRows', () => {
  let dataSource: DataSource;
  let sql: Sql;
  let drop: () => Promise<void>;
  const at = new Date('2026-01-02T03:04:05.678Z');
  const organizations = Array.from({ length: 3 }, (_, i) =>
    Object.assign(new Organization(), {
      id: `org_select_${i}`,
      name: `Select ${i} 'quoted'`,
      plan: 'standard' as const,
      rateLimitPerMinute: 100 + i,
      createdAt: at,
      updatedAt: at,
    }),
  );

  beforeAll(async () => {
    const database = await emptyDatabase();
    drop = database.drop;
    dataSource = new DataSource(
      dataSourceOptions(loadConfig({ DATABASE_URL: database.url }).database, APP_SCHEMA),
    );
    await dataSource.initialize();
    await dataSource.runMigrations();
    sql = new Sql(dataSource);
    await insertRows(dataSource.manager, Organization, organizations);
  });
  afterAll(async () => {
    await dataSource.destroy();
    await drop();
  });

  const text =
    'SELECT * FROM "organizations" WHERE id IN (:...ids) AND rate_limit_per_minute >= :min ORDER BY id';

  it('reads the rows insertRows wrote, as TypeORM reads them back', async () => {
    const params = { ids: organizations.map((o) => o.id), min: 101 };
    const selected = await sql.select(text, params);
    expect(selected).toEqual(await sql.query(dataSource.manager, text, params));
    expect(selected.map((row) => row.id)).toEqual(['org_select_1', 'org_select_2']);
    const stored = await dataSource
      .getRepository(Organization)
      .findOneByOrFail({ id: 'org_select_2' });
    expect(stored).toMatchObject({ name: "Select 2 'quoted'", rateLimitPerMinute: 102 });
    expect(stored.createdAt.toISOString()).toBe(at.toISOString());
  });

  it('fails as TypeORM fails: a QueryFailedError carrying the statement', async () => {
    const failure = await sql.select('SELECT missing_column FROM "organizations"').catch((e) => e);
    expect(failure).toBeInstanceOf(QueryFailedError);
    expect((failure as QueryFailedError).query).toContain('missing_column');
  });
});
