/**
 * What a collection's list needs in the database besides its table, built from its declaration
 * in the contract (`listQuery({ search, tally })`): the search index behind `q` and the list
 * totals' tallies. A migration that adds a collection calls `collectionIndexesMigration` after the
 * one that creates its table, so the searchable columns and the tallied fields are written once,
 * in the contract (test: common/list/contract-fields.spec.ts checks every collection's index and
 * tallies against it).
 *
 * Search, SQLite: per table, an FTS5 trigram index (`<table>_search`, contentless: the text stays
 * in the table) keyed by `<table>_search_keys`, an INTEGER PRIMARY KEY per row id. The key is ours
 * rather than the table's implicit rowid, which VACUUM may renumber. Triggers keep both in step
 * with every write, whatever issues it (API, bulk inserts, the seed, the CLI, cascades), and the
 * migration indexes the rows already there.
 *
 * Search, PostgreSQL: pg_trgm GIN indexes on `lower(column)`, the expression the list query
 * filters on. `CREATE EXTENSION pg_trgm` needs the CREATE privilege on the database (pg_trgm is a
 * trusted extension since PostgreSQL 13), or an administrator creating it first.
 */
import { listSpecOf } from '@platform/contract';
import {
  collectionTallyStatements,
  dropCollectionTallyStatements,
  LIST_TALLIES,
} from './list-tallies';
import { type Migration, runStatements } from './migration';
import type { DialectName } from './dialect';

/** The search index of `table` over `columns` (database column names). */
export function searchIndexStatements(
  dialect: DialectName,
  table: string,
  columns: readonly string[],
): string[] {
  if (dialect === 'postgres') {
    return columns.map(
      (c) =>
        `CREATE INDEX ${postgresIndex(table, c)} ON ${table} USING gin (lower(${c}) gin_trgm_ops)`,
    );
  }
  const fts = `${table}_search`;
  const keys = `${table}_search_keys`;
  const list = columns.join(', ');
  const values = (prefix: string) => columns.map((c) => `${prefix}${c}`).join(', ');
  const keyOf = (row: 'new' | 'old') => `(SELECT key FROM ${keys} WHERE id = ${row}.id)`;
  return [
    `CREATE TABLE ${keys} (key integer PRIMARY KEY, id varchar(32) NOT NULL UNIQUE)`,
    // Trigram (3.34+) folds case (Unicode, not only ASCII); contentless_delete (3.43+) lets a
    // contentless index delete rows. better-sqlite3 bundles its own SQLite, newer than both.
    `CREATE VIRTUAL TABLE ${fts} USING fts5(${list}, content='', contentless_delete=1, tokenize='trigram')`,
    `INSERT INTO ${keys} (id) SELECT id FROM ${table} ORDER BY rowid`,
    `INSERT INTO ${fts} (rowid, ${list}) SELECT k.key, ${values('t.')} FROM ${table} t JOIN ${keys} k ON k.id = t.id`,
    `CREATE TRIGGER ${table}_search_insert AFTER INSERT ON ${table} BEGIN
      INSERT INTO ${keys} (id) VALUES (new.id);
      INSERT INTO ${fts} (rowid, ${list}) VALUES (${keyOf('new')}, ${values('new.')});
    END`,
    // Ids never change, so an update re-indexes the row under the key it already has.
    `CREATE TRIGGER ${table}_search_update AFTER UPDATE OF ${list} ON ${table} BEGIN
      DELETE FROM ${fts} WHERE rowid = ${keyOf('old')};
      INSERT INTO ${fts} (rowid, ${list}) VALUES (${keyOf('new')}, ${values('new.')});
    END`,
    `CREATE TRIGGER ${table}_search_delete AFTER DELETE ON ${table} BEGIN
      DELETE FROM ${fts} WHERE rowid = ${keyOf('old')};
      DELETE FROM ${keys} WHERE id = old.id;
    END`,
  ];
}

/** Undoes searchIndexStatements. */
export function dropSearchIndexStatements(
  dialect: DialectName,
  table: string,
  columns: readonly string[],
): string[] {
  if (dialect === 'postgres') return columns.map((c) => `DROP INDEX ${postgresIndex(table, c)}`);
  return [
    `DROP TRIGGER ${table}_search_insert`,
    `DROP TRIGGER ${table}_search_update`,
    `DROP TRIGGER ${table}_search_delete`,
    `DROP TABLE ${table}_search`,
    `DROP TABLE ${table}_search_keys`,
  ];
}

/** One GIN index per searchable column; the list query ORs `lower(column) LIKE` over them. */
export const postgresIndex = (table: string, column: string) => `idx_${table}_${column}_trgm`;

/** What the contract's list query declares for the database: searched columns, tallied fields. */
export function collectionDeclaration(listQuery: object): {
  search: readonly string[];
  tally?: readonly string[];
} {
  const spec = listSpecOf(listQuery);
  if (!spec) throw new Error('not a list query of the contract (build it with listQuery)');
  return { search: spec.search ?? [], ...(spec.tally && { tally: spec.tally }) };
}

/**
 * A migration that gives `table` (created by an earlier migration) the search index and the list
 * tallies its contract list query declares. `name` ends with the 13-digit timestamp that orders
 * it (`pnpm gen resource` writes one). The declaration is read when the migration runs: a later
 * change to the contract's `search` or `tally` needs a migration of its own (drop with the old
 * columns, build with the new), as for any released migration.
 */
export function collectionIndexesMigration(
  name: string,
  table: string,
  listQuery: object,
): Migration {
  const statements = (dialect: DialectName) => {
    const { search, tally } = collectionDeclaration(listQuery);
    return {
      up: [
        ...(search.length
          ? [
              ...(dialect === 'postgres' ? ['CREATE EXTENSION IF NOT EXISTS pg_trgm'] : []),
              ...searchIndexStatements(dialect, table, search),
            ]
          : []),
        ...(tally ? collectionTallyStatements(dialect, [{ table, fields: tally }]) : []),
      ],
      down: [
        ...(tally
          ? [
              ...dropCollectionTallyStatements(dialect, [{ table, fields: tally }]),
              `DELETE FROM ${LIST_TALLIES} WHERE collection = '${table}'`,
            ]
          : []),
        ...(search.length ? dropSearchIndexStatements(dialect, table, search) : []),
      ],
    };
  };
  return {
    name,
    up: (db, dialect) => runStatements(db, statements(dialect).up),
    down: (db, dialect) => runStatements(db, statements(dialect).down),
  };
}
