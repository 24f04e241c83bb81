import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { DataSource, type EntityTarget, type ObjectLiteral } from 'typeorm';
import { loadConfig } from '../../src/config/env';
import { dataSourceOptions } from '../../src/database/data-source';
import { insertRows } from '../../src/database/write-rows';
import { APP_SCHEMA } from '../../src/schema';

/**
 * A database of its own for a test that migrates step by step: a SQLite file in a temporary
 * directory, or (with TEST_DATABASE_URL) a new PostgreSQL database on that server.
 */
export async function emptyDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = process.env.TEST_DATABASE_URL;
  if (!admin) {
    const dir = mkdtempSync(path.join(tmpdir(), 'migration-'));
    return {
      url: `sqlite:${path.join(dir, 'db.sqlite')}`,
      drop: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
    };
  }
  const name = `platform_test_${randomBytes(6).toString('hex')}`;
  const run = async (sql: string) => {
    const c = new Client({ connectionString: admin });
    await c.connect();
    await c.query(sql);
    await c.end();
  };
  await run(`CREATE DATABASE ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/**
 * A new database (emptyDatabase) migrated up to, not including, `migration`, holding
 * `organizationIds` as organizations; `migrate()` then runs `migration` alone, checks it ran,
 * runs the ones after it, and returns a new connection. For tests of what a migration does to
 * data already there (written with `insert`, which leaves out the columns added later).
 */
export async function migratedUpTo(
  migration: string,
  organizationIds: readonly string[],
): Promise<{
  before: DataSource;
  /** insertRows into `before`, with only the columns the table has there. */
  insert<T extends ObjectLiteral>(entity: EntityTarget<T>, rows: readonly T[]): Promise<void>;
  migrate(): Promise<DataSource>;
  /** Undoes the migrations `migrate` ran, the one under test last. */
  undo(after: DataSource): Promise<void>;
  drop(): Promise<void>;
}> {
  const { url, drop } = await emptyDatabase();
  const options = dataSourceOptions(loadConfig({ DATABASE_URL: url }).database, APP_SCHEMA);
  const all = options.migrations as (new () => { name?: string })[];
  const upTo = all.findIndex((m) => new m().name === migration);
  if (upTo < 1) throw new Error(`no migration ${migration} after the first`);
  const before = new DataSource({ ...options, migrations: all.slice(0, upTo) });
  await before.initialize();
  await before.runMigrations({ transaction: 'each' });
  const now = new Date();
  const postgres = options.type === 'postgres';
  for (const id of organizationIds)
    await before.query(
      postgres
        ? 'INSERT INTO organizations (id, name, plan, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)'
        : 'INSERT INTO organizations (id, name, plan, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
      postgres
        ? [id, 'Old School', 'standard', now]
        : [id, 'Old School', 'standard', now.toISOString(), now.toISOString()],
    );
  return {
    before,
    async insert(entity, rows) {
      const table = before.getMetadata(entity).tableName;
      const columns: { name: string }[] = await before.query(
        postgres
          ? 'SELECT column_name AS name FROM information_schema.columns WHERE table_name = $1'
          : `SELECT name FROM pragma_table_info(?)`,
        [table],
      );
      const only = new Set(columns.map((c) => c.name));
      await before.transaction((manager) => insertRows(manager, entity, rows, only));
    },
    async migrate() {
      if (before.isInitialized) await before.destroy();
      const after = new DataSource({ ...options, migrations: all.slice(0, upTo + 1) });
      await after.initialize();
      const ran = await after.runMigrations({ transaction: 'each' });
      if (ran.map((m) => m.name).join() !== migration)
        throw new Error(`ran ${ran.map((m) => m.name).join()}, not ${migration}`);
      // Then the migrations after it, as an upgrade runs them: the entities read the current schema.
      await after.destroy();
      const current = new DataSource(options);
      await current.initialize();
      await current.runMigrations({ transaction: 'each' });
      return current;
    },
    async undo(after) {
      for (let i = upTo; i < all.length; i++)
        await after.undoLastMigration({ transaction: 'each' });
    },
    async drop() {
      if (before.isInitialized) await before.destroy();
      await drop();
    },
  };
}
