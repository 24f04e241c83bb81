/**
 * The customer's database, PostgreSQL or SQLite, behind one small interface: statements with
 * positional parameters, transactions, and what differs between the two (column types,
 * placeholders, how many parameters one statement may carry).
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import type { ColumnKind } from './schema';

export interface SqlExecutor {
  run(sql: string, params?: readonly unknown[]): Promise<void>;
  all<T>(sql: string, params?: readonly unknown[]): Promise<T[]>;
}

export interface Dialect {
  readonly kind: 'postgres' | 'sqlite';
  /** The most parameters one statement may carry. */
  readonly maxParams: number;
  /** The placeholder of the `index`-th parameter (0-based). */
  placeholder(index: number): string;
  /** The column type of a field. */
  columnType(kind: ColumnKind): string;
  /** The key column: ids compared in byte order, as the checksums sort them. */
  readonly idColumnType: string;
  /** A field's value as a statement parameter. */
  toParam(kind: ColumnKind, value: unknown): unknown;
  /** The columns a table has (none when it does not exist). */
  columnsOf(db: SqlExecutor, table: string): Promise<string[]>;
}

export interface MirrorDatabase extends SqlExecutor {
  readonly dialect: Dialect;
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** `"name"`: an identifier quoted for both databases. */
export function quote(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function jsonParam(value: unknown): unknown {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

function scalarParam(kind: ColumnKind, value: unknown, booleans: 'native' | 'integer'): unknown {
  if (value === undefined || value === null) return null;
  if (kind === 'json') return jsonParam(value);
  if (kind === 'boolean' && booleans === 'integer' && typeof value === 'boolean')
    return value ? 1 : 0;
  if (typeof value === 'object') return JSON.stringify(value);
  return value;
}

const POSTGRES_TYPES: Record<ColumnKind, string> = {
  text: 'TEXT',
  integer: 'BIGINT',
  real: 'DOUBLE PRECISION',
  boolean: 'BOOLEAN',
  json: 'JSONB',
};

const SQLITE_TYPES: Record<ColumnKind, string> = {
  text: 'TEXT',
  integer: 'INTEGER',
  real: 'REAL',
  boolean: 'INTEGER',
  json: 'TEXT',
};

export const postgresDialect: Dialect = {
  kind: 'postgres',
  maxParams: 65535,
  placeholder: (index) => `$${index + 1}`,
  columnType: (kind) => POSTGRES_TYPES[kind],
  idColumnType: 'TEXT COLLATE "C"',
  toParam: (kind, value) => scalarParam(kind, value, 'native'),
  async columnsOf(db, table) {
    const rows = await db.all<{ column_name: string }>(
      'SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1',
      [table],
    );
    return rows.map((row) => row.column_name);
  },
};

export const sqliteDialect: Dialect = {
  kind: 'sqlite',
  maxParams: 32766,
  placeholder: () => '?',
  columnType: (kind) => SQLITE_TYPES[kind],
  idColumnType: 'TEXT',
  toParam: (kind, value) => scalarParam(kind, value, 'integer'),
  async columnsOf(db, table) {
    const rows = await db.all<{ name: string }>(`SELECT name FROM pragma_table_info(?)`, [table]);
    return rows.map((row) => row.name);
  },
};

class PostgresDatabase implements MirrorDatabase {
  readonly dialect = postgresDialect;
  constructor(private readonly client: pg.Client) {}

  async run(sql: string, params: readonly unknown[] = []): Promise<void> {
    await this.client.query(sql, params as unknown[]);
  }

  async all<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    const result = await this.client.query(sql, params as unknown[]);
    return result.rows as T[];
  }

  async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    await this.client.query('BEGIN');
    try {
      const result = await fn(this);
      await this.client.query('COMMIT');
      return result;
    } catch (error) {
      await this.client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}

class SqliteDatabase implements MirrorDatabase {
  readonly dialect = sqliteDialect;
  readonly #statements = new Map<string, Database.Statement>();
  constructor(private readonly db: Database.Database) {}

  private statement(sql: string): Database.Statement {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      if (this.#statements.size >= 200) this.#statements.clear();
      statement = this.db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  run(sql: string, params: readonly unknown[] = []): Promise<void> {
    const statement = this.statement(sql);
    if (statement.reader) statement.all(...params);
    else statement.run(...params);
    return Promise.resolve();
  }

  all<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return Promise.resolve(this.statement(sql).all(...params) as T[]);
  }

  async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const result = await fn(this);
      this.db.exec('COMMIT');
      return result;
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw error;
    }
  }

  close(): Promise<void> {
    this.#statements.clear();
    this.db.close();
    return Promise.resolve();
  }
}

const SQLITE_PREFIX = /^sqlite:(\/\/)?/;

/** What `--database` names, without a password: for log lines. */
export function describeDatabase(url: string): string {
  if (SQLITE_PREFIX.test(url)) return `SQLite ${url.replace(SQLITE_PREFIX, '')}`;
  try {
    const parsed = new URL(url);
    return `PostgreSQL ${parsed.hostname}${parsed.port ? `:${parsed.port}` : ''}${parsed.pathname}`;
  } catch {
    return 'PostgreSQL';
  }
}

/** Why `url` is not a database the mirror can open, or null. */
export function databaseUrlProblem(url: string): string | null {
  if (SQLITE_PREFIX.test(url))
    return url.replace(SQLITE_PREFIX, '') === ''
      ? '--database sqlite: needs a file path, e.g. sqlite:mirror.db'
      : null;
  if (/^postgres(ql)?:\/\//.test(url)) return null;
  return `--database must be postgres://user:password@host/db or sqlite:path/to/file.db, got '${url.split(':')[0]}:…'`;
}

/** `postgres://…` / `postgresql://…` or `sqlite:path` (`sqlite:///abs/path` too), opened. */
export async function openDatabase(url: string): Promise<MirrorDatabase> {
  const problem = databaseUrlProblem(url);
  if (problem !== null) throw new Error(problem);
  if (SQLITE_PREFIX.test(url)) {
    const path = url.replace(SQLITE_PREFIX, '');
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 5000');
    return new SqliteDatabase(db);
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return new PostgresDatabase(client);
}
