import type { QueryRunner } from 'typeorm';
import { dialectTypes, type Migration, migrationClasses, statementsMigration } from './migration';
import { composeSchema } from './module-schema';

/** Records the statements a migration would run, per dialect. */
function recorder(): { db: QueryRunner; ran: string[] } {
  const ran: string[] = [];
  const db = { query: (sql: string) => Promise.resolve(void ran.push(sql)) } as QueryRunner;
  return { db, ran };
}

const later = statementsMigration(
  'Later1700000000002',
  (t) => [`CREATE TABLE later (at ${t.timestamp}, on_ boolean DEFAULT ${t.true})`],
  () => ['DROP TABLE later'],
);
const perDialect = statementsMigration(
  { sqlite: 'SqliteFirst1700000000001', postgres: 'PostgresFirst1700000000001' },
  (t) => [`CREATE TABLE first (n ${t.bigint}, x ${t.double})`],
  () => ['DROP TABLE first'],
);

describe('migrations written once', () => {
  it('gives TypeORM one class per migration, in timestamp order, under its recorded name', () => {
    const names = (dialect: 'sqlite' | 'postgres') =>
      migrationClasses(dialect, [later, perDialect]).map((Migration) => new Migration().name);
    expect(names('sqlite')).toEqual(['SqliteFirst1700000000001', 'Later1700000000002']);
    expect(names('postgres')).toEqual(['PostgresFirst1700000000001', 'Later1700000000002']);
  });

  it("runs each dialect's spelling of the types", async () => {
    for (const [dialect, expected] of [
      ['sqlite', 'CREATE TABLE later (at datetime, on_ boolean DEFAULT 1)'],
      ['postgres', 'CREATE TABLE later (at timestamptz(3), on_ boolean DEFAULT true)'],
    ] as const) {
      const { db, ran } = recorder();
      const [Later] = migrationClasses(dialect, [later]);
      await new Later!().up(db);
      await new Later!().down(db);
      expect(ran).toEqual([expected, 'DROP TABLE later']);
    }
    expect(dialectTypes('sqlite')).toMatchObject({ bigint: 'integer', double: 'real' });
    expect(dialectTypes('postgres')).toMatchObject({
      bigint: 'bigint',
      double: 'double precision',
    });
  });

  it('refuses two migrations with one timestamp, and a name without one', () => {
    const twin: Migration = { ...later, name: 'Twin1700000000002' };
    expect(() =>
      composeSchema('sqlite', [
        { entities: [], migrations: [later] },
        { entities: [], migrations: [twin] },
      ]),
    ).toThrow('Migrations Later1700000000002 and Twin1700000000002 share a timestamp');
    expect(() => migrationClasses('sqlite', [{ ...later, name: 'NoTimestamp' }, later])).toThrow(
      "Migration name 'NoTimestamp' does not end with a 13-digit timestamp",
    );
  });

  it("composes the modules' entities and migrations", () => {
    class A {}
    class B {}
    const { entities, migrations } = composeSchema('postgres', [
      { entities: [A], migrations: [later] },
      { entities: [B, A], migrations: [perDialect] },
    ]);
    expect(entities).toEqual([A, B]);
    expect(migrations).toEqual([perDialect, later]);
  });
});
