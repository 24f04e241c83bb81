import { closeSync, fchmodSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import type { DataSourceOptions } from 'typeorm';
import {
  SEARCH_DEADLINE_FUNCTION,
  SEARCH_FOLD_FUNCTION,
  searchDeadline,
  searchFold,
} from './search-functions';
import type { DatabaseConfig } from '../config/env';
import { migrationClasses } from './migration';
import { composeSchema, type ModuleSchema } from './module-schema';
import { SQLITE_STATEMENT_CACHE } from './dialect';

/** The part of better-sqlite3's Database that `prepareDatabase` uses. */
interface SqliteConnection {
  pragma(source: string): unknown;
  function(
    name: string,
    options: { deterministic: boolean },
    fn: (...args: never[]) => unknown,
  ): unknown;
}

/**
 * One definition for the app, the CLI and the tests. The schema comes from migrations only: the
 * modules' own (`schema`, composed at the app level), in timestamp order.
 */
export function dataSourceOptions(
  db: DatabaseConfig,
  schema: readonly ModuleSchema[],
): DataSourceOptions {
  const dialect = db.type;
  const { entities, migrations } = composeSchema(dialect, schema);
  const common = {
    entities,
    migrations: migrationClasses(dialect, migrations),
    synchronize: false,
    migrationsRun: false,
    migrationsTableName: 'migrations',
    logging: false,
  } as const;
  switch (db.type) {
    case 'sqlite':
      createPrivateFile(db.path);
      return {
        ...common,
        type: 'better-sqlite3',
        database: db.path,
        enableWAL: true,
        statementCacheSize: SQLITE_STATEMENT_CACHE,
        prepareDatabase: (connection: SqliteConnection) => {
          // NORMAL is durable across application crashes in WAL mode; only an OS crash can
          // lose the last transactions. A busy timeout lets the CLI and server share the file.
          connection.pragma('synchronous = NORMAL');
          connection.pragma('busy_timeout = 5000');
          // Negative: a size in KiB rather than a number of pages.
          connection.pragma(`cache_size = -${db.cacheMib * 1024}`);
          // Searches call it once per candidate row (see search-budget.ts); not deterministic,
          // so SQLite cannot hoist it out of the loop.
          connection.function(SEARCH_DEADLINE_FUNCTION, { deterministic: false }, searchDeadline);
          connection.function(SEARCH_FOLD_FUNCTION, { deterministic: true }, searchFold);
        },
      };
    case 'postgres':
      return {
        ...common,
        type: 'postgres',
        url: db.url,
        extra: { max: 10 },
      };
  }
}

/**
 * A new SQLite database file is made here with mode 0600 before SQLite opens it (SQLite would
 * make it 0644 less the umask), like the webhook key file beside it: it holds every record and
 * token hash. SQLite gives its -wal and -shm files the database file's mode. An existing file
 * keeps the mode its operator gave it.
 */
function createPrivateFile(file: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw error;
  }
  try {
    // Exactly 0600 whatever the umask (which may only take bits away, or all of them).
    fchmodSync(fd, 0o600);
  } finally {
    closeSync(fd);
  }
}
