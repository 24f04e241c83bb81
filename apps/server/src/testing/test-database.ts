/**
 * The database behind a test server: a fresh SQLite file or a fresh PostgreSQL database, each a
 * copy of a template migrated once (see below), dropped when the server closes.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { DataSource, type DataSourceOptions, type MigrationInterface } from 'typeorm';
import { loadConfig } from '../config/env';
import { dataSourceOptions } from '../database/data-source';
import { APP_SCHEMA } from '../schema';

export async function prepareDatabase(
  /** `TestServerOptions`' fields of the same names (not imported: index.ts imports this file). */
  options: { postgresAdminUrl?: string; templateRun?: string },
): Promise<{ databaseUrl: string; drop(): Promise<void> }> {
  const run = options.templateRun;
  if (run !== undefined && !/^[a-z0-9]{1,16}$/.test(run)) {
    throw new Error('templateRun must be [a-z0-9]{1,16}');
  }
  if (options.postgresAdminUrl) {
    const adminUrl = options.postgresAdminUrl;
    const name = `platform_test_${randomBytes(6).toString('hex')}`;
    if (run) {
      const template = await postgresTemplate(adminUrl, run);
      await withPostgres(adminUrl, (admin) =>
        admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`),
      );
    } else {
      await withPostgres(adminUrl, (admin) => admin.query(`CREATE DATABASE ${name}`));
      await migrate(
        dataSourceOptions(
          loadConfig({ DATABASE_URL: postgresUrl(adminUrl, name) }).database,
          APP_SCHEMA,
        ),
      );
    }
    return {
      databaseUrl: postgresUrl(adminUrl, name),
      drop: async () => {
        await withPostgres(adminUrl, (admin) =>
          admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
        );
      },
    };
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'platform-test-'));
  const file = path.join(dir, 'platform.sqlite');
  if (run) {
    copyFileSync(await sqliteTemplate(run), file);
    // A server makes its database file 0600 (it holds token hashes); the copy does the same.
    chmodSync(file, 0o600);
  } else {
    await migrate(
      dataSourceOptions(loadConfig({ DATABASE_URL: `sqlite:${file}` }).database, APP_SCHEMA),
    );
  }
  return {
    databaseUrl: `sqlite:${file}`,
    drop: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
  };
}

/*
 * Every test server used to migrate an empty database; now each is a copy of one migrated once:
 * a SQLite file copied, a PostgreSQL database made with CREATE DATABASE ... TEMPLATE. A template
 * belongs to one Jest run (`templateRun`: the server's globalSetup makes one, its teardown drops
 * the run's templates), so it never outlives the build that made it. Without a run (SDK tests,
 * benchmarks) each server's database is migrated as before: a template kept between runs could
 * hold the schema of older migrations under the same names.
 */
const SQLITE_TEMPLATE_DIR = path.join(tmpdir(), 'platform-test-templates');

/** The migrations a template holds, by name (a template lives for one run of one build). */
function migrationsKey(options: DataSourceOptions): string {
  const migrations = options.migrations ?? [];
  const list = Array.isArray(migrations) ? migrations : Object.values(migrations);
  const hash = createHash('sha256').update(options.type);
  for (const migration of list) {
    if (typeof migration !== 'function') throw new Error('Test templates need migration classes');
    hash.update(`${new (migration as new () => MigrationInterface)().name}\n`);
  }
  return hash.digest('hex').slice(0, 16);
}

/** The migrated template file for this run and migration set, made by the first who needs it. */
async function sqliteTemplate(run: string): Promise<string> {
  mkdirSync(SQLITE_TEMPLATE_DIR, { recursive: true });
  // Made under a private name and renamed into place: two workers racing both build, the
  // rename is atomic, and nobody ever copies a half-migrated file.
  const building = path.join(
    SQLITE_TEMPLATE_DIR,
    `building-${randomBytes(8).toString('hex')}.sqlite`,
  );
  const config = loadConfig({ DATABASE_URL: `sqlite:${building}` }).database;
  const options = dataSourceOptions(config, APP_SCHEMA);
  const template = path.join(SQLITE_TEMPLATE_DIR, `${run}-${migrationsKey(options)}.sqlite`);
  try {
    if (!existsSync(template)) {
      await migrate(options, (dataSource) =>
        // One self-contained file to copy: no -wal beside it (the server turns WAL back on).
        dataSource.query('PRAGMA journal_mode = DELETE'),
      );
      renameSync(building, template);
    }
  } finally {
    for (const suffix of ['', '-wal', '-shm', '-journal'])
      rmSync(building + suffix, { force: true });
  }
  return template;
}

/** The migrated template database for this run and migration set, made by the first who needs it. */
async function postgresTemplate(adminUrl: string, run: string): Promise<string> {
  const options = dataSourceOptions(
    loadConfig({ DATABASE_URL: postgresUrl(adminUrl, 'x') }).database,
    APP_SCHEMA,
  );
  const name = `platform_tpl_${run}_${migrationsKey(options)}`;
  await withPostgres(adminUrl, async (admin) => {
    // Workers starting together: one builds, the others wait for it, then find it made.
    await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK]);
    try {
      const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (found.rowCount) return;
      const building = `${name}_building`;
      await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${building}`);
      await migrate(
        dataSourceOptions(
          loadConfig({ DATABASE_URL: postgresUrl(adminUrl, building) }).database,
          APP_SCHEMA,
        ),
      );
      await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
    } finally {
      await admin.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK]);
    }
  });
  return name;
}

/** An arbitrary advisory lock number, taken only while a template is looked for or built. */
const TEMPLATE_LOCK = 7_316_001;

/** Removes the templates of one Jest run (see `templateRun`); for the server's globalTeardown. */
export async function dropTestTemplates(run: string, postgresAdminUrl?: string): Promise<void> {
  if (existsSync(SQLITE_TEMPLATE_DIR)) {
    for (const file of readdirSync(SQLITE_TEMPLATE_DIR)) {
      if (file.startsWith(`${run}-`)) rmSync(path.join(SQLITE_TEMPLATE_DIR, file), { force: true });
    }
  }
  if (!postgresAdminUrl) return;
  await withPostgres(postgresAdminUrl, async (admin) => {
    const { rows } = await admin.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname LIKE 'platform\\_tpl\\_' || $1 || '\\_%'",
      [run],
    );
    for (const { datname } of rows)
      await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
  });
}

async function withPostgres<T>(url: string, use: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

function postgresUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

async function migrate(
  options: DataSourceOptions,
  beforeClose?: (dataSource: DataSource) => Promise<unknown>,
): Promise<void> {
  const dataSource = new DataSource(options);
  await dataSource.initialize();
  try {
    await dataSource.runMigrations({ transaction: 'each' });
    await beforeClose?.(dataSource);
  } finally {
    await dataSource.destroy();
  }
}
