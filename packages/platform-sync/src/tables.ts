/**
 * The statements the mirror runs, generated from the table specs: CREATE TABLE and ALTER TABLE
 * ADD COLUMN from the contract's schemas, batched multi-row upserts and deletes, and the
 * `platform_sync_state` table that holds each collection's cursor.
 */
import { type Dialect, type MirrorDatabase, quote, type SqlExecutor } from './database';
import type { TableSpec } from './schema';

export const STATE_TABLE = 'platform_sync_state';

/** `loading`: a snapshot is being loaded; `ready`: loaded and followed; `stale`: to load again. */
export type CollectionStatus = 'loading' | 'ready' | 'stale';

export interface CollectionState {
  collection: string;
  /** `loading`: the export's cursor; `ready`: every change up to it is applied. */
  cursor: string | null;
  status: CollectionStatus;
  /** The export being loaded (`loading`). */
  export_id: string | null;
  /** Rows of that export's file already committed (`loading`). */
  loaded_rows: number;
}

export function createTableSql(dialect: Dialect, spec: TableSpec): string {
  const columns = spec.columns.map((column) =>
    column.name === 'id'
      ? `${quote('id')} ${dialect.idColumnType} PRIMARY KEY`
      : `${quote(column.name)} ${dialect.columnType(column.kind)}`,
  );
  return `CREATE TABLE IF NOT EXISTS ${quote(spec.name)} (${columns.join(', ')})`;
}

export function createStateTableSql(dialect: Dialect): string {
  return `CREATE TABLE IF NOT EXISTS ${STATE_TABLE} (collection ${dialect.idColumnType} PRIMARY KEY, cursor TEXT, status TEXT NOT NULL, export_id TEXT, loaded_rows BIGINT NOT NULL DEFAULT 0, updated_at TEXT NOT NULL)`;
}

/**
 * Creates the state table and each collection's table, and adds the columns a table lacks (a
 * field the contract gained since the table was made). Answers the collections whose table
 * gained a column: their rows predate it, so they are loaded again.
 */
export async function ensureTables(
  db: MirrorDatabase,
  specs: readonly TableSpec[],
): Promise<Map<string, string[]>> {
  const widened = new Map<string, string[]>();
  await db.transaction(async (tx) => {
    await tx.run(createStateTableSql(db.dialect));
    for (const spec of specs) {
      const existing = await db.dialect.columnsOf(tx, spec.name);
      if (existing.length === 0) {
        await tx.run(createTableSql(db.dialect, spec));
        continue;
      }
      const missing = spec.columns.filter((column) => !existing.includes(column.name));
      for (const column of missing) {
        await tx.run(
          `ALTER TABLE ${quote(spec.name)} ADD COLUMN ${quote(column.name)} ${db.dialect.columnType(column.kind)}`,
        );
      }
      if (missing.length > 0)
        widened.set(
          spec.name,
          missing.map((column) => column.name),
        );
    }
  });
  return widened;
}

/** Rows per statement: as many as the parameter limit allows, at most 1000. */
export function rowsPerStatement(dialect: Dialect, spec: TableSpec): number {
  return Math.max(1, Math.min(1000, Math.floor(dialect.maxParams / spec.columns.length)));
}

/** `INSERT … VALUES (…), (…) ON CONFLICT (id) DO UPDATE SET …` for `rows` rows. */
export function upsertSql(dialect: Dialect, spec: TableSpec, rows: number): string {
  const names = spec.columns.map((column) => quote(column.name));
  const tuples: string[] = [];
  let index = 0;
  for (let row = 0; row < rows; row += 1) {
    const slots = spec.columns.map(() => dialect.placeholder(index++));
    tuples.push(`(${slots.join(', ')})`);
  }
  const updates = names
    .filter((name) => name !== quote('id'))
    .map((name) => `${name} = excluded.${name}`);
  return `INSERT INTO ${quote(spec.name)} (${names.join(', ')}) VALUES ${tuples.join(', ')} ON CONFLICT (${quote('id')}) DO UPDATE SET ${updates.join(', ')}`;
}

/** Upserts records (as the API returns them) in multi-row statements. Ids must be distinct. */
export async function upsertRows(
  tx: SqlExecutor,
  dialect: Dialect,
  spec: TableSpec,
  records: readonly Record<string, unknown>[],
): Promise<void> {
  const perStatement = rowsPerStatement(dialect, spec);
  for (let start = 0; start < records.length; start += perStatement) {
    const chunk = records.slice(start, start + perStatement);
    const params: unknown[] = [];
    for (const record of chunk) {
      for (const column of spec.columns)
        params.push(dialect.toParam(column.kind, record[column.name]));
    }
    await tx.run(upsertSql(dialect, spec, chunk.length), params);
  }
}

export async function deleteRows(
  tx: SqlExecutor,
  dialect: Dialect,
  spec: TableSpec,
  ids: readonly string[],
): Promise<void> {
  for (let start = 0; start < ids.length; start += 1000) {
    const chunk = ids.slice(start, start + 1000);
    const slots = chunk.map((_, index) => dialect.placeholder(index));
    await tx.run(
      `DELETE FROM ${quote(spec.name)} WHERE ${quote('id')} IN (${slots.join(', ')})`,
      chunk,
    );
  }
}

export async function readStates(db: SqlExecutor): Promise<Map<string, CollectionState>> {
  const rows = await db.all<CollectionState>(
    `SELECT collection, cursor, status, export_id, loaded_rows FROM ${STATE_TABLE}`,
  );
  return new Map(
    rows.map((row) => [row.collection, { ...row, loaded_rows: Number(row.loaded_rows) }]),
  );
}

export async function writeState(
  tx: SqlExecutor,
  dialect: Dialect,
  state: CollectionState,
): Promise<void> {
  const p = (index: number) => dialect.placeholder(index);
  await tx.run(
    `INSERT INTO ${STATE_TABLE} (collection, cursor, status, export_id, loaded_rows, updated_at) VALUES (${p(0)}, ${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}) ON CONFLICT (collection) DO UPDATE SET cursor = excluded.cursor, status = excluded.status, export_id = excluded.export_id, loaded_rows = excluded.loaded_rows, updated_at = excluded.updated_at`,
    [
      state.collection,
      state.cursor,
      state.status,
      state.export_id,
      state.loaded_rows,
      new Date().toISOString(),
    ],
  );
}
