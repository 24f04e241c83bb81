import type { EntityManager, EntityTarget, ObjectLiteral, Repository } from 'typeorm';

/**
 * Small helpers for the few hot-path statements we write as SQL text (list pages, token
 * lookup). TypeORM's QueryBuilder rebuilds and re-escapes a query on every call, which the
 * benchmark showed as the largest single cost of a list request; fixed SQL text also lets
 * better-sqlite3's statement cache and PostgreSQL's plan cache work. Values still go through
 * TypeORM's driver for conversion, so SQLite and PostgreSQL store and read dates the same way.
 */
export type Dialect = 'sqlite' | 'postgres';

export function dialectOf(repo: Repository<ObjectLiteral>): Dialect {
  return repo.manager.connection.options.type === 'postgres' ? 'postgres' : 'sqlite';
}

/** Collects bound values and returns the dialect's placeholder for each (`?` or `$n`). */
export class SqlParams {
  readonly values: unknown[] = [];

  constructor(private readonly dialect: Dialect) {}

  add(value: unknown): string {
    this.values.push(value);
    return this.dialect === 'postgres' ? `$${this.values.length}` : '?';
  }
}

export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Column name in the database for an entity property; throws on a typo (a programming error). */
export function columnName(repo: Repository<ObjectLiteral>, property: string): string {
  const column = repo.metadata.findColumnWithPropertyName(property);
  if (!column) throw new Error(`${repo.metadata.name} has no property '${property}'`);
  return column.databaseName;
}

/** A value as the driver binds it for this column (e.g. a Date as UTC text on SQLite). */
export function toDatabaseValue(
  repo: Repository<ObjectLiteral>,
  property: string,
  value: unknown,
): unknown {
  const column = repo.metadata.findColumnWithPropertyName(property);
  return column
    ? (repo.manager.connection.driver.preparePersistentValue(value, column) as unknown)
    : value;
}

/** Every column of the entity's table, quoted, for a SELECT list. */
export function selectList(repo: Repository<ObjectLiteral>, alias?: string): string {
  const prefix = alias ? `${alias}.` : '';
  return repo.metadata.columns.map((c) => `${prefix}${quoteIdentifier(c.databaseName)}`).join(', ');
}

/** Turns a raw row into an entity through the driver's own value conversion. */
export function hydrate<T extends ObjectLiteral>(
  repo: Repository<T>,
  row: Record<string, unknown>,
): T {
  const driver = repo.manager.connection.driver;
  const entity = {} as Record<string, unknown>;
  for (const column of repo.metadata.columns) {
    entity[column.propertyName] = driver.prepareHydratedValue(row[column.databaseName], column);
  }
  return entity as T;
}

/** One raw column value (from a hand-written SELECT) as the entity holds it, e.g. a `Date`. */
export function hydrateValue(
  manager: EntityManager,
  entity: EntityTarget<ObjectLiteral>,
  property: string,
  value: unknown,
): unknown {
  const column = manager.connection.getMetadata(entity).findColumnWithPropertyName(property);
  if (!column) throw new Error(`No property '${property}' on the entity`);
  return manager.connection.driver.prepareHydratedValue(value, column);
}

/** Rows per multi-row INSERT: well under SQLite's and PostgreSQL's bound-parameter limits. */
const INSERT_CHUNK = 500;

/**
 * Multi-row INSERTs of `rows` (seeding, imports, test data). The SQL is built from the entity's
 * TypeORM metadata and values go through the column transformers and the driver's conversions
 * as with `manager.insert`, which spends several times longer per row on the same statements.
 */
export async function insertRows<T extends ObjectLiteral>(
  manager: EntityManager,
  entity: EntityTarget<T>,
  rows: readonly T[],
): Promise<void> {
  const { driver } = manager.connection;
  const metadata = manager.connection.getMetadata(entity);
  const dialect: Dialect = manager.connection.options.type === 'postgres' ? 'postgres' : 'sqlite';
  const head = `INSERT INTO ${quoteIdentifier(metadata.tableName)} (${metadata.columns
    .map((column) => quoteIdentifier(column.databaseName))
    .join(', ')}) VALUES `;
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const params = new SqlParams(dialect);
    const tuples = rows.slice(i, i + INSERT_CHUNK).map((row) => {
      const values = metadata.columns.map((column) =>
        params.add(driver.preparePersistentValue(column.getEntityValue(row, true), column)),
      );
      return `(${values.join(', ')})`;
    });
    await manager.query(head + tuples.join(', '), params.values);
  }
}
