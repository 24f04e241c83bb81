import { statementsMigration } from '../database/migration';

/**
 * Trigram indexes behind `q`, so a search reads the rows that contain the substring instead of
 * every row of the organization. The searchable columns are those the contract declares
 * (frozen here: a later change to them needs a migration of its own).
 *
 * SQLite: per table, an FTS5 trigram index (`<table>_search`, contentless: the text stays in the
 * table) keyed by `<table>_search_keys`, an INTEGER PRIMARY KEY per row id. The key is ours
 * rather than the table's implicit rowid, which VACUUM may renumber. Triggers keep both in step
 * with every write, whatever issues it (API, bulk inserts, the seed, the CLI, cascades), and the
 * migration indexes the rows already there.
 *
 * PostgreSQL: pg_trgm GIN indexes on `lower(column)`, the expression the list query filters on.
 * `CREATE EXTENSION pg_trgm` needs the CREATE privilege on the database (pg_trgm is a trusted
 * extension since PostgreSQL 13), or an administrator creating it first.
 */
export const SEARCHABLE: Record<string, readonly string[]> = {
  students: ['first_name', 'last_name', 'email', 'student_number'],
  courses: ['code', 'title'],
  exams: ['title'],
  payments: ['description', 'external_reference'],
};

function sqliteUp(table: string, columns: readonly string[]): string[] {
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

function sqliteDown(table: string): string[] {
  return [
    `DROP TRIGGER ${table}_search_insert`,
    `DROP TRIGGER ${table}_search_update`,
    `DROP TRIGGER ${table}_search_delete`,
    `DROP TABLE ${table}_search`,
    `DROP TABLE ${table}_search_keys`,
  ];
}

/** One GIN index per searchable column; the list query ORs `lower(column) LIKE` over them. */
const postgresIndex = (table: string, column: string) => `idx_${table}_${column}_trgm`;

const tables = Object.entries(SEARCHABLE);

export const searchIndexMigration = statementsMigration(
  'SearchIndex1766000000000',
  (_types, dialect) =>
    dialect === 'sqlite'
      ? tables.flatMap(([t, columns]) => sqliteUp(t, columns))
      : [
          'CREATE EXTENSION IF NOT EXISTS pg_trgm',
          ...tables.flatMap(([t, columns]) =>
            columns.map(
              (c) =>
                `CREATE INDEX ${postgresIndex(t, c)} ON ${t} USING gin (lower(${c}) gin_trgm_ops)`,
            ),
          ),
        ],
  // On PostgreSQL the extension stays: other objects may use it, and dropping it needs more
  // privilege.
  (_types, dialect) =>
    dialect === 'sqlite'
      ? tables.flatMap(([t]) => sqliteDown(t))
      : tables.flatMap(([t, columns]) => columns.map((c) => `DROP INDEX ${postgresIndex(t, c)}`)),
);
