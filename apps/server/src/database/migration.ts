import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { DialectName } from './dialect';

/**
 * The column types and literals the two databases spell differently; every other part of a
 * migration's SQL is written once. SQLite keeps the names its released migrations used, so the
 * schema text it stores (`sqlite_master`) is the same as before.
 */
export interface DialectTypes {
  /** Millisecond UTC timestamps: `timestamptz(3)` / `datetime` (TypeORM's text form). */
  readonly timestamp: string;
  /** 64-bit integers (amounts in minor units). */
  readonly bigint: string;
  /** Floating point (scores). */
  readonly double: string;
  /** Boolean literals, for defaults and partial indexes. */
  readonly true: string;
  readonly false: string;
}

export function dialectTypes(dialect: DialectName): DialectTypes {
  return dialect === 'postgres'
    ? {
        timestamp: 'timestamptz(3)',
        bigint: 'bigint',
        double: 'double precision',
        true: 'true',
        false: 'false',
      }
    : { timestamp: 'datetime', bigint: 'integer', double: 'real', true: '1', false: '0' };
}

/**
 * Nullable timestamp columns, one per name: when something happened (a state reached, a use),
 * null until it has.
 */
export function timestampColumns(t: DialectTypes, ...names: readonly string[]): string[] {
  return names.map((name) => `${name} ${t.timestamp}`);
}

/**
 * A migration written once for both databases. `name` is what TypeORM records in the
 * `migrations` table and ends with the 13-digit timestamp that orders it; it must never change
 * (a renamed migration runs again). A migration released with one name per dialect keeps both.
 */
export interface Migration {
  readonly name: string | Readonly<Record<DialectName, string>>;
  up(db: QueryRunner, dialect: DialectName): Promise<void>;
  down(db: QueryRunner, dialect: DialectName): Promise<void>;
}

export async function runStatements(db: QueryRunner, statements: readonly string[]): Promise<void> {
  for (const statement of statements) await db.query(statement);
}

/**
 * SQLite cannot alter a CHECK constraint, so such a change rebuilds the table
 * (sqlite.org/lang_altertable, "making other kinds of table schema changes"): its own CREATE
 * statement, as stored, changed by `change`, filled from the old table, which then goes; its
 * indexes are made again. TypeORM runs SQLite migrations with foreign keys off, so dropping the
 * old table cascades nothing.
 */
export async function rebuildTableSqlite(
  db: QueryRunner,
  table: string,
  change: (createStatement: string) => string,
): Promise<void> {
  const [found] = (await db.query(
    `SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`,
    [table],
  )) as { sql: string }[];
  if (!found) throw new Error(`No table ${table} to rebuild`);
  const indexes = (await db.query(
    `SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`,
    [table],
  )) as { sql: string }[];
  const next = `${table}_next`;
  const created = change(found.sql).replace(
    new RegExp(`^CREATE TABLE "?${table}"?`),
    `CREATE TABLE ${next}`,
  );
  await runStatements(db, [
    created,
    `INSERT INTO ${next} SELECT * FROM ${table}`,
    `DROP TABLE ${table}`,
    `ALTER TABLE ${next} RENAME TO ${table}`,
    ...indexes.map((index) => index.sql),
  ]);
}

/** The usual migration: a list of statements up, and one down. */
export function statementsMigration(
  name: Migration['name'],
  up: (types: DialectTypes, dialect: DialectName) => readonly string[],
  down: (types: DialectTypes, dialect: DialectName) => readonly string[],
): Migration {
  return {
    name,
    up: (db, dialect) => runStatements(db, up(dialectTypes(dialect), dialect)),
    down: (db, dialect) => runStatements(db, down(dialectTypes(dialect), dialect)),
  };
}

export function migrationName(migration: Migration, dialect: DialectName): string {
  return typeof migration.name === 'string' ? migration.name : migration.name[dialect];
}

/** The timestamp TypeORM orders by: the name's last 13 digits. */
export function migrationTimestamp(migration: Migration, dialect: DialectName): number {
  const name = migrationName(migration, dialect);
  const match = /(\d{13})$/.exec(name);
  if (!match) throw new Error(`Migration name '${name}' does not end with a 13-digit timestamp`);
  return Number(match[1]);
}

/**
 * TypeORM takes migrations as classes it instantiates itself, so each migration becomes a class
 * bound to the dialect, in timestamp order.
 */
export function migrationClasses(
  dialect: DialectName,
  migrations: readonly Migration[],
): (new () => MigrationInterface)[] {
  return [...migrations]
    .sort((a, b) => migrationTimestamp(a, dialect) - migrationTimestamp(b, dialect))
    .map(
      (migration) =>
        class implements MigrationInterface {
          readonly name = migrationName(migration, dialect);
          up = (db: QueryRunner) => migration.up(db, dialect);
          down = (db: QueryRunner) => migration.down(db, dialect);
        },
    );
}
