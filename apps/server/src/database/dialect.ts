/**
 * What the database modules share about the two dialects, on its own so that `sql.ts`,
 * `migration.ts` and `data-source.ts` all import it without importing one another in a circle.
 */

/** The two databases the server runs on. */
export type DialectName = 'sqlite' | 'postgres';

/** Prepared statements kept per text on SQLite: TypeORM's (`statementCacheSize`) and `Sql.select`'s. */
export const SQLITE_STATEMENT_CACHE = 200;
