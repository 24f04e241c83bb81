import type { EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';
import type { Driver } from 'typeorm/driver/Driver';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { type DialectName, storedAsIs } from './dialect';
import { dialectOfDataSource, quoteIdentifier } from './sql';

/**
 * Values bound per multi-row INSERT, under SQLite's limit (32,766) and PostgreSQL's (65,535): a
 * batch's 1,000 rows in one statement. Each statement that writes a full-text index flushes its
 * pending terms into a new segment, so fewer statements also mean less merging later.
 */
const STATEMENT_PARAMETERS = 30_000;
/** Rows per unnested INSERT on PostgreSQL (its parameters are one array per column). */
const UNNEST_CHUNK = 5000;
/**
 * The fewest rows written as arrays on PostgreSQL: a batch upsert's 1,000, an import's or a
 * seed's chunks; not the 100 events of a delivery benchmark's transaction (bench/README.md).
 */
const UNNEST_MIN_ROWS = 250;

/**
 * Multi-row INSERTs of `rows` (seeding, imports, outbox fan-out, test data). The SQL is built from
 * the entity's metadata and values go through the column transformers (once: the driver's
 * `preparePersistentValue` applies them) and the driver's conversions as with `manager.insert`,
 * which spends several times longer per row on the same statements, and on SQLite reads back
 * the row of an entity with a column default (insert-rows.spec.ts checks what is stored).
 */
export async function insertRows<T extends ObjectLiteral>(
  manager: EntityManager,
  entity: EntityTarget<T>,
  rows: readonly T[],
  /** Only these columns (database names): a table as an earlier migration left it, in tests. */
  only?: ReadonlySet<string>,
): Promise<void> {
  const metadata = manager.connection.getMetadata(entity);
  const columns = metadata.columns.filter((column) => !only || only.has(column.databaseName));
  await writeRows(manager, metadata.tableName, columns, rows, '');
}

/**
 * Writes whole records, existing and new, in multi-row statements: an INSERT where a row that
 * meets its own id updates it (`ON CONFLICT (id) DO UPDATE SET` the columns of `properties`, and
 * only in the row's own organization) and a row with a new id is inserted. Rows are written in
 * their order, so a new record can take a unique value an existing one gave up earlier in `rows`.
 * One statement where `manager.update` would send one per row (a batch upsert's).
 */
export async function upsertRows<T extends ObjectLiteral>(
  manager: EntityManager,
  entity: EntityTarget<T>,
  rows: readonly T[],
  properties: readonly string[],
): Promise<void> {
  const metadata = manager.connection.getMetadata(entity);
  const column = (property: string) => {
    const found = metadata.findColumnWithPropertyName(property);
    if (!found) throw new Error(`${metadata.name} has no property '${property}'`);
    return quoteIdentifier(found.databaseName);
  };
  const table = quoteIdentifier(metadata.tableName);
  const set = properties.map((p) => `${column(p)} = excluded.${column(p)}`).join(', ');
  const org = column('organizationId');
  const tail = ` ON CONFLICT (${column('id')}) DO UPDATE SET ${set} WHERE ${table}.${org} = excluded.${org}`;
  await writeRows(manager, metadata.tableName, metadata.columns, rows, tail);
}

/**
 * TypeORM's PostgreSQL type for a `Date` column. A `Date` is an instant, and node-postgres writes
 * it in the process's time zone with its offset, which a cast to this type drops: in a process
 * whose zone is not the session's, every timestamp moved by the difference. The migrations store
 * timestamps as timestamptz, so the arrays are cast to that.
 */
const TYPEORM_DATE = 'timestamp without time zone';

async function writeRows(
  manager: EntityManager,
  tableName: string,
  columns: readonly ColumnMetadata[],
  rows: readonly ObjectLiteral[],
  tail: string,
): Promise<void> {
  const { driver } = manager.connection;
  const dialect = dialectOfDataSource(manager.connection);
  const into = `INSERT INTO ${quoteIdentifier(tableName)} (${columns
    .map((column) => quoteIdentifier(column.databaseName))
    .join(', ')}) `;
  if (
    dialect === 'postgres' &&
    rows.length >= UNNEST_MIN_ROWS &&
    columns.every((column) => !column.isArray)
  ) {
    // One array per column, unnested into rows: a statement of as many parameters as columns,
    // which PostgreSQL parses and binds in a fraction of the time thousands of them take. Fewer
    // rows keep their VALUES list, whose parameters cost less than arrays to write and read.
    const arrays = columns.map((column) => {
      const type = driver.normalizeType(column);
      return `$${columns.indexOf(column) + 1}::${type === TYPEORM_DATE ? 'timestamptz' : type}[]`;
    });
    const select = `SELECT * FROM unnest(${arrays.join(', ')})`;
    for (let i = 0; i < rows.length; i += UNNEST_CHUNK) {
      const chunk = rows.slice(i, i + UNNEST_CHUNK);
      const values = columns.map((column) =>
        chunk.map((row): unknown =>
          driver.preparePersistentValue(column.getEntityValue(row), column),
        ),
      );
      await manager.query(into + select + tail, values);
    }
    return;
  }
  const head = `${into}VALUES `;
  const prepare = valuePreparer(driver, columns);
  const perStatement = Math.max(1, Math.floor(STATEMENT_PARAMETERS / columns.length));
  for (let i = 0; i < rows.length; i += perStatement) {
    // Placeholders written in order as the values are bound, not named and then compiled: a
    // chunk binds thousands of values (the outbox fan-out's 200 messages, 11 columns each).
    const chunk = rows.slice(i, i + perStatement);
    const values: unknown[] = [];
    for (const row of chunk) for (let c = 0; c < columns.length; c++) values.push(prepare(row, c));
    await manager.query(head + placeholders(dialect, chunk.length, columns.length) + tail, values);
  }
}

/** `(?, ?), (?, ?)` on SQLite, `($1, $2), ($3, $4)` on PostgreSQL: `rows` tuples of `width`. */
function placeholders(dialect: DialectName, rows: number, width: number): string {
  if (dialect === 'sqlite') {
    const tuple = `(${Array.from({ length: width }, () => '?').join(', ')})`;
    return Array.from({ length: rows }, () => tuple).join(', ');
  }
  const tuples: string[] = [];
  for (let r = 0; r < rows; r++) {
    const slots = Array.from({ length: width }, (_, c) => `$${r * width + c + 1}`);
    tuples.push(`(${slots.join(', ')})`);
  }
  return tuples.join(', ');
}

/**
 * The driver's stored form of each row's value of column `c`. A batch's rows share their
 * timestamps (one `Date` for every row it writes), so each column remembers the last `Date` it
 * converted: SQLite formats a `Date` as text, a thousand times a batch otherwise. A text or
 * integer column's value is bound as it is, as the driver would.
 */
function valuePreparer(driver: Driver, columns: readonly ColumnMetadata[]) {
  const lastDate: (Date | undefined)[] = columns.map(() => undefined);
  const lastValue: unknown[] = columns.map(() => undefined);
  const asIs = columns.map(storedAsIs);
  return (row: ObjectLiteral, c: number): unknown => {
    const column = columns[c]!;
    const value: unknown = column.getEntityValue(row);
    if (asIs[c] && !(value instanceof Date)) return value;
    if (!(value instanceof Date) || column.transformer) {
      return driver.preparePersistentValue(value, column);
    }
    if (value !== lastDate[c]) {
      lastDate[c] = value;
      lastValue[c] = driver.preparePersistentValue(value, column);
    }
    return lastValue[c];
  };
}
