/**
 * What the database modules share about the two dialects, on its own so that `sql.ts`,
 * `migration.ts` and `data-source.ts` all import it without importing one another in a circle.
 */

import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';

/** The two databases the server runs on. */
export type DialectName = 'sqlite' | 'postgres';

/** Prepared statements kept per text on SQLite: TypeORM's (`statementCacheSize`) and `Sql.select`'s. */
export const SQLITE_STATEMENT_CACHE = 200;

const AS_IS_TYPES = new Set<unknown>(['varchar', 'text', 'integer', String]);

/**
 * Whether both drivers store and read this column's value as it is (a text or integer column
 * without a transformer), so the row writer binds it and the row mapper returns it unconverted.
 */
export function storedAsIs(column: ColumnMetadata): boolean {
  return !column.transformer && AS_IS_TYPES.has(column.type);
}
